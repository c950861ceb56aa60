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

from everyo_lab.views._batch import key_color_codes
from everyo_lab.views.flame.lod import merge_bars
from everyo_lab.views.live_session import LiveSession
from everyo_lab.widgets.wire import MIXED, RAW_LIMIT, Encoded, encode_bars, encode_events

__all__ = ["EventStream", "LIVE_BARS", "FINAL_BARS"]

LIVE_BARS = 4000  # bars per live refresh once a run is past RAW_LIMIT
FINAL_BARS = 20000  # bars of a final or zoomed view


class EventStream:
    """Tracks what the browser holds of a run; each method returns the messages to send.

    ``source`` is a :class:`~everyo_lab.views.live_session.LiveSession` (the dashboard's: its
    cursor, steps and thread numbers are the ones this stream sends) or a run (a session of
    its own).
    """

    def __init__(self, source, *, raw_limit: int = RAW_LIMIT):
        self.session = source if isinstance(source, LiveSession) else LiveSession(source)
        self.raw_limit = raw_limit
        self.live_raw_batch = raw_limit // 4  # more new events in one live refresh: bars
        self.sent = 0  # raw events the browser holds
        self.keys_sent = 0
        self.names_sent = 0
        self.steps_sent = 0
        self._steps_of = self.session.steps  # the step list steps_sent counts in
        self.raw = True  # False once the run outgrew raw_limit: the browser holds bars
        self.bytes_sent = 0

    @property
    def run(self):
        return self.session.run

    @run.setter
    def run(self, run) -> None:
        self.session.run = run

    # -- reading the run -------------------------------------------------------------------
    def read(self):
        """The session's next rows (:meth:`LiveSession.read`)."""
        return self.session.read()

    @property
    def steps(self):
        """The session's steps so far."""
        return self.session.steps

    @property
    def step_ends_ns(self) -> np.ndarray:
        """The ends of the steps so far (ns from the run start), in time order."""
        return self.session.steps.ends

    def _new_steps(self) -> tuple[int, np.ndarray]:
        """``(index of the first, ms)`` of the step ends the browser lacks; marks them sent."""
        if self._steps_of is not self.session.steps:  # marks replaced the optimizer steps
            self._steps_of, self.steps_sent = self.session.steps, 0
        first = self.steps_sent
        self.steps_sent = len(self.step_ends_ns)
        return first, self.step_ends_ns[first:] / 1e6

    def thread_index(self, tid: np.ndarray) -> np.ndarray:
        """Each row's thread index, in the session's numbering."""
        return self.session.threads.index(tid)

    def _thread_names(self, batch, whole: bool) -> dict:
        names = getattr(batch, "thread_names", None) or {}
        items = list(self.session.threads.ids.items())
        new = items if whole else items[self.names_sent :]
        self.names_sent = len(items)
        return {i: names.get(t, f"thread {t}") for t, i in new}

    # -- messages --------------------------------------------------------------------------
    def update(self, batch, *, state=None, final: bool = False) -> list[Encoded]:
        """Messages for ``batch`` (what :meth:`read` returned).

        Raw events while the browser's total stays within ``raw_limit``; after that, bars: of
        ``state`` (a :class:`~everyo_lab.views.live_session.LiveState` fed every event) while
        live, of the whole snapshot when ``final``.
        """
        if self.raw and state is not None and not final and len(batch) > self.live_raw_batch:
            self.raw = False  # recording fast: see the module
        if not self.raw and final and self.run.num_events <= self.raw_limit:
            return [self._all_events(final=True)]  # it fits after all: every event, once more
        keep = np.asarray(batch.row) >= self.sent
        rows = _rows(batch, keep) if self.raw else batch
        if self.raw and self.sent + len(rows) <= self.raw_limit:
            if len(rows) == 0 and not self._steps_pending() and not final:
                return []
            own = self._self_ns(batch, state)[keep]
            return [self._events(rows, reset=self.sent == 0, final=final, self_ns=own)]
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
            done = self.run.status != "running" and self.session.cursor >= self.run.num_events
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
    def _self_ns(self, batch, state) -> np.ndarray:
        """Each row's self time, as the kernel has it: the running aggregates' when ``state``
        was fed ``batch`` (children read earlier are held there), else from the rows up to the
        batch's last (every child precedes its parent)."""
        if state is not None and state.last_fed is batch:
            return state.last_self_ns
        if not len(batch):
            return np.zeros(0, np.int64)
        row = np.asarray(batch.row, np.int64)
        if int(row[0]) == 0 and int(row[-1]) == len(batch) - 1:  # from the first row: whole
            return batch.self_ns
        return self.run.rows(0, int(row[-1]) + 1).self_ns[row]

    def _events(self, batch, *, reset: bool, final: bool, self_ns=None) -> Encoded:
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
            self_ns=self._self_ns(batch, None) if self_ns is None else self_ns,
        )
        if len(batch):
            self.sent = int(batch.row[-1]) + 1
        self.keys_sent = len(batch.keys)
        self.bytes_sent += msg.nbytes
        return msg

    def _steps_pending(self) -> bool:
        return self._steps_of is not self.session.steps or self.steps_sent < len(self.step_ends_ns)

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
