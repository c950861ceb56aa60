"""Support for the teaching labs in ``examples/``: lab size, self-checks, the results file.

A lab notebook starts with::

    from everyo_lab.labs import start_lab
    lab = start_lab("03_vectorisation", "Reach a 10x speed-up by vectorising a row loop")

and then uses ``lab.pick(small=..., full=...)`` for its sizes, ``lab.check(condition, hint)``
after each exercise and ``lab.record(...)`` in its last cell.

- The size comes from one setting, the ``EVERYO_LAB_SIZE`` environment variable: ``full``
  (the default, for class) or ``small`` (what CI runs).
- A check that passes prints one line. One that does not raises :class:`LabCheckError`, which
  IPython shows as a single "Not yet" line (no traceback): *Run All* stops at the first
  exercise still to do, and an instructor runs a student's notebook to grade it.
- ``EVERYO_LAB_CHECKS`` says what an unmet check does: ``stop`` (the default, as above) or
  ``report``, which prints the same "Not yet" line and goes on, so the whole notebook runs
  (CI runs the student notebooks so, and an instructor sees every exercise's state at once).
- Each check is one exercise, keyed by where it is called (the notebook cell, or the file and
  line outside Jupyter), not by how many checks ran: rerunning a check cell replaces that
  check's earlier result and keeps its number.
- ``record`` writes ``results/<lab>.json`` next to the notebook: the figures, exactly one entry
  per check (its latest result), and the environment record of ``everyo.bench.environment()``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from everyo.errors import EveryOConfigError

__all__ = [
    "Lab",
    "LabCheckError",
    "interleaved",
    "lab_size",
    "start_lab",
    "CHECK_MODES",
    "CHECKS_VARIABLE",
    "SIZES",
    "SIZE_VARIABLE",
    "check_mode",
]

SIZE_VARIABLE = "EVERYO_LAB_SIZE"
SIZES = ("small", "full")
CHECKS_VARIABLE = "EVERYO_LAB_CHECKS"
CHECK_MODES = ("stop", "report")


class LabCheckError(AssertionError):
    """A lab's self-check is not met yet; the message says what to change.

    IPython shows it as one red line, without a traceback: the frames say nothing a student
    needs, the message says what to change.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31m\u2717 {self}\x1b[0m"]


def lab_size() -> str:
    """``EVERYO_LAB_SIZE``: ``"full"`` (default) or ``"small"``."""
    value = os.environ.get(SIZE_VARIABLE, "full").strip().lower() or "full"
    if value not in SIZES:
        raise EveryOConfigError(
            f"{SIZE_VARIABLE}={value!r} is not a lab size; use 'small' (quick, as CI runs the "
            f"labs) or 'full' (the class size), or unset it for 'full'"
        )
    return value


def check_mode() -> str:
    """``EVERYO_LAB_CHECKS``: ``"stop"`` (default: an unmet check raises) or ``"report"`` (it
    prints its "Not yet" line and the notebook goes on)."""
    value = os.environ.get(CHECKS_VARIABLE, "stop").strip().lower() or "stop"
    if value not in CHECK_MODES:
        raise EveryOConfigError(
            f"{CHECKS_VARIABLE}={value!r} is not a check mode; use 'stop' (Run All stops at the "
            f"first unmet check) or 'report' (unmet checks print a line and the notebook goes "
            f"on), or unset it for 'stop'"
        )
    return value


def _cell_id() -> tuple[str | None, str | None]:
    """The Jupyter cell being run and the execution request running it, where the front end
    says (JupyterLab and Notebook 7 send a ``cellId``); ``(None, None)`` elsewhere."""
    ipython = sys.modules.get("IPython")  # never imported here: a lab outside Jupyter has none
    shell = ipython.get_ipython() if ipython is not None else None
    header = getattr(shell, "parent_header", None) or {}
    cell = (header.get("metadata") or {}).get("cellId")
    return cell, (header.get("header") or {}).get("msg_id")


def _call_site(depth: int) -> tuple:
    """The file and line of the call ``depth`` frames up: a check's key where the front end does
    not name cells (IPython names a cell's code by a hash of its text, so an unchanged cell run
    again keeps its key; nbclient, which runs each cell once, needs no more)."""
    frame = sys._getframe(depth + 1)
    return frame.f_code.co_filename, frame.f_lineno


class Lab:
    """One lab's state: its name, size, each check's latest result and when it started."""

    def __init__(
        self, name: str, goal: str, size: str | None = None, checks: str | None = None
    ) -> None:
        self.name = name
        self.goal = goal
        self.size = lab_size() if size is None else size
        if self.size not in SIZES:
            raise EveryOConfigError(f"size must be one of {SIZES}, got {self.size!r}")
        self.checks = check_mode() if checks is None else checks
        if self.checks not in CHECK_MODES:
            raise EveryOConfigError(f"checks must be one of {CHECK_MODES}, got {self.checks!r}")
        self.results: dict[tuple, tuple[bool, str]] = {}  # check key -> (met, text), in order
        self._cell: tuple[str | None, str | None, int] = (None, None, 0)
        self.started = time.time()

    @property
    def passed(self) -> list[str]:
        """The checks whose latest run was met, in check order."""
        return [text for met, text in self.results.values() if met]

    @property
    def not_yet(self) -> list[str]:
        """The checks whose latest run was not met, in check order."""
        return [text for met, text in self.results.values() if not met]

    def _key(self) -> tuple:
        cell, request = _cell_id()
        if cell is None:
            return _call_site(2)
        last_cell, last_request, count = self._cell
        count = count + 1 if (cell, request) == (last_cell, last_request) else 1
        self._cell = (cell, request, count)
        return ("cell", cell, count)

    def pick(self, *, small: Any, full: Any) -> Any:
        """The value for this lab size: ``small`` in CI, ``full`` in class."""
        return small if self.size == "small" else full

    def check(
        self, condition: Any, hint: str, *, passed: str | None = None, measured: Any = None
    ) -> None:
        """A self-check: print ``passed`` (or the hint) when ``condition`` holds, else raise
        :class:`LabCheckError` with ``hint``, which should say what to change. In the
        ``report`` check mode an unmet check prints that message as one line and returns.

        ``measured``: the comparison the check judges (``interleaved()``'s result, say). When
        the machine made it inconclusive, both messages say so and ask for a rerun: a student
        must not read a busy machine's figure as the lesson."""
        __tracebackhide__ = True  # pytest and IPython: the check's frame is not the story
        if measured is not None and not getattr(measured, "conclusive", True):
            note = measured.machine_note
            passed = f"{passed or hint}; but {note}: rerun to confirm"
            hint = f"{hint}; and rerun this cell: {note}"
        key = self._key()
        keys = list(self.results)
        number = keys.index(key) + 1 if key in self.results else len(keys) + 1
        met = bool(condition)
        self.results[key] = (met, (passed or hint) if met else hint)
        if not met:
            message = f"Not yet (check {number} of {self.name}): {hint}"
            if self.checks == "stop":
                raise LabCheckError(message)
            print(f"\u2717 {message}")
            return
        print(f"\u2713 check {number} passed: {passed or hint}")

    def inconclusive(self, why: str, rerun: str = "rerun this cell") -> None:
        """A check this run's measurements cannot judge (the machine left nothing to trust):
        print that it is inconclusive and what to rerun, with no traceback in any check mode;
        it counts as not met until a rerun judges it."""
        key = self._key()
        keys = list(self.results)
        number = keys.index(key) + 1 if key in self.results else len(keys) + 1
        text = f"inconclusive: {why}: {rerun}"
        self.results[key] = (False, text)
        print(f"? check {number} {text}")

    def record(self, folder: str | os.PathLike = "results", **figures: Any) -> Path:
        """Write ``folder/<lab>.json``: the figures given, the checks passed, the size, the
        time the lab took and the environment record; returns the path."""
        from everyo.bench import environment
        from everyo.bench.result import write_json

        data = {
            "format": "everyo.lab-result",
            "lab": self.name,
            "goal": self.goal,
            "size": self.size,
            "checks_passed": self.passed,
            "checks_not_yet": self.not_yet,
            "checks": [
                {"check": i, "met": met, "text": text}
                for i, (met, text) in enumerate(self.results.values(), 1)
            ],
            "results": figures,
            "elapsed_s": round(time.time() - self.started, 3),
            "environment": environment(),
        }
        path = write_json(data, Path(folder) / f"{self.name}.json")
        not_yet = f", {len(self.not_yet)} not yet" if self.not_yet else ""
        print(f"wrote {path}: {len(self.passed)} checks passed{not_yet}")
        return path

    def __repr__(self) -> str:
        return f"Lab({self.name!r}, size={self.size!r}, checks passed={len(self.passed)}" + (
            f", not yet={len(self.not_yet)})" if self.not_yet else ")"
        )


def interleaved(
    before,
    after,
    *args,
    warmup: int = 1,
    repeat: int = 10,
    clock=None,
    threads="auto",
    margin: float | None = None,
    **kwargs,
):
    """Time ``before(*args, **kwargs)`` and ``after(*args, **kwargs)`` in turns and compare them.

    Alternating the calls exposes both versions to the same machine conditions, so a busy
    neighbour slows both rather than one: on a shared machine the ratio is far steadier than
    two benchmarks run one after the other. The order alternates too (before-after, then
    after-before), so that whatever the first call of a pair leaves behind (warm caches, a
    pending collection) favours neither. Returns :func:`everyo.bench.compare`'s result
    (``speedup`` with its confidence interval, ``verdict``) for the medians of ``repeat`` calls
    each, after ``warmup`` untimed calls each; its verdict is "inconclusive: the machine was
    busy" when other processes contended for the cores while it ran. ``threads`` is the
    BLAS/OpenMP thread policy while it runs (see :mod:`everyo.thread_policy`). A speed-up
    within ``1 ± margin`` reads "no meaningful change" (default
    :data:`everyo.bench.regression.MARGIN`).

    Both versions run in this process: the interval says how this process's calls compare.
    A comparison with another process or session (a saved baseline, yesterday's figure) needs
    the spread between processes: ``benchmark(fn, processes=N)`` and ``compare()``.
    """
    from everyo.bench import BenchmarkResult, compare
    from everyo.bench.result import process_token
    from everyo.bench.timing import check_count
    from everyo.errors import EveryOBenchmarkError
    from everyo.machine_state import MachineWatch
    from everyo.thread_policy import ThreadPolicy

    for role, fn in (("before", before), ("after", after)):
        if not callable(fn):
            raise EveryOBenchmarkError(
                f"interleaved() times two callables; {role} is a {type(fn).__name__}: pass the "
                "function itself, not its result (interleaved(f, g, x), not interleaved(f(x), ...))"
            )
    warmup = check_count("warmup", warmup, minimum=0)
    repeat = check_count("repeat", repeat, minimum=2)  # (a confidence interval: two timings a side)
    clock = clock or time.perf_counter
    times: tuple[list[float], list[float]] = ([], [])
    pairs = ((before, times[0]), (after, times[1]))
    with ThreadPolicy(threads) as policy:
        for _ in range(warmup):
            before(*args, **kwargs)
            after(*args, **kwargs)
        watch = MachineWatch(threads_policy=policy.policy, threads_applied=policy.applied)
        watch.start()
        for i in range(repeat):
            for fn, out in pairs if i % 2 == 0 else pairs[::-1]:
                start = clock()
                fn(*args, **kwargs)
                out.append(clock() - start)
        machine = watch.stop().to_dict()
    name = getattr(before, "__name__", "before"), getattr(after, "__name__", "after")
    here = process_token()  # both sides in this process, in turns
    return compare(
        BenchmarkResult(
            times[0], name=name[0], warmup=warmup, repeat=repeat, machine=machine, process=here
        ),
        BenchmarkResult(
            times[1], name=name[1], warmup=warmup, repeat=repeat, machine=machine, process=here
        ),
        margin=margin,
    )


def start_lab(
    name: str,
    goal: str,
    *,
    size: str | None = None,
    checks: str | None = None,
    threads: Any = "auto",
) -> Lab:
    """Start a lab: apply its thread policy, print its goal, its size, the threads and the
    machine's state (and the check mode when it is ``report``), and return its :class:`Lab`.

    ``threads`` is the BLAS/OpenMP thread policy for the rest of the session (see
    :mod:`everyo.thread_policy`): ``"auto"`` limits the threads to the cores other processes
    leave free when they are busy (on a shared JupyterHub, the other students' kernels);
    every sweep and profile checks again when it starts.
    """
    from everyo.machine_state import current_load
    from everyo.thread_policy import ThreadPolicy

    state = current_load()
    policy = ThreadPolicy(threads, state=state).apply()  # kept for the session: not restored
    lab = Lab(name, goal, size, checks)
    lab.threads = policy
    lab.machine = state
    print(f"Lab {name}: {goal}")
    print(f"size: {lab.size} (set {SIZE_VARIABLE}=small or full before starting Jupyter)")
    print(f"threads: {policy.describe()} ({state.load_text} when the lab started)")
    if lab.checks == "report":
        print(f"checks: report ({CHECKS_VARIABLE}=report: an unmet check prints and goes on)")
    return lab
