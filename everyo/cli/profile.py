"""``python -m everyo profile SCRIPT.py [args] [options]``: profile a script, print the table.

Options may come before the script or after it (mixed with the script's own arguments); an
argument after ``--`` always goes to the script. The script runs as ``__main__`` with
``sys.argv`` set to its own arguments. If it raises, the summary is still printed and the exit
code is 1 (130 for KeyboardInterrupt, 143 for SIGTERM; a ``sys.exit(n)`` keeps ``n``).

SIGTERM (what ``timeout``, CI and job schedulers send) ends the script as Ctrl-C does: the
summary is printed and the trace written. A SIGTERM while the profile ends (the summary, the
exports) is put off until they are done, then the exit code is 143; a second one ends at once
(exit 143, the trace not written, no temporary file left).

A child process the script forks runs the script's code only: when it ends, it exits without
the profiler's summary and exports, which are the parent's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import signal
import sys
import threading
import traceback

from everyo.cli.destination import check_destination
from everyo.errors import EveryOConfigError, EveryOExportError

# options only the CLI has; the rest are everyo.profiler.options.OPTIONS, shared with the magic
CLI_OPTIONS = {"--json": True}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from everyo.profiler.options import add_options

    # (optional for argparse: after a bare --sample it takes the script; run() says if missing)
    parser.add_argument("script", nargs="?", help="the Python script to run under the profiler")
    parser.add_argument(
        "script_args",
        nargs=argparse.REMAINDER,
        help="arguments for the script (profile options are picked out)",
    )
    add_options(parser, types={"count": int, "positive": int, "sample": _sample_or_script})
    parser.add_argument("--json", metavar="PATH", help="write the raw events as JSON")


def split_script_args(args: argparse.Namespace) -> list[str]:
    """Move profile options found after the script into ``args``; return the script's argv."""
    from everyo.profiler.options import option_for

    rest, script_args = list(args.script_args), []
    while rest:
        token = rest.pop(0)
        if token == "--":
            script_args += rest
            break
        name, eq, value = token.partition("=")
        opt = option_for(name)
        if opt is None and name not in CLI_OPTIONS:
            script_args.append(token)
            continue
        dest = opt.dest if opt else name[2:].replace("-", "_")
        if opt is not None and opt.kind in ("flag", "no"):
            setattr(args, dest, opt.kind == "flag")
            continue
        if opt is not None and opt.kind == "sample" and not eq:  # its value is optional
            value = rest.pop(0) if rest and _is_number(rest[0]) else None
            setattr(args, dest, True if value is None else _typed(name, opt.kind, value))
            continue
        if opt is not None and opt.kind in ("sample", "sample_mode"):
            if not eq:
                if not rest:
                    raise EveryOConfigError(f"{name} needs a value")
                value = rest.pop(0)
            setattr(args, dest, _typed(name, opt.kind, value))
            continue
        if not eq:
            if not rest:
                raise EveryOConfigError(f"{name} needs a value")
            value = rest.pop(0)
        number = opt is not None and opt.kind in ("count", "positive")
        setattr(args, dest, _int(name, value) if number else value)
    return script_args


def _sample_or_script(text: str):
    """``--sample``'s value, or the word after a bare ``--sample`` when it is not a number
    (the script: ``profile --sample train.py`` means 1 ms; see :func:`_script_after_sample`)."""
    from everyo.profiler.options import sample_interval

    return sample_interval(text) if _is_number(text) else text


def _script_after_sample(args: argparse.Namespace) -> None:
    """``profile --sample train.py 3``: argparse gave ``train.py`` to ``--sample`` and ``3``
    to the script; put them back (the script, its arguments, and sampling at 1 ms)."""
    if isinstance(args.sample, str):
        if args.script is not None:
            args.script_args = [args.script, *args.script_args]
        args.script, args.sample = args.sample, True
    if args.script is None:
        raise EveryOConfigError("give the script to run: python -m everyo profile SCRIPT.py")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _typed(name: str, kind: str, value: str):
    """An option value parsed as the magic parses it; a bad one is an EveryOConfigError."""
    from everyo.profiler.options import sample_interval, sample_mode

    try:
        return (sample_interval if kind == "sample" else sample_mode)(value)
    except argparse.ArgumentTypeError as exc:
        raise EveryOConfigError(str(exc)) from None


def _int(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise EveryOConfigError(f"{name} takes a whole number, got {value!r}") from None


def _check(args) -> None:
    from everyo.profiler.analysis.schema import check_group_by, check_sort_by

    if not os.path.isfile(args.script):
        raise EveryOConfigError(f"no such script: {args.script}")
    check_group_by(args.group_by, "--group-by")
    check_sort_by(args.sort, "--sort")
    if args.warmup < 0:
        raise EveryOConfigError("--warmup takes a whole number >= 0")
    if isinstance(args.threads, str):
        from everyo.thread_policy import parse_threads

        args.threads = parse_threads(args.threads)  # EveryOConfigError names the values
    if args.top is not None and args.top < 1:
        raise EveryOConfigError("--top takes a whole number >= 1")
    for option, path in (("--chrome-trace", args.chrome_trace), ("--json", args.json)):
        if path is not None:  # before the script runs, so a typo costs no run
            check_destination(path, option)


class Terminated(BaseException):
    """SIGTERM arrived while the script ran: it unwinds the script like ``KeyboardInterrupt``
    (a ``BaseException``, so the script's ``except Exception`` does not swallow it)."""


class _Sigterm:
    """SIGTERM, while the script runs, raises :class:`Terminated` in the main thread instead of
    killing the process at once; while the profile ends (stop, summary, exports) it is put off:
    the ending finishes, the trace is written, and the exit code is 143 (a second SIGTERM then
    ends the ending too, its temporary file removed). A SIGTERM ignored or handled by whoever
    started us is left as it is."""

    def __init__(self):
        main = threading.current_thread() is threading.main_thread()
        self.previous = signal.getsignal(signal.SIGTERM) if main else None
        self.active = self.previous is signal.SIG_DFL
        self.put_off = False

    def _unwind(self, _signum, _frame):
        raise Terminated()

    def _put_off(self, _signum, _frame):
        if self.put_off:
            raise Terminated()
        self.put_off = True
        print(
            "everyo profile: SIGTERM: ending once the summary and trace are written "
            "(send it again to end at once)",
            file=sys.stderr,
        )

    @contextlib.contextmanager
    def unwinding(self):
        """The script's run: SIGTERM unwinds it; at its end, SIGTERM is put off (one swap of
        the handler, so no SIGTERM finds the default between them)."""
        if self.active:
            signal.signal(signal.SIGTERM, self._unwind)
        try:
            yield
        finally:
            if self.active:
                signal.signal(signal.SIGTERM, self._put_off)

    def restore(self) -> None:
        if self.active:
            signal.signal(signal.SIGTERM, self.previous)


def _run_script(
    path: str, argv: list[str], profiler, sigterm: _Sigterm
) -> tuple[int, BaseException | None]:
    """Run ``path`` as ``__main__``; return (exit code, error to mark the run failed with)."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path] + argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        with sigterm.unwinding():
            profiler.start()
            runpy.run_path(path, run_name="__main__")
        return 0, None
    except SystemExit as exc:
        code = exc.code
        if code in (None, 0):
            return 0, None
        if not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
        return code, exc
    except KeyboardInterrupt as exc:
        traceback.print_exc()
        return 130, exc
    except Terminated as exc:
        print("everyo profile: terminated by SIGTERM", file=sys.stderr)
        return 128 + signal.SIGTERM, exc
    except BaseException as exc:  # noqa: BLE001 - the script's error is reported, then summarised
        traceback.print_exc()
        return 1, exc
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def _print_hot_lines(profiler) -> None:
    """The hot lines of the table's top rows (by total time) that hold samples."""
    text = top_rows_text(profiler.run)
    if text:  # (a run without events: the summary showed its samples)
        print("\n" + text)


def run(args: argparse.Namespace) -> int:
    from everyo.profiler import Profiler
    from everyo.profiler.options import profiler_kwargs

    _script_after_sample(args)
    script_argv = split_script_args(args)
    _check(args)
    args.label = args.label or os.path.basename(args.script)
    profiler = Profiler(**profiler_kwargs(args))
    parent, sigterm = os.getpid(), _Sigterm()
    try:
        code = _run_and_end(args, script_argv, profiler, sigterm, parent)
    except Terminated:  # a second SIGTERM while it ended
        print("everyo profile: terminated by SIGTERM while ending", file=sys.stderr)
        return 128 + signal.SIGTERM
    finally:
        sigterm.restore()
    if sigterm.put_off:
        return 128 + signal.SIGTERM
    return code


def _run_and_end(args, script_argv, profiler, sigterm: _Sigterm, parent: int) -> int:
    from everyo.thread_policy import ThreadPolicy

    with ThreadPolicy(args.threads) as policy:
        code, error = _run_script(args.script, script_argv, profiler, sigterm)
        if os.getpid() != parent:  # a child the script forked ended: the ending is the parent's
            return code
        if profiler.run is not None:
            profiler.run.watch_threads(policy.policy, policy.applied)
        run = profiler.stop(error)
    sys.stdout.flush()
    status = run.status if run.error is None else f"{run.status}: {run.error}"
    print(
        f"\neveryo profile {args.script}: {status}, {run.num_events:,} events, "
        f"wall {run.wall_ns / 1e6:.3f} ms"
    )
    print(profiler.summary(group_by=args.group_by, sort_by=args.sort, top=args.top))
    if run.samples is not None:
        _print_hot_lines(profiler)
    for path, export in (
        (args.chrome_trace, profiler.export_chrome_trace),
        (args.json, profiler.export_json),
    ):
        if not path:
            continue
        try:
            print(f"wrote {export(path)}")
        except EveryOExportError as exc:  # the script's own exit code stays the news
            print(f"error: {exc}", file=sys.stderr)
            code = code or 2
    return code


def top_rows_text(run, rows: int = 3, lines: int = 5) -> str:
    """The hot lines of the summary's first ``rows`` rows (by total time) that hold samples:
    what ``python -m everyo profile --sample`` prints after the table; a line saying so when
    no sample fell inside an event, nothing for a run without events."""
    from everyo.profiler.analysis.run_analysis import summarize
    from everyo.profiler.sampling.sampled_lines import hot_lines
    from everyo.profiler.sampling.sampled_lines_text import render

    table = summarize(run, top=rows)
    if not table:
        return ""  # the summary shows the sampled run itself (outside_text)
    parts = []
    for row in table:
        hot = hot_lines(run, row["name"], top=lines)
        if hot.samples:
            parts.append(render(hot, lines=lines, tree=False))
    return "\n\n".join(parts) or "no stack samples fell inside the recorded events"
