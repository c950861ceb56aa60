"""Level of detail: merge events narrower than a pixel so a chart never gets too many bars.

Within one lane (a depth of one thread), events do not overlap. Sorted by start, a run of
sub-pixel events separated by less than a pixel, within one pixel column, becomes one bar
spanning them; an event at least a pixel wide stays a bar of its own. A merged bar of events of
several colours keeps ``dom``, the colour with the most time in it, so a busy stretch reads as
what dominates it rather than as one long grey bar. Per lane that leaves at most about two bars
per pixel column, so the bar count is bounded by twice the lanes times the width in pixels; if
that is still more than ``max_shapes``, the pixel is widened until it fits. Everything is
vectorised: a million events take one sort and a few linear passes.

Zoomed out, a long run is still a wash of bars too thin to name. :func:`merge_readable` (the
twin of ``js/src/lod.js``'s ``readableLanes``, held to the same bars by
``tests/lab/test_lod_js.py``) merges, per lane, two or more consecutive calls narrower than a
readable width that lie inside one cell (a run of whole steps, or a slice of time) into one bar
per call path, laid out as the icicle lays out a call tree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

__all__ = ["Bars", "call_paths", "cell_edges", "merge_bars", "merge_readable", "readable_bars"]

_MAX_PASSES = 4
READABLE_PX = 60
"""A call narrower than this has no room for its name (``js/src/lod.js``: ``READABLE_PX``)."""
CELL_PX = 320
"""The least width of a readable merge's cell (``js/src/lod.js``: ``CELL_PX``)."""
READABLE_LIMIT = 120_000
"""Runs of more events keep the pixel merge alone, in the browser (``widgets/wire.py``'s
``RAW_LIMIT`` is this number: past it the browser's store holds the kernel's merged bars) and in
static charts (the readable merge is a loop over events)."""


@dataclass(frozen=True)
class Bars:
    """Bars to draw, one per row of each array (times in nanoseconds from the run start).

    ``row`` is the batch row of the bar's first event (the event itself when ``count`` is 1);
    ``busy`` sums the durations of the merged events; ``uniform`` says they share one colour key
    ``code``; ``pixel_ns`` is the pixel width the merge used; ``dom`` is the colour code with the
    most time in each bar (``code`` itself when uniform; ``None``: not computed); ``group``
    marks a bar that stands for one call path's ``count`` calls, as wide as their total time
    (the readable merge; ``None``: none was made).
    """

    start: np.ndarray
    end: np.ndarray
    lane: np.ndarray
    count: np.ndarray
    busy: np.ndarray
    code: np.ndarray
    uniform: np.ndarray
    row: np.ndarray
    pixel_ns: float
    dom: np.ndarray | None = None
    group: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.start)


def merge_bars(
    start_ns: np.ndarray,
    dur_ns: np.ndarray,
    lane: np.ndarray,
    code: np.ndarray,
    *,
    x_range_ns: tuple[float, float] | None = None,
    width_px: int = 1600,
    max_shapes: int = 20000,
    count: np.ndarray | None = None,
    group: np.ndarray | None = None,
) -> Bars:
    """Merge sub-pixel events per lane into at most ``max_shapes`` bars.

    Parameters
    ----------
    start_ns, dur_ns, lane, code
        Per-event start and duration (ns), lane (row on the y axis) and colour-key code.
    x_range_ns
        Visible time window; events entirely outside it are dropped. ``None``: all events.
    width_px
        Width of the plot in pixels; one pixel is the visible span divided by it.
    max_shapes
        Hard upper bound on the number of bars returned.
    count, group
        Per input bar, the events it stands for and whether it is one call path's calls (the
        readable merge's bars); ``None``: each input is one event.
    """
    if width_px < 1 or max_shapes < 1:
        raise ValueError("width_px and max_shapes must be at least 1")
    start = np.asarray(start_ns, dtype=np.int64)
    end = start + np.asarray(dur_ns, dtype=np.int64)
    lane = np.asarray(lane, dtype=np.int64)
    code = np.asarray(code, dtype=np.int64)
    if x_range_ns is None:
        lo, hi = (float(start.min()), float(end.max())) if len(start) else (0.0, 1.0)
        idx = np.arange(len(start))
    else:
        lo, hi = float(x_range_ns[0]), float(x_range_ns[1])
        idx = np.flatnonzero((end >= lo) & (start <= hi))
    if len(idx) == 0:
        return _empty()
    order = idx[np.lexsort((start[idx], lane[idx]))]
    s, e, ln, cd = start[order], end[order], lane[order], code[order]
    # Running maximum of ends within each lane: shift lanes apart so maxima never cross a lane.
    shift = (ln - ln[0]) * (int(e.max()) - int(s.min()) + 1)
    reach = np.maximum.accumulate(e + shift) - shift
    pixel = max(hi - lo, 1.0) / width_px
    for _ in range(_MAX_PASSES):
        firsts = _group_starts(s, e, ln, reach, pixel, lo)
        if len(firsts) <= max_shapes:
            break
        pixel *= 1.25 * len(firsts) / max_shapes
    else:
        # Guaranteed fit: per lane, wide events and gaps each use up a pixel, and each merged
        # bar sits between two of them, so a lane holds at most 2 * span / pixel + 5 bars.
        n_lanes = int(np.count_nonzero(np.diff(ln)) + 1)
        room = max_shapes - 6 * n_lanes
        pixel = np.inf if room <= 0 else max(pixel, 2.0 * max(hi - lo, 1.0) * n_lanes / room)
        firsts = _group_starts(s, e, ln, reach, pixel, lo)
        if len(firsts) > max_shapes:  # more lanes than max_shapes: keep the top lanes
            keep = firsts[max_shapes]
            s, e, ln, cd, order = s[:keep], e[:keep], ln[:keep], cd[:keep], order[:keep]
            firsts = firsts[:max_shapes]
    return _aggregate(s, e, ln, cd, order, firsts, pixel, count, group)


def _group_starts(s, e, ln, reach, pixel, lo: float = 0.0) -> np.ndarray:
    """Indices where a new bar begins (sorted arrays, one pixel ``pixel`` ns): at a wide event,
    a gap of more than a pixel, a new lane or a new pixel column."""
    narrow = (e - s) < pixel
    column = np.floor((s - lo) / pixel) if np.isfinite(pixel) else np.zeros(len(s))
    brk = np.ones(len(s), dtype=bool)
    brk[1:] = (
        ~narrow[1:]
        | ~narrow[:-1]
        | (ln[1:] != ln[:-1])
        | (s[1:] - reach[:-1] > pixel)
        | (column[1:] != column[:-1])
    )
    return np.flatnonzero(brk)


def _aggregate(s, e, ln, cd, order, firsts, pixel, count=None, group=None) -> Bars:
    lo_code = np.minimum.reduceat(cd, firsts)
    uniform = lo_code == np.maximum.reduceat(cd, firsts)
    inputs = np.diff(np.append(firsts, len(s)))
    return Bars(
        start=s[firsts],
        end=np.maximum.reduceat(e, firsts),
        lane=ln[firsts],
        count=inputs if count is None else np.add.reduceat(np.asarray(count)[order], firsts),
        busy=np.add.reduceat(e - s, firsts),
        code=lo_code,
        uniform=uniform,
        row=order[firsts],
        pixel_ns=float(pixel),
        dom=_dominant(cd, e - s, firsts, uniform, lo_code),
        group=None if group is None else np.asarray(group, bool)[order[firsts]] & (inputs == 1),
    )


def _dominant(code, dur, firsts, uniform, lo_code) -> np.ndarray:
    """Per bar, the colour code with the most time, the lowest code on a tie (its code when
    the bar is uniform). ``js/src/lod.js``'s ``dominant`` is the same rule."""
    dom = lo_code.copy()
    mixed = np.flatnonzero(~uniform)
    if len(mixed) == 0:
        return dom
    counts = np.diff(np.append(firsts, len(code)))
    group = np.repeat(np.arange(len(firsts)), counts)
    inside = ~uniform[group]
    n_codes = int(code.max()) + 1
    pair, inverse = np.unique(group[inside] * n_codes + code[inside], return_inverse=True)
    time = np.bincount(inverse, weights=dur[inside])
    best = np.lexsort((-time, pair // n_codes))  # per group, the most time first
    head = best[np.r_[True, np.diff(pair[best] // n_codes) != 0]]
    dom[pair[head] // n_codes] = pair[head] % n_codes
    return dom


def _empty() -> Bars:
    z = np.zeros(0, dtype=np.int64)
    # no bars: no dominant colours either (an empty array, like every other column)
    return Bars(z, z, z, z, z, z, np.zeros(0, dtype=bool), z, 1.0, dom=z)


def merge_readable(start_ns, end_ns, lane, key, path, path_parent, *, edges, min_ns):
    """The readable merge of events sorted by (lane, start): ``(start, end, lane, key, count,
    group, first)`` lists of the bars that replace them (``first``: the index of the bar's first
    event, the event itself for a bar of one).

    In each lane, a run of two or more consecutive events narrower than ``min_ns``, inside one
    cell (``edges[c] <= start``, ``end <= edges[c + 1]``; ``edges`` ascending, from -inf to
    inf) and with a known call path (``path`` >= 0), becomes one bar per call path: a call whose
    parent (the event of lane - 1 containing its start) was merged joins its parent's bar, its
    path's bar placed after its earlier siblings' inside the parent's; any other path's bar
    starts at its first call or right after the bar before it. ``path_parent[p]``: path p's
    parent path (-1: none; then the event has no parent lane). ``group`` is 1 for such a bar.
    """
    out = ([], [], [], [], [], [], [])
    groups_of: dict[int, tuple[int, list]] = {}  # lane -> (first row of it, each row's group)
    n = len(start_ns)
    i = 0
    while i < n:
        j = i
        while j < n and lane[j] == lane[i]:
            j += 1
        above = groups_of.get(int(lane[i]) - 1)
        groups_of[int(lane[i])] = (
            i,
            _merge_lane(start_ns, end_ns, key, path, path_parent, i, j, edges, min_ns, above, out),
        )
        out[2].extend([int(lane[i])] * (len(out[0]) - len(out[2])))
        i = j
    return out


def _merge_lane(start, end, key, path, path_parent, lo, hi, edges, min_ns, above, out):
    """One lane's rows ``[lo, hi)`` (see :func:`merge_readable`); returns each row's group."""
    group_of: list = [None] * (hi - lo)
    bars: list[list] = []  # [start, end, key, count, group]

    def push(b_start, b_end, b_key, count, group, first):
        shift = bars[-1][1] - b_start if bars and b_start < bars[-1][1] else 0  # no overlaps
        bars.append([b_start + shift, b_end + shift, int(b_key), count, group, first])

    cell = 0
    p = above[0] if above else 0

    def cell_of(t):
        nonlocal cell
        while edges[cell + 1] <= t:
            cell += 1
        return cell

    def in_cell(k):
        c = cell_of(start[k])
        return path[k] >= 0 and end[k] - start[k] < min_ns and end[k] <= edges[c + 1]

    i = lo
    while i < hi:
        if not in_cell(i):
            push(start[i], end[i], key[i], 1, 0, i)
            i += 1
            continue
        c = cell
        j = i + 1
        while j < hi and start[j] < edges[c + 1] and in_cell(j):
            j += 1
        if j - i < 2:
            push(start[i], end[i], key[i], 1, 0, i)
            i = j
            continue
        groups: list[dict] = []
        by_id: dict[tuple, dict] = {}
        segment, last_child = 0, False
        for k in range(i, j):
            parent = None
            if above and path_parent[path[k]] >= 0:
                a_lo, a_groups = above
                a_hi = a_lo + len(a_groups)
                while p + 1 < a_hi and start[p + 1] <= start[k]:
                    p += 1
                if a_lo <= p < a_hi and start[p] <= start[k] and end[p] >= end[k]:
                    parent = a_groups[p - a_lo]
            if parent is None and last_child:
                segment += 1
            last_child = parent is not None
            gid = ("c", parent["id"], path[k]) if parent else ("r", segment, path[k])
            g = by_id.get(gid)
            if g is None:
                g = {"id": (i, len(groups)), "parent": parent, "first": start[k], "total": 0}
                g.update(count=0, key=key[k], row=k)
                by_id[gid] = g
                groups.append(g)
            g["total"] += end[k] - start[k]
            g["count"] += 1
            group_of[k - lo] = g
        reach = bars[-1][1] if bars else -np.inf
        for g in groups:
            if g["parent"] is not None:
                g["x"] = g["parent"]["cursor"]
                g["parent"]["cursor"] += g["total"]
            else:
                g["x"] = max(g["first"], reach)
                reach = g["x"] + g["total"]
            g["cursor"] = g["x"]
        for g in sorted(groups, key=lambda g: g["x"]):
            push(g["x"], g["x"] + g["total"], g["key"], g["count"], 1, g["row"])
        i = j
    for column, values in zip((0, 1, 3, 4, 5, 6), zip(*bars, strict=True), strict=False):
        out[column].extend(values)
    return group_of


def cell_edges(x0: float, x1: float, screen: float, step_ends=None) -> list[float]:
    """The readable merge's cells for the window ``[x0, x1]`` at ``screen`` per pixel: edges
    from -inf to inf; with two or more step ends, every k-th one, k the smallest power of two
    whose k steps are on average :data:`CELL_PX` wide (counted from the run's first step, so a
    pan keeps them); without, multiples of :data:`CELL_PX` pixels from 0. ``js/src/lod.js``'s
    ``cellEdges``, step for step."""
    cell = CELL_PX * screen
    edges = [-np.inf]
    ends = np.asarray(step_ends if step_ends is not None else [], dtype=np.float64)
    n = len(ends)
    if n >= 2:
        mean = (ends[-1] - ends[0]) / (n - 1)
        k = 1
        while k * mean < cell and k < n:
            k *= 2
        lo = int(np.searchsorted(ends, x0, "left"))
        hi = int(np.searchsorted(ends, x1, "right"))
        j = max(k - 1, (lo // k) * k - 1)  # from the last chosen end before the window
        while j < n:
            edges.append(float(ends[j]))
            if j >= hi:
                break
            j += k
    elif cell > 0:
        edges += [m * cell for m in range(math.floor(x0 / cell), math.ceil(x1 / cell) + 1)]
    edges.append(np.inf)
    return edges


def call_paths(key, depth, parent, has_parent) -> tuple[np.ndarray, list[int]]:
    """Each event's call path (its key under its parent's path) and each path's parent path
    (-1: none), as the browser's store gives them (``resolvePaths``); -1 for an event below
    the top whose parent is not among the events. Rows are looked at a depth at a time."""
    key = np.asarray(key, dtype=np.int64)
    depth = np.asarray(depth, dtype=np.int64)
    path = np.full(len(key), -1, dtype=np.int64)
    path_parent: list[int] = []
    ids: dict[int, int] = {}
    span = int(key.max()) + 1 if len(key) else 1
    for d in range(int(depth.max()) + 1 if len(key) else 0):
        rows = np.flatnonzero(depth == d)
        if d:
            rows = rows[has_parent[rows]]
            up = path[parent[rows]]
            rows, up = rows[up >= 0], up[up >= 0]
        else:
            up = np.full(len(rows), -1, dtype=np.int64)
        pairs = (up + 1) * span + key[rows]
        uniq, inverse = np.unique(pairs, return_inverse=True)
        got = np.empty(len(uniq), dtype=np.int64)
        for i, pair in enumerate(uniq.tolist()):
            if pair not in ids:
                ids[pair] = len(path_parent)
                path_parent.append(pair // span - 1)
            got[i] = ids[pair]
        path[rows] = got[inverse]
    return path, path_parent


def readable_bars(
    start_ns,
    end_ns,
    lane,
    key,
    code,
    path,
    path_parent,
    *,
    x_range_ns,
    width_px,
    step_ends,
    max_shapes,
) -> Bars:
    """The bars the browser draws of whole-run events (``levelOfDetail`` with ``readable``):
    the readable merge (:func:`merge_readable`), then the pixel merge (:func:`merge_bars`) of
    its bars. ``key``: each event's identity (the store key its call path is made of);
    ``code``: each key's colour code (an array indexed by key). ``row`` of a bar is its first
    event's index."""
    start = np.asarray(start_ns, dtype=np.int64)
    end = np.asarray(end_ns, dtype=np.int64)
    lo, hi = x_range_ns
    inside = np.flatnonzero((end >= lo) & (start <= hi))
    order = inside[np.lexsort((start[inside], lane[inside]))]
    screen = max(hi - lo, 1.0) / max(1, width_px)
    edges = cell_edges(lo, hi, screen, step_ends)
    columns = (start[order], end[order], np.asarray(lane)[order], key[order], path[order])
    # memoryviews: the loop reads plain ints an item at a time, and no list of a Python int per
    # event is built (lists of a run's events left the process larger after each chart)
    views = [memoryview(np.ascontiguousarray(c, dtype=np.int64)) for c in columns]
    out = merge_readable(*views, path_parent, edges=edges, min_ns=READABLE_PX * screen)
    b_start, b_end, b_lane, b_key, b_count, b_group, b_first = (
        np.asarray(column, dtype=np.int64) for column in out
    )
    if not len(b_start):
        return _empty()
    bars = merge_bars(
        b_start, b_end - b_start, b_lane, np.asarray(code)[b_key], x_range_ns=(lo, hi),
        width_px=width_px, max_shapes=max_shapes, count=b_count, group=b_group == 1,
    )  # fmt: skip
    return replace(bars, row=order[b_first][bars.row])
