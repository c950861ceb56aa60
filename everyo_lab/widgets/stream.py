"""``EventStream``: what the browser holds of one run, and the messages that bring it up to date.

While a run is small enough (at most :data:`~everyo_lab.widgets.wire.RAW_LIMIT` events) the
browser holds every event, sent once as they are recorded (``events`` messages), and does level
of detail, zoom and pan itself. Beyond that the kernel sends level-of-detail bars instead
(``bars`` messages, at most a few thousand while live and 20,000 at the end) and answers zoom
windows the bars are too coarse for (:meth:`EventStream.detail`). See :mod:`.wire`.

A live refresh that brings more than a quarter of ``raw_limit`` new events at once (a loop
recording some 150,000 events a second brings 75,000 to the first one) sends bars from then on:
such a run outgrows the limit within a few refreshes, and the browser would decode and store
events it drops half a second later. If the finished run fits in ``raw_limit`` after all, the
final refresh sends every event, so the browser ends up holding the same as for a slower run.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from everyo.profiler.step_stats import StepStats
from everyo_lab.views._batch import key_color_codes
from everyo_lab.views.lod import merge_bars
from everyo_lab.widgets.wire import MIXED, RAW_LIMIT, Encoded, encode_bars, encode_events

__all__ = ["EventStream", "LIVE_BARS", "FINAL_BARS"]

LIVE_BARS = 4000  # bars per live refresh once a run is past RAW_LIMIT
FINAL_BARS = 20000  # bars of a final or zoomed view


class EventStream:
    """Tracks what the browser holds of ``run``; each method returns the messages to send."""

    def __init__(self, run, *, raw_limit: int = RAW_LIMIT):
        self.run = run
        self.raw_limit = raw_limit
        self.live_raw_batch = raw_limit // 4  # more new events in one live refresh: bars
        self.cursor = 0  # rows of the run the stream has read
        self.sent = 0  # raw events the browser holds
        self.keys_sent = 0
        self.threads: dict[int, int] = {}  # thread id -> small index, by first appearance
        self.names_sent = 0
        self.steps = StepStats()  # the steps so far (ns from the run start), summary kept exact
        self._marks = False  # True once the steps come from profiler.step() marks
        self.first_start_ns: int | None = None  # where step 0 starts
        self.steps_sent = 0
        self.raw = True  # False once the run outgrew raw_limit: the browser holds bars
        self.bytes_sent = 0

    # -- reading the run -------------------------------------------------------------------
    def read(self):
        """The rows recorded since the last read (an ``EventBatch``); advances the cursor."""
        batch, self.cursor = self.run.events_since(self.cursor)
        self._note_steps(batch)
        return batch

    @property
    def step_ends_ns(self) -> np.ndarray:
        """The ends of the steps so far (ns from the run start), in time order."""
        return self.steps.ends

    def _note_steps(self, batch) -> None:
        """Bring the steps up to date (O(new rows and steps): a live refresh must not cost more
        as the run grows, see :mod:`everyo.profiler.step_stats`)."""
        if len(batch):
            first = int(np.min(batch.start_ns))
            if self.first_start_ns is None or first < self.first_start_ns:
                self.first_start_ns = first
        first = self.first_start_ns or 0
        marks = getattr(self.run, "step_ns", None)
        if marks:  # explicit profiler.step() marks win over optimizer steps
            if not self._marks:  # they replace the optimizer steps held so far
                self._marks, self.steps, self.steps_sent = True, StepStats(), 0
            self.steps.add_ends(marks[len(self.steps) :], first)
            return
        ends = ()
        if len(batch):
            kinds = np.array([k[0] == "optimizer" for k in batch.keys] or [False], bool)
            opt = kinds[np.asarray(batch.key, np.int64)]
            if opt.any():
                ends = batch.start_ns[opt] + batch.dur_ns[opt]
        self.steps.add_ends(ends, first)  # also where the first step starts, if that moved

    def _new_steps(self) -> tuple[int, np.ndarray]:
        """``(index of the first, ms)`` of the step ends the browser lacks; marks them sent."""
        first = self.steps_sent
        self.steps_sent = len(self.step_ends_ns)
        return first, self.step_ends_ns[first:] / 1e6

    def thread_index(self, tid: np.ndarray) -> np.ndarray:
        """Each row's small thread index (new threads numbered in order of appearance)."""
        tid = np.asarray(tid, np.int64)
        if len(tid) == 0:
            return np.zeros(0, np.int64)
        uniq, first, inverse = np.unique(tid, return_index=True, return_inverse=True)
        for t in uniq[np.argsort(first, kind="stable")].tolist():
            self.threads.setdefault(t, len(self.threads))
        return np.array([self.threads[t] for t in uniq.tolist()], np.int64)[inverse]

    def _thread_names(self, batch, whole: bool) -> dict:
        names = getattr(batch, "thread_names", None) or {}
        items = list(self.threads.items())
        new = items if whole else items[self.names_sent :]
        self.names_sent = len(items)
        return {i: names.get(t, f"thread {t}") for t, i in new}

    # -- messages --------------------------------------------------------------------------
    def update(self, batch, *, state=None, final: bool = False) -> list[Encoded]:
        """Messages for ``batch`` (what :meth:`read` returned).

        Raw events while the browser's total stays within ``raw_limit``; after that, bars: of
        ``state`` (a :class:`~everyo_lab.views.live_state.LiveState` fed every event) while
        live, of the whole snapshot when ``final``.
        """
        if self.raw and state is not None and not final and len(batch) > self.live_raw_batch:
            self.raw = False  # recording fast: see the module
        if not self.raw and final and self.run.num_events <= self.raw_limit:
            return [self._all_events(final=True)]  # it fits after all: every event, once more
        rows = _rows(batch, np.asarray(batch.row) >= self.sent) if self.raw else batch
        if self.raw and self.sent + len(rows) <= self.raw_limit:
            if len(rows) == 0 and self.steps_sent == len(self.step_ends_ns) and not final:
                return []
            return [self._events(rows, reset=self.sent == 0, final=final)]
        self.raw = False
        if final:
            return [self._snapshot_bars()]
        if state is None:
            return []
        return [self._live_bars(state)]

    def resend(self) -> list[Encoded]:
        """Everything again, for a browser view that holds nothing (page reload, new view)."""
        self.steps_sent = 0
        if self.raw:
            done = self.run.status != "running" and self.cursor >= self.run.num_events
            return [self._all_events(final=done)]
        return [self._snapshot_bars()]

    def _all_events(self, *, final: bool) -> Encoded:
        """Every event of the run from the start (the browser resets what it held)."""
        self.raw = True
        self.sent = self.keys_sent = self.names_sent = self.steps_sent = 0
        return self._events(self.run.snapshot(), reset=True, final=final)

    def detail(self, x0_ms: float, x1_ms: float, width_px: int) -> Encoded:
        """Bars at full detail for a zoom window (the answer to a ``detail`` request)."""
        batch = self.run.snapshot()
        return self._merged(batch, (x0_ms, x1_ms), int(max(1, min(width_px, 8000))))

    # -- helpers ---------------------------------------------------------------------------
    def _events(self, batch, *, reset: bool, final: bool) -> Encoded:
        threads = self.thread_index(batch.tid)
        step0, new_steps = self._new_steps()
        msg = encode_events(
            self.run.id,
            batch,
            threads,
            reset=reset,
            key0=self.keys_sent,
            threads=self._thread_names(batch, whole=reset),
            step_ends_ms=new_steps,
            step0=step0,
            complete=final,
        )
        if len(batch):
            self.sent = int(batch.row[-1]) + 1
        self.keys_sent = len(batch.keys)
        self.bytes_sent += msg.nbytes
        return msg

    def _bars_steps(self, window) -> dict:
        """A detail answer adds no steps; whole-run bars bring the browser's up to date."""
        if window is not None:
            return {"step_ends_ms": (), "step0": len(self.step_ends_ns)}
        step0, ends = self._new_steps()
        return {"step_ends_ms": ends, "step0": step0}

    def _snapshot_bars(self) -> Encoded:
        return self._merged(self.run.snapshot(), None, 1600)

    def _merged(self, batch, window, width_px: int) -> Encoded:
        thread = self.thread_index(batch.tid)
        depth = np.asarray(batch.depth, np.int64)
        span = int(depth.max()) + 1 if len(depth) else 1
        lane = thread * span + depth
        key = np.asarray(batch.key, np.int64)
        x_range = None if window is None else (window[0] * 1e6, window[1] * 1e6)
        bars = merge_bars(
            batch.start_ns,
            batch.dur_ns,
            lane,
            key_color_codes(batch.keys)[0][key],
            x_range_ns=x_range,
            width_px=width_px,
            max_shapes=FINAL_BARS,
        )
        first_key = key[bars.row] if len(bars) else bars.row
        bar_key = np.where(bars.uniform, first_key, MIXED)
        dom_key = np.where(bars.uniform, first_key, _first_key_of_code(batch.keys)[bars.dom])
        msg = encode_bars(
            self.run.id,
            bars,
            bars.lane % span,
            bars.lane // span,
            bar_key,
            batch.keys,
            dom=dom_key,
            window=window,
            threads=self._thread_names(batch, whole=True),
            **self._bars_steps(window),
        )
        self.bytes_sent += msg.nbytes
        return msg

    def _live_bars(self, state) -> Encoded:
        bars, singles = state.flame.bars(LIVE_BARS)
        lane_thread, lane_depth = state.lane_thread_depth()
        code_key = _first_key_of_code(state.keys)  # LiveState numbers colours the same way
        key = np.where(bars.uniform, code_key[bars.code], MIXED)
        single = bars.count == 1
        if single.any():  # a lone event: its own key (same colour, but its name for the hover)
            key[single] = singles["key"][bars.row[single]]
        # LiveState numbers threads by first appearance, as this stream does
        msg = encode_bars(
            self.run.id,
            bars,
            lane_depth[bars.lane],
            lane_thread[bars.lane],
            key,
            state.keys,
            window=None,
            threads={i: state.thread_names.get(t, f"thread {t}") for t, i in state.threads.items()},
            **self._bars_steps(None),
        )
        self.bytes_sent += msg.nbytes
        return msg


def _first_key_of_code(keys) -> np.ndarray:
    """Per colour code (as :func:`.key_color_codes` numbers them), the first key with it."""
    codes = key_color_codes(keys)[0]
    first = np.full(int(codes.max(initial=0)) + 1, MIXED, np.int64)
    used, at = np.unique(codes, return_index=True)
    first[used] = at
    return first


def _rows(batch, keep: np.ndarray):
    """The rows of ``batch`` where ``keep`` holds, with what :func:`.wire.encode_events` reads."""
    if keep.all():
        return batch
    return SimpleNamespace(
        start_ns=batch.start_ns[keep],
        dur_ns=batch.dur_ns[keep],
        depth=batch.depth[keep],
        tid=batch.tid[keep],
        key=batch.key[keep],
        row=batch.row[keep],
        keys=batch.keys,
        thread_names=getattr(batch, "thread_names", {}),
    )
