"""The machine's own speed, timed beside a workload in each worker process: a fixed reference
(two 128x128 matrix products) that never changes, so that two runs measured apart (a saved
baseline and today's check) can tell a change of the machine from a change of the code.

A whole run of worker processes can be 9-23 % faster or slower than another on a shared VM, and
every process of the run shares it, so no interval drawn from the processes sees it
(benchmarks/RESULTS.md, issue 46). When the reference moved between the runs beyond its own
noise, :func:`widen` makes the workload's interval cover both readings: the machine's change
touched the workload as it touched the reference, or not at all.

>>> times = measure(calls=4)
>>> sorted(times), len(times["blas"])
(['blas'], 4)
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

__all__ = ["KINDS", "FLOOR", "measure", "drifts", "moved", "widen", "speed_note", "reference_of"]

KINDS = ("blas",)
"""The reference's parts, each timed apart. A loop of Python steps was one too, and was
dropped: its fastest call varied so much between identical processes (where code and objects
landed in memory) that six processes gave it 95 % intervals of +-5 % to +-50 %, and it called
the machine changed in 4 of 60 gate trials where the matrix product moved by 0-4 %
(benchmarks/RESULTS.md)."""

FLOOR = 0.02
"""A reference change smaller than this (2 %) is never called a change of the machine: runs on
a steady machine moved the matrix-product reference by 0.4 % (standard deviation of the
run-level log; benchmarks/RESULTS.md)."""

_SIZE = 128
_matrix: np.ndarray | None = None


def _blas() -> None:
    global _matrix
    if _matrix is None:
        _matrix = np.random.default_rng(0).random((_SIZE, _SIZE))
    _matrix @ _matrix
    _matrix @ _matrix


_PARTS = {"blas": _blas}


def measure(calls: int = 30, warmup: int = 3) -> dict[str, list[float]]:
    """Seconds of ``calls`` calls of each part (taking turns), after ``warmup`` untimed ones:
    about 0.18 ms a call here."""
    clock = time.perf_counter
    for _ in range(warmup):
        for part in _PARTS.values():
            part()
    out: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for _ in range(calls):
        for kind, part in _PARTS.items():
            start = clock()
            part()
            out[kind].append(clock() - start)
    return out


def drifts(
    new: dict | None, base: dict | None, *, statistic: str, confidence: float
) -> dict[str, tuple[float, float, float]]:
    """Per part, the reference's ratio new/base with its interval, by the workload's
    ``statistic`` over the processes: ``{}`` when either side has no reference."""
    from everyo.bench.stats import process_ratio_interval

    if not new or not base:
        return {}
    out = {}
    for kind in KINDS:
        a, b = new.get(kind), base.get(kind)
        if not a or not b:
            continue
        out[kind] = process_ratio_interval(a, b, statistic=statistic, confidence=confidence)
    return out


def moved(drift: tuple[float, float, float]) -> bool:
    """Whether a reference ratio says the machine changed: beyond its interval and the floor."""
    est, lo, hi = drift
    return (lo > 1 or hi < 1) and abs(math.log(est)) >= math.log1p(FLOOR)


def widen(
    lo: float, hi: float, found: dict[str, tuple[float, float, float]]
) -> tuple[float, float]:
    """The workload's interval ``[lo, hi]`` widened to cover, for each part that moved, the
    ratio the workload would have had if the machine's change had touched it alike."""
    low, high = lo, hi
    for drift in found.values():
        if moved(drift):
            _, d_lo, d_hi = drift
            low, high = min(low, lo / d_hi), max(high, hi / d_lo)
    return low, high


def speed_note(found: dict[str, tuple[float, float, float]]) -> str:
    """What the reference says of the machine between the two runs, for the printed check."""
    words = {"blas": "matrix product"}
    parts = []
    for kind, (est, lo, hi) in found.items():
        change = f"{(est - 1) * 100:+.1f}% (CI {(lo - 1) * 100:+.1f}% to {(hi - 1) * 100:+.1f}%)"
        parts.append(f"{words[kind]} {change}")
    if not any(moved(d) for d in found.values()):
        return "steady (reference " + ", ".join(parts) + ")"
    return (
        "changed between the runs (reference " + ", ".join(parts) + "): the interval covers "
        "the change with and without the machine's"
    )


def reference_of(value: Any) -> dict | None:
    """A result's reference times (``None`` for arrays, in-process results, old baselines)."""
    return getattr(value, "reference", None)
