"""``profile_memory=True``: bytes allocated per event, live tensor bytes over time, peaks.

Host memory is accounted by tensor bytes, which is cheap: an event's allocation is the bytes of
the arrays it returned, and each output array gets a weak reference whose callback queues it
when it is freed; its bytes are subtracted before the next output is counted, so the live total
(and its peak) follows the tensors made under the profiler. (The callback is a deque's ``append``:
no Python code runs when an array is freed, so no signal handler runs there either, whose
exception CPython would print and drop, as it does in a ``weakref.finalize``.)
On CUDA the CuPy memory pool's used bytes are sampled as a second counter (no synchronisation).
"""

from __future__ import annotations

import collections
import sys
import threading
import weakref

import numpy as np


def _arrays(out):
    """The arrays behind an op or module output (Tensor.data, a bare array, tuples of those)."""
    if isinstance(out, (tuple, list)):
        for o in out:
            yield from _arrays(o)
        return
    if type(out).__module__.partition(".")[0] in ("numpy", "cupy"):
        yield out  # a bare array (its own .data is a buffer, not the array)
        return
    data = getattr(out, "data", None)
    if data is not None and hasattr(data, "nbytes") and hasattr(data, "shape"):
        yield data


def _is_cuda(arr) -> bool:
    return type(arr).__module__.startswith("cupy")


class MemoryTracker:
    """Counts output bytes per event and keeps the live-bytes counter track."""

    def __init__(self):
        self.live = 0
        self.peak = 0
        self.allocated = 0
        self._seen: set[int] = set()
        self._refs: dict = {}  # id(weak reference) -> (it, the array's id, its bytes)
        self._dead: collections.deque = collections.deque()  # references of arrays freed
        self._lock = threading.Lock()
        self._t: list[int] = []
        self._v: list[int] = []
        self._pool = self._cupy_pool()
        self._pool_t: list[int] = []
        self._pool_v: list[int] = []

    @staticmethod
    def _cupy_pool():
        cupy = sys.modules.get("cupy")  # only if the program already uses CuPy
        if cupy is None:
            return None
        try:
            return cupy.get_default_memory_pool()
        except Exception:
            return None

    def on_output(self, out, t_ns: int) -> int:
        """Account the arrays in ``out`` (once each); return the bytes newly allocated."""
        new = 0
        if self._dead:  # (before ids are looked up: a freed array's id may be reused)
            self._settle()
        for arr in _arrays(out):
            key = id(arr)
            if key in self._seen:  # a module returning its child's output allocates nothing
                continue
            nb = int(arr.nbytes)
            try:
                ref = weakref.ref(arr, self._dead.append)
            except TypeError:  # not weak-referenceable: count it, never free it
                pass
            else:  # (by the reference's id: an array's hash may raise)
                self._refs[id(ref)] = (ref, key, nb)
            self._seen.add(key)
            new += nb
            if self._pool is not None and _is_cuda(arr):
                self._pool_t.append(t_ns)
                self._pool_v.append(int(self._pool.used_bytes()))
        if new:
            with self._lock:
                self.live += new
                self.allocated += new
                self.peak = max(self.peak, self.live)
                self._t.append(t_ns)
                self._v.append(self.live)
        return new

    def _settle(self) -> None:
        """Subtract the bytes of the arrays freed since the last output."""
        dead, refs = self._dead, self._refs
        with self._lock:
            while dead:
                _, key, nb = refs.pop(id(dead.popleft()), (None, None, 0))
                self.live -= nb
                self._seen.discard(key)

    def counters(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Counter tracks: ``{"host tensor bytes": (t_ns, bytes), "cuda pool bytes": ...}``."""
        out = {"host tensor bytes": (np.array(self._t, np.int64), np.array(self._v, np.int64))}
        if self._pool_t:
            out["cuda pool bytes"] = (
                np.array(self._pool_t, np.int64),
                np.array(self._pool_v, np.int64),
            )
        return out

    def peaks(self) -> dict[str, int]:
        peaks = {"host_peak_bytes": self.peak, "host_allocated_bytes": self.allocated}
        if self._pool is not None:
            peaks["cuda_pool_total_bytes"] = int(self._pool.total_bytes())
            peaks["cuda_pool_peak_used_bytes"] = max(self._pool_v, default=0)
        return peaks
