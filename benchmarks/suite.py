"""What every part of the benchmark suite (``run.py``) shares: interleaved timing, a section of
results with its targets, the environment record, and the markdown they become.

Each part of the suite is a module of this folder with a ``section(quick: bool) -> Section``
function (and a ``__main__`` that prints that section alone); ``run.py`` runs them and rewrites
``RESULTS.md``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import importlib
import os
import platform
import statistics
import time
import timeit
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Section:
    """One block of RESULTS.md: a table, what it measured and how, and each target's verdict."""

    name: str
    title: str
    intro: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def row(self, *cells) -> None:
        self.rows.append([str(c) for c in cells])

    def markdown(self, stamp: str) -> str:
        lines = [f"### {self.title}", "", self.intro, "", f"_{stamp}_", ""]
        lines.append("| " + " | ".join(self.header) + " |")
        lines.append("| " + " | ".join("---" for _ in self.header) + " |")
        lines += ["| " + " | ".join(r) + " |" for r in self.rows]
        if self.notes:
            lines.append("")
            lines += [f"- {n}" for n in self.notes]
        return "\n".join(lines)


def script_main(section, doc: str, argv=None) -> None:
    """``python benchmarks/<part>.py [--quick]``: print the part's table (the suite saves it)."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    print(section(ap.parse_args(argv).quick).markdown("printed, not saved"))


def verdict(value: float, limit: float, *, at_most: bool = True) -> str:
    """``met`` or ``missed`` for a figure against its target (``at_most``: value <= limit)."""
    ok = value <= limit if at_most else value >= limit
    return "met" if ok else "**missed**"


CLOCK = time.thread_time
"""The suite's clock: CPU time of the measuring thread. Everything measured runs on that one
thread (BLAS and torch are pinned to one thread), and on a shared machine wall time also counts
the time other processes hold the core, which swamps the differences measured here."""


def interleaved(fns: dict, repeats: int, number: int, warmup: int = 1) -> dict[str, list[float]]:
    """CPU seconds per call of each callable, one list entry per repeat; within a repeat the
    callables run back to back (``number`` calls each), so machine noise hits all alike."""
    for _ in range(warmup):
        for fn in fns.values():
            for _ in range(number):
                fn()
    out: dict[str, list[float]] = {k: [] for k in fns}
    pc = CLOCK
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = pc()
            for _ in range(number):
                fn()
            out[name].append((pc() - t0) / number)
    return out


def interleaved_stmts(stmts: dict, ns: dict, repeats: int, number: int) -> dict[str, list[float]]:
    """Like :func:`interleaved` for statements (``timeit`` compiles them into its loop, so no
    Python call wraps the measured expression: what a NumPy one-liner costs is not diluted)."""
    timers = {k: timeit.Timer(s, timer=CLOCK, globals=ns) for k, s in stmts.items()}
    for t in timers.values():
        t.timeit(max(1, number // 10))
    out: dict[str, list[float]] = {k: [] for k in stmts}
    for _ in range(repeats):
        for k, t in timers.items():
            out[k].append(t.timeit(number) / number)
    return out


def median(xs) -> float:
    return float(statistics.median(xs))


def paired_ratio(a: list[float], b: list[float]) -> float:
    """Median of the per-repeat ratios ``a / b`` (both measured in the same repeat)."""
    return median([x / y for x, y in zip(a, b)])


def spread(a: list[float], b: list[float]) -> str:
    """The inter-quartile range of the per-repeat ratios, as ``lo–hi``: how noisy a ratio was."""
    r = sorted(x / y for x, y in zip(a, b))
    if len(r) < 4:
        return f"{r[0]:.2f}–{r[-1]:.2f}"
    q = np.percentile(r, [25, 75])
    return f"{q[0]:.2f}–{q[1]:.2f}"


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.2f}"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


@contextlib.contextmanager
def one_thread():
    """BLAS and PyTorch on one thread each (the per-op and step comparisons use the same
    threads on every side; on a shared 2-core machine a second thread adds only contention)."""
    limiter = None
    try:
        from threadpoolctl import threadpool_limits

        limiter = threadpool_limits(1)
    except ImportError:
        pass
    torch = optional("torch")
    prev = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if torch is not None:
            torch.set_num_threads(prev)
        if limiter is not None:
            limiter.unregister()


def optional(name: str):
    """A peer package, or None when it is not installed (the suite then skips it with a note)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def peer_versions() -> dict[str, str | None]:
    out = {}
    for name in ("torch", "viztracer", "pyinstrument", "scalene"):
        mod = optional(name)
        out[name] = getattr(mod, "__version__", "installed") if mod is not None else None
    return out


def recorder_implementation() -> str:
    """Which recorder the profiler's module-call path uses (``"c"`` or ``"python"``)."""
    try:
        from everyo.profiler.recording import recorder
    except ImportError:
        return "python (no everyo.profiler.recording.recorder module)"
    return getattr(recorder, "IMPLEMENTATION", "python (recorder.IMPLEMENTATION not defined)")


def rss_bytes() -> int:
    """Resident set size of this process (Linux ``/proc``; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def environment_markdown(only: list[str] | None) -> str:
    """The environment record of this run, as a short list."""
    from everyo.environment_record import environment

    env = environment()
    blas = (env.get("numpy") or {}).get("blas") or {}
    cpu = env.get("cpu") or {}
    peers = peer_versions()
    try:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "unknown"
    git = env.get("git") or {}
    lines = [
        f"- date: {_dt.datetime.now(_dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
        f"git {str(git.get('commit') or 'unknown')[:10]}"
        + (f"; sections regenerated: {', '.join(only)}" if only else "; all sections"),
        f"- machine: {cpu.get('model', platform.processor())}, {cpu.get('logical_cores')} "
        f"logical cores, load average {load} (1, 5, 15 min) at the start",
        f"- Python {platform.python_version()}, NumPy {np.__version__} with "
        f"{blas.get('library', 'unknown BLAS')} {blas.get('version', '')}",
        f"- everyo {env.get('everyo', {}).get('version')}; profiler recorder: "
        f"**{recorder_implementation()}**",
        "- peers: "
        + ", ".join(f"{k} {v}" if v else f"{k} not installed (skipped)" for k, v in peers.items()),
        f"- reference: an empty Python function call costs {empty_call_ns():.0f} ns here "
        f"(about 25–35 ns on an idle modern CPU): absolute times scale with it, ratios carry over",
    ]
    return "\n".join(lines)


def empty_call_ns() -> float:
    def f():
        pass

    return min(timeit.repeat(f, number=100_000, repeat=5)) / 100_000 * 1e9
