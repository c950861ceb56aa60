"""Points of a sweep that break from their neighbours: found, re-measured, flagged.

Time per sample changes smoothly with the batch size (on a log-log scale), so a point whose time
per sample lies far off the line through its neighbours, by more than the spread of its own
timed calls explains, is a suspect: on a shared machine most often a moment when another process
took the cores. Suspects and their neighbours are timed again, interleaved (one round of calls
for each size in turn, several rounds), so that a busy moment slows them alike. A point whose
rounds agree takes the re-measured figures (its note keeps the first reading); a point whose
rounds still disagree is marked unreliable, and a sweep never recommends it.

A point whose rounds agree but which still lies off its neighbours is a repeatable effect of the
machine at that size, not noise: it keeps its re-measured figures, is marked ``off_trend`` with
what it found (most often page faults: the allocator gave a large buffer back to the system
after each call, so every call touches fresh pages), and is left out of the recommendation,
which names it. A recommendation then never turns on such a point without saying so.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from everyo.bench.sweep_point import SweepRow, row_from_times
from everyo.bench.timing import Timer
from everyo.machine_state import MachineWatch

__all__ = [
    "suspects",
    "recheck",
    "BREAK",
    "CLIFF",
    "ROUND_AGREEMENT",
    "MAX_REMEASURED",
    "ROUNDS",
]

BREAK = math.log(1.5)
"""Departure (log of a ratio) from the neighbours' line that counts as a break, on top of twice
the spread the point's own timings show."""
UNSTABLE_SPREAD = math.log(3.0)
"""A point whose own p95/p5 exceeds 3x is a suspect whatever its neighbours say."""
CLIFF = 3.0
"""Two adjacent points whose throughputs differ by more than this factor (beyond the gain their
batch sizes allow) make a suspect however noisy the points are: a cliff is never unflagged."""
FAULTS_PER_SAMPLE = 0.05
"""Page faults per sample (a fresh 4-KiB page per 80 KiB of each sample's data) above which a
point's faults explain part of its time, when its neighbours take clearly fewer."""
ROUND_AGREEMENT = 1.5
"""Re-measured rounds of one size agree when their medians are within this factor."""
MAX_REMEASURED = 8
"""At most this many sizes are re-measured (suspects first, then their neighbours)."""
ROUNDS = 3


def _log_time(row: SweepRow) -> float:
    return math.log(row.median_ms / row.batch_size)


def _spread(row: SweepRow) -> float:
    """The spread of one point's timings as a standard deviation of log time (from p5-p95)."""
    if not row.p5_ms or not row.p95_ms or row.p5_ms <= 0:
        return 0.0
    return math.log(row.p95_ms / row.p5_ms) / (2 * 1.645)


def suspects(rows: list[SweepRow]) -> list[int]:
    """Batch sizes of the measured points that break from their neighbours.

    An interior point is compared with the straight line (log time per sample against log
    batch size) through its two neighbours, an end point with the line through the next two;
    it breaks when it lies off that line by more than :data:`BREAK` plus twice the spread of
    the three points' timings. With two points only, a ratio beyond what their batch sizes
    allow (time per sample changing by more than 3x beyond the size ratio) marks both.
    """
    ok = sorted((r for r in rows if r.ok and r.median_ms), key=lambda r: r.batch_size)
    out = [r.batch_size for r in ok if math.log((r.p95_ms or 1) / (r.p5_ms or 1)) > UNSTABLE_SPREAD]
    if len(ok) == 2:
        a, b = ok
        allowed = math.log(b.batch_size / a.batch_size) + math.log(3.0)
        if abs(_log_time(b) - _log_time(a)) > allowed:
            out += [a.batch_size, b.batch_size]
    for i, row in enumerate(ok if len(ok) >= 3 else ()):
        j, k = (i - 1, i + 1) if 0 < i < len(ok) - 1 else (1, 2) if i == 0 else (i - 2, i - 1)
        x = [math.log(ok[n].batch_size) for n in (j, k)]
        y = [_log_time(ok[n]) for n in (j, k)]
        slope = (y[1] - y[0]) / (x[1] - x[0])
        predicted = y[0] + slope * (math.log(row.batch_size) - x[0])
        spread = math.sqrt(sum(_spread(r) ** 2 for r in (row, ok[j], ok[k])) / 3)
        if abs(_log_time(row) - predicted) > BREAK + 2 * spread:
            out.append(row.batch_size)
    return sorted(set(out + _cliffs(ok)))


def _cliffs(ok: list[SweepRow]) -> list[int]:
    """The points at a cliff between adjacent sizes: the one after a throughput drop of more
    than :data:`CLIFF`, or the one before a gain of more than :data:`CLIFF` times the size
    ratio (a larger batch gains at most its size ratio)."""
    out = []
    for a, b in zip(ok, ok[1:]):
        if a.throughput / b.throughput > CLIFF:
            out.append(b.batch_size)
        elif b.throughput / a.throughput > CLIFF * b.batch_size / a.batch_size:
            out.append(a.batch_size)
    return out


def remeasure(
    step: Callable[[Any], Any],
    make_batch: Callable[[int], Any],
    sizes: list[int],
    *,
    warmup: int,
    repeat: int,
    rounds: int = ROUNDS,
    clock: Callable[[], float] | None = None,
    synchronize: Callable[[], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> dict[int, list[list[float]]]:
    """Time ``step`` at each size, interleaved: ``rounds`` rounds of ``repeat`` calls per size
    in turn; returns size -> one list of seconds per round. ``stop()`` true ends it before the
    next size (what was timed is returned; :func:`recheck` does not use it)."""
    stop = stop or (lambda: False)
    batches = {bs: make_batch(bs) for bs in sizes}
    timer = Timer(clock=clock, synchronize=synchronize)
    for bs in sizes:
        timer.run(lambda b=batches[bs]: step(b), warmup, 0, inputs=(step, batches[bs]))
    times: dict[int, list[list[float]]] = {bs: [] for bs in sizes}
    for _ in range(rounds):
        for bs in sizes:
            if stop():
                return times
            call = lambda b=batches[bs]: step(b)  # noqa: E731
            times[bs].append([timer.time_once(call) for _ in range(repeat)])
    return times


def recheck(
    rows: list[SweepRow],
    measure: Callable[[list[int]], dict],
    stopped: Callable[[], bool] = lambda: False,
) -> list[SweepRow]:
    """Re-measure the suspects of ``rows`` with their neighbours and flag what stays off.

    ``measure(sizes)`` returns :func:`remeasure`'s result for those sizes. Returns new rows
    (sorted by batch size); rows not re-measured are unchanged. When ``stopped()`` is true
    after measuring (the user stopped the sweep during it), the partial re-measurement is not
    used: the suspects are marked unreliable, as not checked, and never recommended.
    """
    rows = sorted(rows, key=lambda r: r.batch_size)
    found = suspects(rows)
    if not found:
        return rows
    ok = [r.batch_size for r in rows if r.ok and r.median_ms]
    chosen = _with_neighbours(found, ok)
    watch = MachineWatch().start()
    times = measure(chosen)
    state = watch.stop()
    if stopped():
        note = "off its neighbours; not re-measured (the sweep was stopped)"
        return [
            replace(r, reliable=False, note=_join(r.note, note)) if r.batch_size in found else r
            for r in rows
        ]
    by_size = {r.batch_size: r for r in rows}
    for bs, per_round in times.items():
        by_size[bs] = _updated(by_size[bs], per_round, state, suspect=bs in found)
    rows = [by_size[r.batch_size] for r in rows]
    still = _still_off(rows, found)
    return [
        _off_trend(r, rows)
        if r.batch_size in still
        else replace(r, note=_join(r.note, _faults_text(r, rows)))
        if r.batch_size in found and not r.reliable
        else r
        for r in rows
    ]


def _still_off(rows: list[SweepRow], found: list[int]) -> set[int]:
    """The re-measured suspects that still break from the others, one at a time: the point
    whose removal leaves the fewest suspects first (a point off the trend makes its neighbour
    look off too; only the point itself is marked)."""
    rest = [r for r in rows if r.reliable]
    off: set[int] = set()
    while len(off) < MAX_REMEASURED:
        candidates = [bs for bs in suspects(rest) if bs in found]
        if not candidates:
            break
        worst = min(
            candidates,
            key=lambda bs: (len(suspects([r for r in rest if r.batch_size != bs])), -bs),
        )
        off.add(worst)
        rest = [r for r in rest if r.batch_size != worst]
    return off


def _off_trend(row: SweepRow, rows: list[SweepRow]) -> SweepRow:
    """A suspect whose re-measured rounds agree and which still lies off its neighbours: a
    repeatable effect, marked and explained (page faults, when they tell it apart)."""
    note = (
        "off its neighbours' trend, also when re-measured (rounds agree): a repeatable effect "
        "of this machine at this size, not noise, so not recommended from"
    )
    return replace(row, off_trend=True, note=_join(row.note, note, _faults_text(row, rows)))


def _faults_text(row: SweepRow, rows: list[SweepRow]) -> str:
    """Why, when page faults tell the point apart from its measured neighbours."""
    ok = [r for r in rows if r.ok and r.faults_per_call is not None]
    if row.faults_per_call is None or row not in ok:
        return ""
    per_sample = row.faults_per_call / row.batch_size
    i = ok.index(row)
    others = [r.faults_per_call / r.batch_size for r in ok[max(i - 1, 0) : i + 2] if r is not row]
    if per_sample < FAULTS_PER_SAMPLE or not others or max(others) > per_sample / 2:
        return ""
    return (
        f"each call took {row.faults_per_call:,.0f} page faults ({per_sample:.2f} per sample, "
        f"{max(others):.2f} beside it): the allocator gave its memory back to the system after "
        "each call, so the next one touched fresh pages"
    )


def _with_neighbours(found: list[int], sizes: list[int]) -> list[int]:
    chosen: list[int] = []
    for bs in found:
        i = sizes.index(bs)
        for n in (i - 1, i, i + 1):
            if 0 <= n < len(sizes) and sizes[n] not in chosen:
                chosen.append(sizes[n])
    keep = found + [bs for bs in chosen if bs not in found]  # suspects first, when bounded
    return sorted(keep[:MAX_REMEASURED])


def _updated(row: SweepRow, per_round: list[list[float]], state, *, suspect: bool) -> SweepRow:
    medians = [float(np.median(t)) for t in per_round if t]
    pooled = [t for r in per_round for t in r]
    if not pooled:
        return row
    fresh = row_from_times(row.batch_size, pooled, machine=state)
    fresh = replace(
        fresh,
        peak_memory=row.peak_memory,
        gpu_memory=row.gpu_memory,
        memory_source=row.memory_source,
        faults_per_call=row.faults_per_call,
    )
    first = f"first reading {row.throughput:,.0f} samples/s"
    agree = max(medians) / min(medians) <= ROUND_AGREEMENT
    if agree:
        what = "re-measured" if suspect else "re-measured as a neighbour"
        return replace(fresh, note=_join(row.note, f"{what} ({first})"))
    note = (
        f"{len(medians)} interleaved re-measurements disagree "
        f"({max(medians) / min(medians):.1f}x between rounds; {first})"
    )
    return replace(fresh, reliable=False, note=_join(row.note, note))


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)
