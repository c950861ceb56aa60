"""Moving a thread's buffered events into the store, and finding them there again.

Events leave a thread's buffer only once the store holds them: a write that raises (an
interrupt, a ``MemoryError``) leaves them buffered for the next one, and one interrupted after
the store took them drops them from the buffer at the next (the store counts each thread's
events). One write at a time, so that stop's flush of every thread and a thread's own never
hand the store the same events twice.
"""

from __future__ import annotations

import bisect
import threading

import numpy as np

from everyo.profiler.recording.packing import DEPTH_BITS, KEY_BITS, KEY_MASK, SHAPE_SHIFT


class StoreWriter:
    """Writes buffered events (``fields`` each, packed as in :mod:`packing`) into ``store``."""

    def __init__(self, store, fields: tuple, record_shapes: bool, origin_ns: int):
        self.store = store
        self.fields = fields
        self.width = len(fields)
        self.record_shapes = record_shapes
        self.origin_ns = origin_ns  # the run's time origin on the recorder's clock
        self._lock = threading.RLock()

    def write(self, t) -> None:
        """Move thread state ``t``'s buffered events into the store."""
        with self._lock:
            self.settle(t)
            buf, w, done = t.buf, self.width, t.flushed
            n = len(buf) // w
            if n == 0:
                return
            values = buf[: n * w]  # a copy (bytes from the compiled EventBuffer)
            if type(values) is list:
                rows = np.fromiter(values, np.int64, n * w).reshape(n, w)
            else:
                rows = np.frombuffer(values, np.int64, n * w).reshape(n, w)
            meta = {i - done: m for i, m in list(t.meta) if i < done + n}
            first = self.store.append(self._columns(rows, t.index), meta or None, thread=t.index)
            self.settle(t)
            t.blocks.append((done, first, n))

    def settle(self, t) -> None:
        """Drop from ``t``'s buffer the events the store already holds."""
        flushed = self.store.thread_events(t.index)
        k = (flushed - t.flushed) * self.width
        if k <= 0:
            return
        m = 0
        for i, _ in t.meta:
            if i >= flushed:
                break
            m += 1
        buf = t.buf
        # together: no call between them (a signal lands only after a call or a backward jump)
        del t.meta[:m]
        t.flushed = flushed
        del buf[:k]

    def _columns(self, rows: np.ndarray, thread: int) -> dict:
        """The store's columns of buffered events (one row each)."""
        cols = {name: rows[:, i] for i, name in enumerate(self.fields)}
        packed = cols.pop("packed")
        cols["key"] = packed & KEY_MASK
        cols["depth"] = (packed >> KEY_BITS) & ((1 << DEPTH_BITS) - 1)
        if self.record_shapes:
            cols["shape"] = (packed >> SHAPE_SHIFT) - 1
        cols["dur_ns"] = cols.pop("end_ns") - cols["start_ns"]
        cols["start_ns"] = cols["start_ns"] - self.origin_ns
        cols["thread"] = np.full(len(rows), thread, np.int64)
        return cols


def store_rows(idents) -> np.ndarray:
    """The store rows of ``(thread state, index of the event among that thread's)`` pairs, -1
    for an event that never reached the store."""
    firsts: dict = {}
    return np.array([_row_of(t, i, firsts) for t, i in idents], np.int64)


def _row_of(t, index: int, firsts: dict) -> int:
    """Store row of the ``index``-th event a thread recorded (-1 if it never reached the store).

    ``firsts`` caches each thread's block start indices (ascending: blocks are appended in
    order), so each lookup is a bisection rather than a scan of every block.
    """
    starts = firsts.get(id(t))
    if starts is None:
        starts = firsts[id(t)] = [b[0] for b in t.blocks]
    i = bisect.bisect_right(starts, index) - 1
    if i >= 0:
        first_index, first_row, n = t.blocks[i]
        if index < first_index + n:
            return first_row + index - first_index
    return -1
