"""What the live dashboard shows, kept up to date from the new events only.

While a cell runs, the dashboard feeds :class:`LiveState` the batches of
``run.events_since(cursor)``; its live report reads the table rows from here, and once a run is
too large to send every event, the browser gets the binned flame chart's bars
(``state.flame.bars``). Either costs O(new events) plus O(rows or bars), not O(all events), so
refreshes stay cheap for a run of millions of events. Rows have the format of
:func:`~everyo_lab.views.table_rows`, and :meth:`LiveState.flame_figure` draws the binned chart
as :func:`~everyo_lab.views.flame_figure` would. The final refresh uses the exact views on the
whole snapshot.

Differences from the exact views, by design: the flame chart bins time into ``columns`` bins
over the whole run (no zoom window), and live table rows have no median, standard deviation,
FLOPs, bytes, memory or device columns. Their calls, total, self, min and max come from the
exact summary's own kernel (:class:`everyo.profiler.aggregates.Aggregates`), fed in batches.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from everyo.profiler.aggregates import Aggregates
from everyo_lab.views._batch import band_offsets, thread_name
from everyo_lab.views.colors import color_key, theme_colors
from everyo_lab.views.flame_traces import (
    event_traces,
    flame_layout,
    merged_traces,
    one_legend_entry_per_key,
)
from everyo_lab.views.live_flame import LiveFlame
from everyo_lab.views.table import check_group_by, finish_rows

__all__ = ["LiveState", "ThreadNumbers"]


class ThreadNumbers:
    """Thread id -> small index, in order of first appearance (what the wire format and the
    flame chart's lanes number threads by)."""

    def __init__(self):
        self.ids: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def index(self, tid) -> np.ndarray:
        """Each row's index (threads seen for the first time numbered in row order)."""
        tid = np.asarray(tid, np.int64)
        if len(tid) == 0:
            return np.zeros(0, np.int64)
        if tid[0] == tid[-1] and (tid == tid[0]).all():  # the usual batch: one thread, no sort
            return np.full(len(tid), self.ids.setdefault(int(tid[0]), len(self.ids)), np.int64)
        uniq, first, inverse = np.unique(tid, return_index=True, return_inverse=True)
        for t in uniq[np.argsort(first, kind="stable")].tolist():
            self.ids.setdefault(t, len(self.ids))
        return np.array([self.ids[t] for t in uniq.tolist()], np.int64)[inverse]


class LiveState:
    """Incremental flame chart and summary table of a growing run.

    Parameters
    ----------
    columns
        Time bins per lane of the flame chart (its width in pixels).
    threads
        The :class:`ThreadNumbers` of the session this state
        belongs to (the one numbering of its threads); a new one when not given.

    Examples
    --------
    >>> state, cursor = LiveState(), 0  # doctest: +SKIP
    >>> batch, cursor = run.events_since(cursor)  # doctest: +SKIP
    >>> state.feed(batch)  # doctest: +SKIP
    >>> fig = state.flame_figure(max_shapes=4000)  # doctest: +SKIP
    """

    def __init__(self, *, columns: int = 1600, threads: ThreadNumbers | None = None):
        self.table = Aggregates()  # the summary table's sums
        self.flame = LiveFlame(columns)
        self.keys: list = []
        self.shape_table: list = []
        self.thread_names: dict = {}
        self._threads = threads if threads is not None else ThreadNumbers()
        self._lane_table = np.full((0, 0), -1, np.int64)  # [thread index, depth] -> lane
        self._lane_thread: list[int] = []
        self._lane_depth: list[int] = []
        self._colors: dict[str, int] = {}  # colour key -> code, as views' color_codes numbers
        self._key_code = np.zeros(0, np.int64)
        self.last_fed = None  # the batch fed last, and its rows' self times
        self.last_self_ns = np.zeros(0, np.int64)

    def feed(self, batch) -> None:
        """Add one ``EventBatch`` of ``run.events_since`` (rows in the order recorded)."""
        self.keys = list(batch.keys)
        self.shape_table = list(getattr(batch, "shape_table", None) or [])
        self.thread_names.update(getattr(batch, "thread_names", None) or {})
        n = len(batch)
        self.last_fed = batch
        if n == 0:
            self.last_self_ns = np.zeros(0, np.int64)
            return
        self._new_keys()
        start = np.asarray(batch.start_ns, np.int64)
        dur = np.asarray(batch.dur_ns, np.int64)
        key = np.asarray(batch.key, np.int64)
        depth = np.asarray(batch.depth, np.int64)
        thread = self._threads.index(batch.tid)
        parent = np.asarray(batch.parent, np.int64)
        offset = np.where(parent >= 0, parent - int(batch.row[0]), -1)
        sid = getattr(batch, "shape_id", None)
        shape = None if sid is None else np.asarray(sid, np.int64)
        own = self.table.feed(dur, key, thread, depth, offset, shape)
        self.last_self_ns = own  # each row's self time, final when it is read (wire.py sends it)
        events = {
            "start": start,
            "dur": dur,
            "lane": self._lane_index(thread, depth),
            "code": self._key_code[key],
            "key": key,
            "self": own,
            "shape": np.full(n, -1, np.int64) if shape is None else shape,
        }
        self.flame.feed(events)

    @property
    def events(self) -> int:
        """Events fed so far."""
        return self.flame.events

    @property
    def threads(self) -> dict[int, int]:
        """Thread id -> small index, in order of first appearance."""
        return dict(self._threads.ids)

    def lane_thread_depth(self) -> tuple[np.ndarray, np.ndarray]:
        """Each internal lane's thread index and depth (what ``flame.bars()`` lanes mean)."""
        return np.array(self._lane_thread, np.int64), np.array(self._lane_depth, np.int64)

    # -- views ---------------------------------------------------------------------------------
    def flame_figure(self, *, max_shapes: int = 20000, theme: str = "light") -> dict:
        """The flame chart as :func:`~everyo_lab.views.flame_figure` draws it by pixel alone
        (``by_call_path=False``: the merge by call path needs the events, which this state
        does not keep), whole run."""
        colors = theme_colors(theme)
        if self.events == 0:
            return {"data": [], "layout": flame_layout(colors, None, [], 1, message="no events")}
        bars, singles = self.flame.bars(max_shapes)
        display, bands = self._display_lanes()
        bars = dataclasses.replace(bars, lane=display[bars.lane])
        keys = list(self._colors)
        data = event_traces(_Rows(singles, self), bars, keys) + merged_traces(bars, keys)
        one_legend_entry_per_key(data)
        n_lanes = int(bars.lane.max()) + 1 if len(bars) else 1
        layout = flame_layout(colors, None, bands, n_lanes)
        layout["meta"] = {
            "events": self.events,
            "bars": len(bars),
            "merged_events": int(bars.count[bars.count > 1].sum()),
            "live": True,
        }
        return {"data": data, "layout": layout}

    def table_rows(
        self,
        *,
        group_by: str = "name",
        sort_by: str = "total_ms",
        descending: bool = True,
        top: int | None = None,
        wall_ns: int = 0,
    ) -> list[dict]:
        """Rows as :func:`~everyo_lab.views.table_rows` gives them, from the events fed so far.

        ``median_ms`` and ``std_ms`` are ``None`` (they sort last); ``wall_ns`` is the run's
        duration so far, for ``pct`` and the share bars.
        """
        check_group_by(group_by)
        groups = self.table.groups(self.keys, group_by)
        rows = groups.rows(self.keys, self.shape_table, wall_ns)
        return finish_rows(rows, sort_by=sort_by, descending=descending, top=top)

    # -- bookkeeping ---------------------------------------------------------------------------
    def _new_keys(self) -> None:
        codes = [
            self._colors.setdefault(color_key(kind, name), len(self._colors))
            for kind, name, *_ in self.keys[len(self._key_code) :]
        ]
        self._key_code = np.concatenate([self._key_code, np.array(codes, np.int64)])

    def _lane_index(self, thread: np.ndarray, depth: np.ndarray) -> np.ndarray:
        rows, cols = int(thread.max()) + 1, int(depth.max()) + 1
        table = self._lane_table
        if rows > table.shape[0] or cols > table.shape[1]:  # grow the (thread, depth) lookup
            grown = np.full((max(rows, table.shape[0]), max(cols, table.shape[1])), -1, np.int64)
            grown[: table.shape[0], : table.shape[1]] = table
            table = self._lane_table = grown
        lane = table[thread, depth]
        if (lane < 0).any():  # a (thread, depth) seen for the first time: number it
            for packed in np.unique(thread[lane < 0] * 65536 + depth[lane < 0]).tolist():
                t, d = divmod(packed, 65536)
                table[t, d] = len(self._lane_thread)
                self._lane_thread.append(t)
                self._lane_depth.append(d)
            lane = table[thread, depth]
        return lane

    def _display_lanes(self) -> tuple[np.ndarray, list[tuple[int, str]]]:
        """Each internal lane's row on the y axis, and the thread bands (as views' ``lanes``)."""
        depth = np.array(self._lane_depth, np.int64)
        thread = np.array(self._lane_thread, np.int64)
        tids = list(self._threads.ids)  # in order of first appearance
        if len(tids) == 1:
            return depth, [(0, thread_name(self.thread_names, tids[0]))]
        max_depth = np.zeros(len(tids), np.int64)
        np.maximum.at(max_depth, thread, depth)
        offsets = band_offsets(max_depth)
        bands = [(int(offsets[i]), thread_name(self.thread_names, t)) for i, t in enumerate(tids)]
        return depth + offsets[thread], bands


class _Rows:
    """The lone events of a live flame chart, shaped like the batch its hover reads."""

    flops = bytes = mem_bytes = device_ns = None  # inclusive sums: the final chart has them

    def __init__(self, singles: dict, state: LiveState):
        keys = state.keys
        table = np.empty(len(keys), dtype=object)
        table[:] = [k[1] for k in keys]
        paths = np.empty(len(keys), dtype=object)
        paths[:] = [k[2] for k in keys]
        key = singles["key"]
        self.start_ns = singles["start"]
        self.dur_ns = singles["dur"]
        self.self_ns = singles["self"]
        self.name = table[key] if len(key) else np.empty(0, dtype=object)
        self.path = paths[key] if len(key) else np.empty(0, dtype=object)
        self.shapes = None
        if state.table.has_shapes:
            lookup = state.shape_table + [""]  # id -1 (no tensors) reads as ""
            self.shapes = [lookup[s] for s in singles["shape"].tolist()]
