"""``%%everyo_profile``: profile one notebook cell and show the live dashboard.

The cell runs through ``shell.run_cell``, so it behaves exactly as without the magic: same
namespace, the last expression is displayed, tracebacks look as usual. The magic shows two
outputs, each with a display id and updated at the end: the live widget (with a one-line
``text/plain``), and the static rendering (``text/html`` table and SVG flame chart,
``text/plain`` table) that hides itself while the live widget is on screen. JupyterLab shows a
widget output whose kernel is gone as "model not found" and never falls back to that bundle's
``text/html``, so only a separate static output keeps the results visible after save, close
and reopen, in nbconvert HTML, and as a text table in a terminal IPython.
"""

from __future__ import annotations

import argparse
import ast
import shlex
import sys

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.display import display

from everyo.profiler.sampling.sampled_lines import add_file_namer
from everyo_lab.live import BUSY_HZ, DEFAULT_HZ
from everyo_lab.magic_options import (
    CellFailed,
    Parser,
    UsageProblem,
    non_negative_int,
    positive_int,
    threads_option,
)

AUTO_SAMPLE_MS = 10.0
"""The magic's sampling interval when no ``--sample`` is given: a cell that records no events
(plain Python and NumPy code) still shows where its time went. Its cost is in
docs/profiler.md ("Sampling by default in the magic")."""


def cell_place(file: str, line: int | None) -> str | None:
    """A notebook cell's line as IPython's tracebacks name it (``"Cell In[7], line 11"``; the
    cell alone for ``line=None``), or ``None`` for a file that is no cell of this session (see
    :func:`everyo.profiler.sampling.sampled_lines.add_file_namer`)."""
    from IPython import get_ipython

    shell = get_ipython()
    number = getattr(getattr(shell, "compile", None), "_filename_map", {}).get(file)
    if number is None:
        return None
    return f"Cell In[{number}]" if line is None else f"Cell In[{number}], line {line}"


add_file_namer(cell_place)


def _refresh_hz(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not value >= 2 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"takes refreshes per second, a number >= 2 (e.g. 4), got {text!r}"
        )
    return value


def _sort_key(text: str) -> str:
    from everyo.profiler.analysis.schema import SORT_KEYS

    if text not in SORT_KEYS:
        keys = ", ".join(SORT_KEYS)
        raise argparse.ArgumentTypeError(f"unknown column {text!r}; use one of {keys}")
    return text


def _group_by(text: str) -> str:
    from everyo.errors import EveryOError
    from everyo.profiler.analysis.schema import check_group_by

    try:
        check_group_by(text)
    except EveryOError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _schedule(text: str):
    """``wait,warmup,active[,repeat]`` -> ``everyo.profiler.recording.schedule(...)``."""
    from everyo.errors import EveryOError
    from everyo.profiler import schedule

    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (3, 4) or not all(p.isdigit() for p in parts):
        raise argparse.ArgumentTypeError(
            f"use wait,warmup,active[,repeat] as whole numbers, e.g. 1,1,3 — got {text!r}"
        )
    names = ("wait", "warmup", "active", "repeat")
    try:
        return schedule(**dict(zip(names, map(int, parts))))
    except EveryOError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """The option parser; names match ``everyo.profiler.Profiler``'s keyword arguments.

    The options shared with ``python -m everyo profile`` come from
    :data:`everyo.profiler.options.OPTIONS`; ``--schedule``, ``--compare``, ``--no-live`` and
    ``--refresh`` are the magic's own.
    """
    from everyo.profiler.options import add_options

    p = Parser(
        prog="%%everyo_profile",
        add_help=True,
        allow_abbrev=False,
        description="Profile this cell with everyo and show the live dashboard.",
    )
    types = {
        "count": non_negative_int,
        "positive": positive_int,
        "sort": _sort_key,
        "group_by": _group_by,
        "threads": threads_option,
    }
    add_options(p, types)
    p.add_argument(
        "--schedule",
        type=_schedule,
        default=None,
        metavar="W,U,A[,R]",
        help="record by steps: wait,warmup,active[,repeat] steps per cycle; mark each step "
        "with everyo.profiler.step() (Profiler(schedule=schedule(...)))",
    )
    p.add_argument(
        "--compare",
        default=None,
        metavar="LABEL",
        help="compare with the earlier run LABEL in everyo.profiler.runs (or an exported file): "
        "both flame charts on one time axis and a diff table with verdicts",
    )
    p.add_argument(
        "--no-sample",
        dest="no_sample",
        action="store_true",
        help=f"do not sample stacks (by default the magic samples every {AUTO_SAMPLE_MS:g} ms "
        "and keeps the samples of a cell that records no events, to show where its time went)",
    )
    p.add_argument(
        "--no-live",
        dest="live",
        action="store_false",
        help="draw once at the end instead of while the cell runs",
    )
    p.add_argument(
        "--refresh",
        type=_refresh_hz,
        default=None,
        metavar="HZ",
        help=(
            f"live refreshes per second (at least 2; default {DEFAULT_HZ:g}, or {BUSY_HZ:g}"
            " while the profiled code keeps every core busy)"
        ),
    )
    return p


def parse_options(line: str) -> argparse.Namespace:
    """Parse the magic's line; raises :class:`UsageProblem` with the reason."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise UsageProblem(str(exc)) from None
    opts = build_parser().parse_args(words)
    if opts.no_sample and opts.sample is not None:
        raise UsageProblem("--sample and --no-sample contradict each other: give one")
    if opts.group_by == "shape" and not opts.record_shapes:  # else the first draw would raise
        raise UsageProblem("--group-by shape needs shapes: drop --no-shapes")
    if opts.chrome_trace is not None:  # before the cell runs: a typo in the path costs no run
        from everyo.cli.destination import check_destination
        from everyo.errors import EveryOConfigError
        from everyo.profiler.options import flag_used

        try:
            check_destination(opts.chrome_trace, flag_used(words, "chrome_trace"))
        except EveryOConfigError as exc:
            raise UsageProblem(str(exc)) from None
    return opts


def usage_message(problem: str) -> str:
    text = build_parser().format_help()
    return f"%%everyo_profile: {problem}\n\n{text}" if problem else text


def _baseline(label):
    """The run ``--compare LABEL`` names (``None`` without the option)."""
    if label is None:
        return None
    from everyo.errors import EveryOError
    from everyo_lab.compare_runs import resolve_run

    try:
        return resolve_run(label, "--compare")
    except EveryOError as exc:
        raise UsageProblem(str(exc)) from None


def _make_profiler(opts: argparse.Namespace):
    from everyo.profiler import Profiler
    from everyo.profiler.options import profiler_kwargs

    return Profiler(**profiler_kwargs(opts), schedule=opts.schedule)


@magics_class
class EveryOMagics(Magics):
    """The everyo cell and line magics (``%load_ext everyo_lab`` registers them)."""

    @cell_magic
    def everyo_profile(self, line: str, cell: str):
        """Profile the cell with everyo and show a live dashboard; ``--help`` lists options."""
        try:
            opts = parse_options(line)
            opts.compare_run = _baseline(opts.compare)  # before the cell runs: a typo costs nothing
        except UsageProblem as problem:
            print(usage_message(str(problem)), file=sys.stdout)
            return None
        return profile_cell(self.shell, cell, opts)

    @line_magic
    def everyo_dashboard(self, line: str = ""):
        """Show the dashboard of every run in ``everyo.profiler.runs`` (with a run picker).

        Like the cell magic, it shows the live widget and a static rendering of the selected
        run that stays visible after the notebook is reopened without a kernel.
        """
        from everyo_lab.widgets.dashboard import dashboard

        board = dashboard()
        display(board.widget_bundle(), raw=True)
        display(board.static_bundle(hide_when_live=True), raw=True)
        return None

    @line_magic
    def everyo_sweep(self, line: str = ""):
        """Sweep batch sizes of MODEL with MAKE_BATCH, live; ``--help`` lists options."""
        from everyo_lab.sweep_magic import sweep_line

        return sweep_line(self.shell, line)


def profile_cell(shell, cell: str, opts: argparse.Namespace):
    """Run ``cell`` in ``shell`` under a profiler with a live dashboard; see the module doc."""
    from everyo.thread_policy import ThreadPolicy
    from everyo_lab.live import LiveRefresher
    from everyo_lab.widgets.dashboard import Dashboard

    auto_sample = opts.sample is None and not getattr(opts, "no_sample", False)
    if auto_sample:
        opts.sample = AUTO_SAMPLE_MS
    profiler = _make_profiler(opts)
    refresher = handle = static = error = None
    # Show the widget before the profiler starts: its construction is not the cell's time.
    board = Dashboard(
        None,
        top=opts.top,
        group_by=opts.group_by,
        sort_by=opts.sort,
        compare=getattr(opts, "compare_run", None),  # the comparison shows once the cell ends
    )
    handle = display(board.widget_bundle(), raw=True, display_id=True)
    static = display(_running_bundle(opts.label), raw=True, display_id=True)
    marker = _CellStart(shell)
    policy = ThreadPolicy(opts.threads).apply()  # restored when the cell ends
    try:
        profiler.start()
    except BaseException:
        policy.restore()
        raise
    run = profiler.run
    run.watch_threads(policy.policy, policy.applied)
    if auto_sample:
        run.options["sample_auto"] = True  # (the live why panels leave such samples alone)
    try:
        board.run = run
        if opts.live:
            refresher = LiveRefresher(board, run, hz=opts.refresh)
            refresher.start()
        marker.arm(profiler)  # the run's clock restarts at the cell's first statement
        result = shell.run_cell(cell, store_history=False)
        error = result.error_before_exec or result.error_in_exec
    except BaseException as exc:
        error = exc  # the run is marked failed in `finally`
        if not isinstance(exc, KeyboardInterrupt):  # Ctrl-C between the magic's own steps
            raise
    finally:
        marker.disarm()
        try:
            if refresher is not None:
                refresher.stop()
        finally:  # a second Ctrl-C while the refresher winds down must not leave it recording
            try:
                _stop(profiler, error)
                if auto_sample:
                    _keep_samples_if_no_events(run)
            finally:
                policy.restore()
    _finish(board, handle, static, run, opts)
    if error is not None:
        raise CellFailed(
            f"the profiled cell raised {type(error).__name__}; its partial profile is shown "
            f"above and kept as everyo.profiler.runs[{run.label!r}]"
        )
    return None


def _keep_samples_if_no_events(run) -> None:
    """Samples the user did not ask for stay only where the cell recorded no events: there
    they are all it shows; beside events, the run reads as one profiled without them."""
    if run.num_events:
        run.samples = None
        run.options["sample_ms"] = None
    run.options.pop("sample_auto", None)


def _running_bundle(label) -> dict:
    """The static output while the cell runs (replaced by the final rendering at the end)."""
    from everyo_lab.widgets.dashboard import HIDE_WHEN_LIVE

    text = f"everyo: profiling {label or 'this cell'}…"
    return {
        "text/plain": text,
        "text/html": f'{HIDE_WHEN_LIVE}<div class="everyo-static">{text}</div>',
    }


_armed_run = None


def _cell_started() -> None:
    """Called by the first statement of a profiled cell: restart the run's clock there, so the
    wall time (and every share) counts the cell's code only, not the magic's set-up."""
    global _armed_run
    profiler, _armed_run = _armed_run, None
    if profiler is not None:
        profiler.restart_clock()


class _CellStart(ast.NodeTransformer):
    """An IPython AST transformer that puts a ``_cell_started()`` call before the cell's first
    statement (after ``from __future__`` imports, which must come first)."""

    _CALL = "__import__('everyo_lab.magic', fromlist=['_'])._cell_started()"

    def __init__(self, shell):
        self.shell = shell

    def arm(self, profiler) -> None:
        global _armed_run
        _armed_run = profiler
        self.shell.ast_transformers.append(self)

    def disarm(self) -> None:
        global _armed_run
        _armed_run = None
        if self in self.shell.ast_transformers:
            self.shell.ast_transformers.remove(self)

    def visit_Module(self, node: ast.Module) -> ast.Module:
        # after the last `from __future__` import (with any docstring before it), else first
        at = 0
        for i, stmt in enumerate(node.body):
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                at = i + 1
        node.body.insert(at, ast.parse(self._CALL).body[0])
        return ast.fix_missing_locations(node)


def _stop(profiler, error) -> None:
    """Stop the profiler; a failed cell marks the run failed (with the error's name)."""
    if error is None:
        profiler.stop()
    else:
        profiler.stop(error=error)


def _finish(board, handle, static, run, opts) -> None:
    """Final refresh, both outputs updated to the final run, and the optional export."""
    if board is not None:
        board.refresh()
        if handle is not None:
            handle.update(board.widget_bundle(), raw=True)
        if static is not None:
            static.update(board.static_bundle(hide_when_live=True), raw=True)
    if opts.chrome_trace:
        from everyo_lab.widgets.export import export_chrome_trace

        path = export_chrome_trace(run, opts.chrome_trace)
        print(f"everyo: wrote Chrome trace {path}")
