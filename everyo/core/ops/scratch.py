"""Reusable NumPy buffers for the large arrays the convolution kernels make on every step.

A CNN training step allocates and frees several megabytes of im2col and col2im arrays. glibc
gives freed memory at the top of its heap back to the OS once it passes its trim threshold, so
each step touched fresh pages again: about 2,000 page faults, a third of the step
(benchmarks/RESULTS.md). PyTorch avoids the same with its caching allocator; this is a small one.

A buffer is handed out again only when nothing but the pool refers to it, as its reference count
shows: a buffer that a graph node keeps for backward, or that any view (a gradient, an output)
still uses, is never reused early. Pools are per thread (two threads never race for one buffer)
and bounded: when a new buffer would pass the bound, free buffers of the shapes used least
recently make room (so a change of batch size does not leave the old shapes' memory held).
CuPy arrays are not pooled (CuPy's own memory pool already reuses device memory).
"""

from __future__ import annotations

import sys
import threading

import numpy as np

__all__ = ["empty", "zeros", "clear"]

MAX_BYTES = 128 << 20
"""Bytes one thread's pool may hold (a CNN step of engine_step.py needs 14 MB); beyond it, and
when no free buffer can make room, buffers are plain allocations."""
MIN_BYTES = 256 << 10
"""Smaller arrays come from malloc's heap without page faults: not pooled."""
_PER_KEY = 4


class _Pool(threading.local):
    def __init__(self) -> None:
        self.buffers: dict[tuple, list[np.ndarray]] = {}
        self.nbytes = 0


_pool = _Pool()


def _seen(bufs: list, i: int) -> int:
    """The reference count of ``bufs[i]`` as seen here (the one place that reads it)."""
    b = bufs[i]
    return sys.getrefcount(b)


def _calibrate() -> int | None:
    """What :func:`_seen` reports for a buffer that only its list holds, or None when a held
    buffer reads the same (an interpreter whose counts cannot tell them apart: no pooling).
    Measured, not assumed: interpreters differ in which references they count."""
    bufs = [np.empty(1)]
    free = _seen(bufs, 0)
    held = bufs[0]
    in_use = _seen(bufs, 0)
    del held
    return free if in_use > free else None


_FREE_REFS = _calibrate()


def _take(shape: tuple, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    key = (shape, dtype)
    bufs = _pool.buffers.pop(key, None)
    if bufs is not None:
        _pool.buffers[key] = bufs  # now the most recently used shape
        for i in range(len(bufs)):
            if _seen(bufs, i) == _FREE_REFS:
                return bufs[i]
    b = np.empty(shape, dtype)
    if _FREE_REFS and MIN_BYTES <= b.nbytes and (bufs is None or len(bufs) < _PER_KEY):
        if _make_room(b.nbytes):
            _pool.buffers.setdefault(key, []).append(b)
            _pool.nbytes += b.nbytes
    return b


def _make_room(nbytes: int) -> bool:
    """Drop free buffers, least recently used shapes first, until ``nbytes`` more fit."""
    for key in list(_pool.buffers):
        if _pool.nbytes + nbytes <= MAX_BYTES:
            break
        bufs = _pool.buffers[key]
        for i in reversed(range(len(bufs))):
            if _seen(bufs, i) == _FREE_REFS:
                _pool.nbytes -= bufs.pop(i).nbytes
        if not bufs:
            del _pool.buffers[key]
    return _pool.nbytes + nbytes <= MAX_BYTES


def empty(xp, shape: tuple, dtype):
    """An uninitialised array of ``xp`` (reused on NumPy when the pool has a free one)."""
    if xp is not np:
        return xp.empty(shape, dtype=dtype)
    return _take(tuple(shape), dtype)


def zeros(xp, shape: tuple, dtype):
    """A zero-filled array of ``xp`` (reused on NumPy when the pool has a free one)."""
    if xp is not np:
        return xp.zeros(shape, dtype=dtype)
    out = _take(tuple(shape), dtype)
    out.fill(0)
    return out


def clear() -> None:
    """Drop this thread's pooled buffers (arrays still in use stay valid)."""
    _pool.buffers.clear()
    _pool.nbytes = 0
