"""``LiveWhy``: the hot lines of one selection kept up to date while the run records.

:func:`everyo.profiler.hot_lines` reads the whole run each time (every event, every sample);
a live panel refreshed a few times a second would then cost more the longer the cell runs.
This one is fed what the dashboard's one live reader (:class:`~everyo_lab.views.live_session.
LiveSession`) read at each refresh, the new events and the new samples, and keeps running
sums: per thread, the selected events' time as a union of intervals and the samples in time
order with a flag for those already counted; per stack, the weight of the counted samples. A
new sample is counted when it falls in the union; a new interval counts the samples it covers
that were not counted yet (samples reach the store in batches, after the events that hold them
may have). A refresh then costs the new events and samples, the samples the new intervals
cover, and the distinct stacks of the answer; a selection made mid-run reads the session's
history once (:meth:`LiveWhy.following`).

It counts what ``hot_lines(run, event)`` counts (a sample belongs to an event when it falls in
its span on its thread: the innermost open event is it or one of its descendants); the tests
check both give the same lines.
"""

from __future__ import annotations

import numpy as np

from everyo.profiler.sampling.sampled_lines import HotLines, summarize_stacks
from everyo_lab.views.why.why_panel import PANEL_LINES, Selection, frame_bars


class _Column:
    """A growable 1-d array (amortised appends, truncation for tail merges)."""

    def __init__(self, dtype):
        self.a = np.empty(64, dtype)
        self.n = 0

    def view(self) -> np.ndarray:
        return self.a[: self.n]

    def put(self, at: int, values: np.ndarray) -> None:
        """Keep ``[0, at)``, then ``values``."""
        need = at + len(values)
        if need > len(self.a):
            grown = np.empty(max(need, 2 * len(self.a)), self.a.dtype)
            grown[:at] = self.a[:at]
            self.a = grown
        self.a[at:need] = values
        self.n = need


class _Thread:
    """One thread's samples (by time) and the selected events' union of intervals."""

    def __init__(self):
        self.t, self.stack = _Column(np.int64), _Column(np.int64)
        self.w, self.hit = _Column(np.int64), _Column(bool)
        self.lo, self.hi = _Column(np.int64), _Column(np.int64)

    def covered(self, t: np.ndarray) -> np.ndarray:
        lo, hi = self.lo.view(), self.hi.view()
        i = np.searchsorted(lo, t, side="right") - 1
        return (i >= 0) & (t < hi[np.maximum(i, 0)]) if len(lo) else np.zeros(len(t), bool)

    def add_samples(self, t, stack, w, hit) -> None:
        """Insert samples sorted by time (a chunk older than the newest held: merged in)."""
        cols = (self.t, self.stack, self.w, self.hit)
        at = int(np.searchsorted(self.t.view(), t[0], side="right"))
        if at < self.t.n:
            merged = [np.concatenate([c.view()[at:], v]) for c, v in zip(cols, (t, stack, w, hit))]
            order = np.argsort(merged[0], kind="stable")
            t, stack, w, hit = (m[order] for m in merged)
        for c, v in zip(cols, (t, stack, w, hit)):
            c.put(at, v)

    def add_intervals(self, lo: np.ndarray, hi: np.ndarray) -> tuple[int, list]:
        """Merge ``[lo, hi)`` into the union; the change of covered ns and the new segments."""
        at = int(np.searchsorted(self.hi.view(), lo.min(), side="right"))
        los = np.concatenate([self.lo.view()[at:], lo])
        his = np.concatenate([self.hi.view()[at:], hi])
        removed = int((his[: self.lo.n - at] - los[: self.lo.n - at]).sum())
        order = np.argsort(los, kind="stable")
        los, his = los[order], his[order]
        reach = np.maximum.accumulate(his)
        starts = np.r_[True, los[1:] > reach[:-1]]  # a segment starts after everything before
        seg_lo = los[starts]
        seg_hi = np.maximum.reduceat(his, np.flatnonzero(starts))
        self.lo.put(at, seg_lo)
        self.hi.put(at, seg_hi)
        return int((seg_hi - seg_lo).sum()) - removed, list(zip(seg_lo.tolist(), seg_hi.tolist()))


class LiveWhy:
    """Running hot lines of ``sel`` in ``run`` (see the module doc); :meth:`feed` adds what a
    read found, :meth:`hot_lines` answers with what has been fed."""

    def __init__(self, run, sel: Selection):
        self.run, self.sel = run, sel
        self.samples = run.samples
        self.mode = run.options.get("sample_mode") or "wall"
        self._threads: dict[int, _Thread] = {}
        self._weight = np.zeros(0, np.int64)  # per stack id: the counted samples' weight
        self._count = 0
        self._sum_w2 = 0.0
        self.calls = 0
        self.event_ns = 0
        if sel.is_event:
            self._intervals(np.array([sel.tid]), np.array([sel.start_ns]), np.array([sel.end_ns]))
            self.calls = 1

    @classmethod
    def following(cls, session, sel: Selection) -> LiveWhy:
        """A ``LiveWhy`` of ``sel`` that has seen what ``session`` read so far (its history,
        read once): feed it each later read."""
        live = cls(session.run, sel)
        live.feed(*session.history())
        return live

    def feed(self, batch, samples: dict | None) -> None:
        """Add the events (an ``EventBatch``) and samples (sample columns; ``None`` or empty:
        none) of one read; each must be fed once, in the order read."""
        if not self.sel.is_event and len(batch):
            mask = self.sel.rows(batch)
            if mask.any():
                self.calls += int(mask.sum())
                start = batch.start_ns[mask]
                self._intervals(batch.tid[mask], start, start + batch.dur_ns[mask])
        if samples is not None and len(samples["t_ns"]):
            cols = samples
            weight = cols["wall_ns" if self.mode == "wall" else "cpu_ns"]
            for tid in np.unique(cols["tid"]).tolist():
                mine = np.flatnonzero(cols["tid"] == tid)
                mine = mine[np.argsort(cols["t_ns"][mine], kind="stable")]
                t, stack = cols["t_ns"][mine], cols["stack"][mine].astype(np.int64)
                thread = self._thread(tid)
                hit = thread.covered(t)
                self._count_samples(stack[hit], weight[mine][hit])
                thread.add_samples(t, stack, weight[mine], hit)

    def _thread(self, tid: int) -> _Thread:
        thread = self._threads.get(tid)
        if thread is None:
            thread = self._threads[tid] = _Thread()
        return thread

    def _intervals(self, tid: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        for t in np.unique(tid).tolist():
            mine = tid == t
            thread = self._thread(t)
            grown, segments = thread.add_intervals(lo[mine], hi[mine])
            self.event_ns += grown
            times, flags = thread.t.view(), thread.hit.view()
            for s, e in segments:  # samples they cover, not counted yet
                a, b = np.searchsorted(times, [s, e], side="left")
                new = a + np.flatnonzero(~flags[a:b])
                if len(new):
                    flags[new] = True
                    self._count_samples(thread.stack.view()[new], thread.w.view()[new])

    def _count_samples(self, stack: np.ndarray, w: np.ndarray) -> None:
        if not len(stack):
            return
        need = int(stack.max()) + 1
        if need > len(self._weight):
            self._weight = np.concatenate(
                [
                    self._weight,
                    np.zeros(max(need, 2 * len(self._weight)) - len(self._weight), np.int64),
                ]
            )
        np.add.at(self._weight, stack, w)
        self._count += len(stack)
        self._sum_w2 += float((w.astype(np.float64) ** 2).sum())

    def hot_lines(self, hide: str | None = "everyo") -> HotLines:
        """The hot lines of what was read so far, as :func:`everyo.profiler.hot_lines` gives
        them."""
        ids = np.flatnonzero(self._weight)
        weight = self._weight[ids]
        total = int(weight.sum())
        out = HotLines(
            self.sel.label,
            self.calls,
            self.event_ns,
            self._count,
            total,
            self.mode,
            self.run.options.get("sample_ms"),
            hide,
        )
        if total > 0:
            out.effective_samples = float(total) ** 2 / self._sum_w2 if self._sum_w2 else 0.0
            out.tree, out.lines = summarize_stacks(
                self.samples, ids, weight, hide=hide, label=self.sel.label, top=PANEL_LINES
            )
        return out

    def expansion(self, hide: str | None = "everyo") -> dict | None:
        """:func:`frame_bars` of the selected event (``None`` for a row); each sample covers
        the time it is weighed by (in CPU mode, the CPU time before it)."""
        if not self.sel.is_event:
            return None
        thread = self._threads.get(self.sel.tid)
        if thread is None:
            return None
        times = thread.t.view()
        a, b = np.searchsorted(times, [self.sel.start_ns, self.sel.end_ns], side="left")
        span = slice(a, b)
        stack, weight = thread.stack.view()[span], thread.w.view()[span]
        return frame_bars(self.samples, self.sel, times[span], stack, weight, hide)
