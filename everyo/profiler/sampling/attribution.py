"""Which recorded event each stack sample belongs to: the innermost one open on its thread.

Samples and events share a clock (the recorder's, relative to the run start) and thread ids
(the OS ids of the events' ``tid``), so attribution is containment in time, computed after the
fact: the recorder is not asked anything while it records.
"""

from __future__ import annotations

import numpy as np

from everyo.errors import EveryOProfilerError


def require_samples(run):
    """The run's :class:`~everyo.profiler.sampling.samples.SampleStore`, or a clear error."""
    samples = getattr(run, "samples", None)
    if samples is None:
        raise EveryOProfilerError(
            f"run {run.label!r} has no stack samples: profile with sample=1 "
            "(profile(sample=1), %%everyo_profile --sample, python -m everyo profile --sample)"
        )
    return samples


def owners(batch, t_ns: np.ndarray, tid: np.ndarray) -> np.ndarray:
    """Row (index into ``batch``) of the innermost event open at ``t_ns`` on thread ``tid``,
    -1 where none was. ``batch`` is a whole run's snapshot (its parents are exact).

    On one thread events nest, so the event that started last at or before ``t`` either holds
    ``t`` or is a descendant of the one that does: walk up its parents until one holds ``t``.
    """
    out = np.full(len(t_ns), -1, np.int64)
    if not len(batch) or not len(t_ns):
        return out
    end = batch.start_ns + batch.dur_ns
    for thread in np.unique(tid).tolist():
        mine = np.flatnonzero(tid == thread)
        rows = np.flatnonzero(batch.tid == thread)
        if not len(rows):
            continue
        # by start, deeper later: of an event and its child starting together, the child
        rows = rows[np.lexsort((batch.depth[rows], batch.start_ns[rows]))]
        t = t_ns[mine]
        pos = np.searchsorted(batch.start_ns[rows], t, side="right") - 1
        cand = np.where(pos >= 0, rows[np.maximum(pos, 0)], -1)
        while True:
            live = cand >= 0
            out_of = np.zeros(len(cand), bool)
            out_of[live] = end[cand[live]] <= t[live]
            if not out_of.any():
                break
            cand[out_of] = batch.parent[cand[out_of]]
        out[mine] = cand
    return out


def select_rows(batch, event) -> np.ndarray:
    """Boolean mask of the rows ``event`` names: a name (every row of that name), a row
    number, or a list of row numbers."""
    if isinstance(event, str):
        mask = batch.name == event
        if not mask.any():
            names = sorted(set(batch.name.tolist()))
            shown = ", ".join(repr(n) for n in names[:12]) + (" ..." if len(names) > 12 else "")
            raise EveryOProfilerError(f"no event named {event!r} in this run; its names: {shown}")
        return mask
    rows = [event] if isinstance(event, (int, np.integer)) else list(event)
    mask = np.zeros(len(batch), bool)
    for r in rows:
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 0 <= r < len(batch):
            raise EveryOProfilerError(
                f"event={r!r}: give an event name (a summary row's name) or a row number "
                f"from 0 to {len(batch) - 1}"
            )
        mask[int(r)] = True
    return mask


def inside(batch, owner: np.ndarray, selected: np.ndarray, self_only: bool = False):
    """Which samples fall in a selected event: owned by one, or (unless ``self_only``) by one
    of its descendants."""
    hit = np.zeros(len(owner), bool)
    cur = owner.copy()
    while True:
        live = cur >= 0
        if not live.any():
            return hit
        hit[live] |= selected[cur[live]]
        if self_only:
            return hit
        cur[live] = batch.parent[cur[live]]


def outermost_time(batch, selected: np.ndarray) -> tuple[int, int]:
    """``(calls, ns)`` of the selected events, nested repeats counted once."""
    covered = np.zeros(len(batch), bool)
    cur = batch.parent.copy()
    while True:
        live = cur >= 0
        if not live.any():
            break
        covered[live] |= selected[cur[live]]
        cur[live] = batch.parent[cur[live]]
    top = selected & ~covered
    return int(selected.sum()), int(batch.dur_ns[top].sum())


def covered_ns(batch) -> int:
    """Wall time during which at least one event was open, on any thread (the union of the
    events' spans): what is left of the run's wall time is the time outside every event."""
    if not len(batch):
        return 0
    top = batch.depth == 0
    lo, hi = batch.start_ns[top], batch.start_ns[top] + batch.dur_ns[top]
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    reach = np.maximum.accumulate(hi)  # the furthest end so far: a new span starts past it
    fresh = np.ones(len(lo), bool)
    fresh[1:] = lo[1:] > reach[:-1]
    starts = np.flatnonzero(fresh)
    ends = np.append(starts[1:], len(lo)) - 1
    return int((reach[ends] - lo[starts]).sum())
