"""``LiveSession``: everything the live dashboard knows of one run while it records, in one
owner: the cursors into the run's events and samples, the steps so far, the numbering of its
threads and the running aggregates (:class:`LiveState`, below).

The session is the one live reader: each refresh, :meth:`LiveSession.read` takes the new events
and the new samples once, and every consumer (the running aggregates, the wire stream, the why
panels' :class:`~everyo_lab.views.why.why_live.LiveWhy`) is fed what it read; a consumer that joins
mid-run catches up once from :meth:`LiveSession.history`. The widget keeps no figure of its
own. The browser's lanes, the live flame chart's bars and the report's steps all come from
here (the steps by :func:`~everyo.profiler.analysis.step_stats.step_ends`, the rule the exact
summary applies), so they cannot disagree on a thread's number or a step's end.

``LiveState``: what the live dashboard shows, kept up to date from the new events only.

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
exact summary's own kernel (:class:`everyo.profiler.analysis.aggregates.Aggregates`), fed in
batches.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from everyo.profiler.analysis.aggregates import Aggregates
from everyo.profiler.analysis.step_stats import MARKS, StepStats, step_ends
from everyo_lab.views._batch import band_offsets, thread_name
from everyo_lab.views.colors import color_key, theme_colors
from everyo_lab.views.flame.flame_traces import (
    event_traces,
    flame_layout,
    merged_traces,
    one_legend_entry_per_key,
)
from everyo_lab.views.flame.live_flame import LiveFlame
from everyo_lab.views.report import live_report
from everyo_lab.views.table.table_rows import check_group_by, finish_rows

__all__ = ["LiveSession", "LiveState", "ThreadNumbers"]


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


class LiveSession:
    """One run as a live dashboard follows it.

    :meth:`read` takes the rows recorded since the last read (and the samples, kept as
    :attr:`new_samples`) and brings the steps up to date;
    :meth:`fold` adds them to the running aggregates (while the run records, every row read
    must be folded, so the aggregates never miss or repeat one); :meth:`report` is the live
    report of what was folded.
    """

    def __init__(self, run):
        self.run = run
        self.cursor = 0  # rows of the run read so far
        self.sample_cursor = 0  # samples read so far
        self.new_samples: dict | None = None  # the samples of the last read (None: unsampled)
        self.threads = ThreadNumbers()
        self.steps = StepStats()  # the steps so far (ns from the run start), summary kept exact
        self.first_start_ns: int | None = None  # where step 0 starts
        self.state = None  # the running aggregates, from the first fold on
        self.step_source = ""  # where the steps come from (step_stats.step_ends)

    def read(self):
        """The rows recorded since the last read (an ``EventBatch``); advances the cursors. The
        samples taken since the last read are :attr:`new_samples` (sample columns) until the
        next read."""
        batch, self.cursor = self.run.events_since(self.cursor)
        samples = getattr(self.run, "samples", None)
        if samples is not None:
            self.new_samples, self.sample_cursor = samples.read_since(self.sample_cursor)
        self._note_steps(batch)
        return batch

    def history(self):
        """What the reads so far returned, read again for a consumer that starts mid-run: the
        rows ``[0, cursor)`` (an ``EventBatch``) and the samples ``[0, sample_cursor)`` (``None``
        for a run without samples). A consumer fed these and then every later read has seen
        each row and sample once."""
        batch = self.run.rows(0, self.cursor)
        samples = getattr(self.run, "samples", None)
        if samples is None:
            return batch, None
        cols, _ = samples.read_since(0)
        return batch, {name: col[: self.sample_cursor] for name, col in cols.items()}

    def fold(self, batch):
        """Add ``batch`` (what :meth:`read` returned) to the running aggregates; returns them."""
        if self.state is None:
            self.state = LiveState(threads=self.threads)
        self.state.feed(batch)
        return self.state

    def report(self, **options):
        """The live :class:`~everyo_lab.views.report.Report` of the rows folded so far (the
        options of :func:`~everyo_lab.views.report.live_report`)."""
        state = self.state if self.state is not None else LiveState(threads=self.threads)
        return live_report(
            self.run, state, steps=self.steps, step_source=self.step_source, **options
        )

    def _note_steps(self, batch) -> None:
        """Bring the steps up to date (O(new rows and steps): a live refresh must not cost more
        as the run grows, see :mod:`everyo.profiler.analysis.step_stats`)."""
        if len(batch):
            first = int(np.min(batch.start_ns))
            if self.first_start_ns is None or first < self.first_start_ns:
                self.first_start_ns = first
        first = self.first_start_ns or 0
        marks = getattr(self.run, "step_ns", None)
        if marks and self.step_source != MARKS:  # marks replace the optimizer steps held
            self.steps = StepStats()
        ends, source = step_ends(batch, marks, since=len(self.steps))  # (the new ones only)
        self.step_source = source or self.step_source
        self.steps.add_ends(ends, first)  # also where the first step starts, if that moved
