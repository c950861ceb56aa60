"""The flame chart's level of detail kept up to date batch by batch while a run records.

:class:`LiveFlame` bins time into a fixed number of columns per lane (``columns`` wide, over
the run so far). An event narrower than a column goes to the column it starts in: a column
keeps the number of its events, their summed duration, earliest start, latest end, smallest
and largest colour code, and its last event (what a lone event's hover shows). An event at
least a column wide is kept as itself; per lane there are at most ``columns`` of them, as
events of one lane never overlap. When the run outgrows the columns, the column width
doubles: pairs of columns merge and kept events narrower than the new width fold into the
columns. Feeding costs O(batch) plus O(lanes × columns) on a doubling; drawing costs
O(lanes × columns), whatever the number of events seen.

Bars are the runs of adjacent occupied columns, each from its earliest start to its latest
end (so it holds every event of its columns), plus the kept wide events: every event lies
inside a bar of its lane. Too many bars for ``max_shapes``: the drawing uses coarser columns.
"""

from __future__ import annotations

import numpy as np

from everyo import _compiled
from everyo_lab.views.flame.lod import Bars

__all__ = ["LiveFlame"]

LOOPS = _compiled.load("everyo.profiler.storage._cbatch")  # the compiled batch loops, or None

_I64_MAX = np.iinfo(np.int64).max
# column fields, their empty value and how two columns combine
_FIELDS = {
    "count": (0, np.add),
    "busy": (0, np.add),
    "lo": (_I64_MAX, np.minimum),
    "hi": (-1, np.maximum),
    "cmin": (_I64_MAX, np.minimum),
    "cmax": (-1, np.maximum),
}
# the last event starting in a column (with count 1, the column's only event)
_REP = ("rep_key", "rep_start", "rep_dur", "rep_self", "rep_shape")
_EVENT = ("start", "dur", "lane", "code", "key", "self", "shape")


class LiveFlame:
    """Time-binned occupancy per lane plus the events at least a column wide."""

    def __init__(self, columns: int = 1600):
        if columns < 2 or columns % 2:
            raise ValueError(f"columns must be an even number >= 2, got {columns}")
        self.columns = columns
        self.width = 0  # ns per column; 0 until the first event
        self.max_end = 0
        self.events = 0
        self.cols = {f: np.zeros((0, columns), np.int64) for f in (*_FIELDS, *_REP)}
        self.wide = {f: np.zeros(0, np.int64) for f in _EVENT}

    @property
    def lanes(self) -> int:
        return len(self.cols["count"])

    def feed(self, ev: dict) -> None:
        """Add events: a dict of equal-length int64 arrays named as ``_EVENT``."""
        n = len(ev["start"])
        if n == 0:
            return
        self.events += n
        self._grow_lanes(int(ev["lane"].max()) + 1)
        end = int((ev["start"] + ev["dur"]).max())
        self.max_end = max(self.max_end, end)
        if self.width == 0:
            self.width = 1 << max(0, int(np.ceil(np.log2(max(end, 1) / self.columns))))
        while self.max_end > self.width * self.columns:
            self._double()
        wide = ev["dur"] >= self.width
        if not wide.any():  # the usual batch: no masks to apply
            _mark(self.cols, self.width, ev)
            return
        _mark(self.cols, self.width, {k: v[~wide] for k, v in ev.items()})
        self.wide = {k: np.concatenate([self.wide[k], ev[k][wide]]) for k in _EVENT}

    def _grow_lanes(self, lanes: int) -> None:
        extra = lanes - self.lanes
        if extra > 0:
            for f, arr in self.cols.items():
                fill = _FIELDS[f][0] if f in _FIELDS else 0
                self.cols[f] = np.vstack([arr, np.full((extra, self.columns), fill, np.int64)])

    def _double(self) -> None:
        """Twice the column width: merge column pairs, fold the now narrow kept events."""
        half = _merged_pairs(self.cols)
        for f, arr in half.items():
            fill = _FIELDS[f][0] if f in _FIELDS else 0
            self.cols[f] = np.concatenate([arr, np.full_like(arr, fill)], axis=1)
        self.width *= 2
        self.wide = _fold(self.cols, self.width, self.wide)

    def bars(self, max_shapes: int = 20000) -> tuple[Bars, dict]:
        """At most ``max_shapes`` bars (lanes as fed) and the lone events they draw.

        Returns ``(bars, singles)``: ``bars.row`` of a bar with ``count == 1`` indexes the
        arrays of ``singles`` (``key``, ``start``, ``dur``, ``self``, ``shape``).
        """
        cols, wide, width = self.cols, self.wide, self.width
        while True:
            bars, singles = _bars(cols, wide, width)
            if len(bars) <= max_shapes or cols["count"].shape[1] == 1:
                break
            cols = _merged_pairs(cols)  # coarser for this drawing only
            width *= 2
            wide = _fold(cols, width, wide)
        if len(bars) > max_shapes:  # more lanes than room even at one column: keep the first
            bars = Bars(*(getattr(bars, f)[:max_shapes] for f in _BAR_FIELDS), bars.pixel_ns)
        pixel = max(self.max_end, 1) / self.columns
        return Bars(*(getattr(bars, f) for f in _BAR_FIELDS), max(pixel, 1.0)), singles


_BAR_FIELDS = ("start", "end", "lane", "count", "busy", "code", "uniform", "row")


def _mark(cols: dict, width: int, ev: dict) -> None:
    """Add events narrower than ``width`` to the column each starts in (in place)."""
    if len(ev["start"]) == 0:
        return
    n_cols = cols["count"].shape[1]
    flat = _flat_columns(cols) if LOOPS is not None and width & (width - 1) == 0 else None
    if flat is not None:  # one pass without the GIL
        events = tuple(np.ascontiguousarray(ev[k], np.int64) for k in _EVENT)
        LOOPS.mark_columns(width.bit_length() - 1, n_cols, events, flat)
        return
    _mark_numpy(cols, width, ev)


def _flat_columns(cols: dict) -> tuple | None:
    """The column arrays in ``mark_columns``' order as flat views, or ``None`` if one is not a
    C-contiguous int64 array (a flat copy would take the marks and drop them)."""
    arrays = [cols[f] for f in (*_FIELDS, *_REP)]
    if not all(a.flags.c_contiguous and a.dtype == np.int64 for a in arrays):
        return None
    return tuple(a.reshape(-1) for a in arrays)


def _mark_numpy(cols: dict, width: int, ev: dict) -> None:
    """:func:`_mark` in NumPy (the specification of the compiled loop)."""
    n_cols = cols["count"].shape[1]
    start, dur, code = ev["start"], ev["dur"], ev["code"]
    # an event belongs to the column it starts in; that column's latest end reaches its end
    # (the width is a power of two: a shift, not a division, on every event of a live batch)
    first = start >> (width.bit_length() - 1) if width & (width - 1) == 0 else start // width
    np.clip(first, 0, n_cols - 1, out=first)  # before the origin: the first column
    first += ev["lane"] * n_cols
    flat = {f: a.reshape(-1) for f, a in cols.items()}
    np.add.at(flat["count"], first, 1)
    np.add.at(flat["busy"], first, dur)
    np.minimum.at(flat["lo"], first, start)
    np.maximum.at(flat["hi"], first, start + dur)
    np.minimum.at(flat["cmin"], first, code)
    np.maximum.at(flat["cmax"], first, code)
    for f, src in zip(_REP, ("key", "start", "dur", "self", "shape")):
        flat[f][first] = ev[src]


def _merged_pairs(cols: dict) -> dict:
    """Columns of twice the width: each pair combined (a new dict; half as many columns)."""
    if cols["count"].shape[1] % 2:  # an odd count: pad with an empty column
        cols = {
            f: np.pad(a, ((0, 0), (0, 1)), constant_values=_FIELDS[f][0] if f in _FIELDS else 0)
            for f, a in cols.items()
        }
    out = {f: op.reduce(_pairs(cols[f]), axis=2) for f, (_, op) in _FIELDS.items()}
    left = _pairs(cols["count"])[:, :, 0] > 0
    for f in _REP:
        pair = _pairs(cols[f])
        out[f] = np.where(left, pair[:, :, 0], pair[:, :, 1])
    return out


def _pairs(arr: np.ndarray) -> np.ndarray:
    return arr.reshape(arr.shape[0], arr.shape[1] // 2, 2)


def _fold(cols: dict, width: int, wide: dict) -> dict:
    """Mark kept events narrower than ``width`` into ``cols``; return the others."""
    narrow = wide["dur"] < width
    if not narrow.any():
        return wide
    _mark(cols, width, {k: v[narrow] for k, v in wide.items()})
    return {k: v[~narrow] for k, v in wide.items()}


def _bars(cols: dict, wide: dict, width: int) -> tuple[Bars, dict]:
    """Runs of occupied columns per lane, plus one bar per kept wide event."""
    lanes, n_cols = cols["count"].shape
    occupied = np.zeros((lanes, n_cols + 1), bool)  # an empty column ends each lane's runs
    occupied[:, :n_cols] = cols["hi"] >= 0
    flat_occ = occupied.reshape(-1)
    starts = np.flatnonzero(flat_occ & ~np.concatenate(([False], flat_occ[:-1])))

    def reduce(field, op):
        fill = _FIELDS[field][0] if field in _FIELDS else 0
        padded = np.full((lanes, n_cols + 1), fill, np.int64)
        padded[:, :n_cols] = cols[field]
        return op.reduceat(padded.reshape(-1), starts) if len(starts) else padded[:0, 0]

    count = reduce("count", np.add)
    cmin, cmax = reduce("cmin", np.minimum), reduce("cmax", np.maximum)
    # with count 1 the run holds one event: the one that starts in its only counted column
    counted = np.where(occupied, np.arange(occupied.size).reshape(occupied.shape), -1)
    counted[:, :n_cols] = np.where(cols["count"] > 0, counted[:, :n_cols], -1)
    rep_at = np.maximum.reduceat(counted.reshape(-1), starts) if len(starts) else starts
    lone = np.flatnonzero(count == 1)
    lone_col = rep_at[lone] - (rep_at[lone] // (n_cols + 1))  # index into the unpadded grid
    singles = {
        "key": np.concatenate([wide["key"], cols["rep_key"].reshape(-1)[lone_col]]),
        "start": np.concatenate([wide["start"], cols["rep_start"].reshape(-1)[lone_col]]),
        "dur": np.concatenate([wide["dur"], cols["rep_dur"].reshape(-1)[lone_col]]),
        "self": np.concatenate([wide["self"], cols["rep_self"].reshape(-1)[lone_col]]),
        "shape": np.concatenate([wide["shape"], cols["rep_shape"].reshape(-1)[lone_col]]),
    }
    row = np.full(len(starts), -1, np.int64)
    row[lone] = len(wide["key"]) + np.arange(len(lone))
    n_wide = len(wide["key"])
    bars = Bars(
        start=np.concatenate([wide["start"], reduce("lo", np.minimum)]),
        end=np.concatenate([wide["start"] + wide["dur"], reduce("hi", np.maximum)]),
        lane=np.concatenate([wide["lane"], starts // (n_cols + 1)]),
        count=np.concatenate([np.ones(n_wide, np.int64), count]),
        busy=np.concatenate([wide["dur"], reduce("busy", np.add)]),
        code=np.concatenate([wide["code"], cmin]),
        uniform=np.concatenate([np.ones(n_wide, bool), cmin == cmax]),
        row=np.concatenate([np.arange(n_wide, dtype=np.int64), row]),
        pixel_ns=float(width),
    )
    return bars, singles
