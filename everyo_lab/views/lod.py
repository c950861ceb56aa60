"""Level of detail: merge events narrower than a pixel so a chart never gets too many bars.

Within one lane (a depth of one thread), events do not overlap. Sorted by start, a run of
sub-pixel events separated by less than a pixel, within one pixel column, becomes one bar
spanning them; an event at least a pixel wide stays a bar of its own. A merged bar of events of
several colours keeps ``dom``, the colour with the most time in it, so a busy stretch reads as
what dominates it rather than as one long grey bar. Per lane that leaves at most about two bars
per pixel column, so the bar count is bounded by twice the lanes times the width in pixels; if
that is still more than ``max_shapes``, the pixel is widened until it fits. Everything is
vectorised: a million events take one sort and a few linear passes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Bars", "merge_bars"]

_MAX_PASSES = 4


@dataclass(frozen=True)
class Bars:
    """Bars to draw, one per row of each array (times in nanoseconds from the run start).

    ``row`` is the batch row of the bar's first event (the event itself when ``count`` is 1);
    ``busy`` sums the durations of the merged events; ``uniform`` says they share one colour key
    ``code``; ``pixel_ns`` is the pixel width the merge used; ``dom`` is the colour code with the
    most time in each bar (``code`` itself when uniform; ``None``: not computed).
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
    return _aggregate(s, e, ln, cd, order, firsts, pixel)


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


def _aggregate(s, e, ln, cd, order, firsts, pixel) -> Bars:
    lo_code = np.minimum.reduceat(cd, firsts)
    uniform = lo_code == np.maximum.reduceat(cd, firsts)
    return Bars(
        start=s[firsts],
        end=np.maximum.reduceat(e, firsts),
        lane=ln[firsts],
        count=np.diff(np.append(firsts, len(s))),
        busy=np.add.reduceat(e - s, firsts),
        code=lo_code,
        uniform=uniform,
        row=order[firsts],
        pixel_ns=float(pixel),
        dom=_dominant(cd, e - s, firsts, uniform, lo_code),
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
