"""Mixed precision: ``eo.autocast`` runs matmul and conv in float16 while parameters (and their
gradients) stay float32, because the casts are ops of the graph.

>>> import everyo as eo
>>> w = eo.ones(4, 4, requires_grad=True)
>>> with eo.autocast("float16"):
...     y = eo.matmul(eo.ones(2, 4), w)
>>> y.dtype, w.dtype
(dtype('float16'), dtype('float32'))
"""

from __future__ import annotations

import contextlib
import threading

from everyo.core import dtype as _dt
from everyo.errors import EveryODTypeError

__all__ = ["autocast"]


class _State(threading.local):
    dtype = None  # a class default: no caught AttributeError on threads that never set it


_state = _State()

depth = 0
"""Open autocast blocks on all threads. The ops' fast paths read this one global (a thread-local
read costs more); when it is not 0 they take the full path, which reads the thread's dtype."""
_depth_lock = threading.Lock()


def active_dtype():
    """The autocast dtype on this thread, or None."""
    return _state.dtype


def cast_inputs(*tensors):
    """Cast floating tensors to the autocast dtype (differentiably); others pass through."""
    target = _state.dtype
    return tuple(
        t.astype(target) if t.dtype.kind == "f" and t.dtype != target else t for t in tensors
    )


def widen(t):
    """Under autocast, ``t`` as float32 if it is float16 (softmax, norms and losses need the
    range); otherwise ``t`` itself."""
    if _state.dtype is None or t.dtype.kind != "f" or t.dtype.itemsize >= 4:
        return t
    return t.astype(_dt.float32)


class autocast(contextlib.ContextDecorator):
    """Context manager and decorator: matmul, linear, conv2d and attention compute in
    ``dtype`` inside; softmax, log_softmax, the norms and the losses compute in float32.

    Parameters
    ----------
    dtype : str
        ``"float16"`` (default) or ``"float32"``/``"float64"``.
    enabled : bool
        ``False`` makes the block a no-op (handy for switching by a flag).
    """

    def __init__(self, dtype="float16", *, enabled: bool = True) -> None:
        dt = _dt.to_dtype(dtype)
        if dt.kind != "f":
            raise EveryODTypeError(f"autocast needs a floating dtype, not {dt}")
        self.dtype = dt
        self.enabled = enabled

    def _recreate_cm(self):
        # a fresh manager per decorated call, so that recursion and threads do not share `_prev`
        return type(self)(self.dtype, enabled=self.enabled)

    def __enter__(self):
        global depth
        self._prev = active_dtype()
        if self.enabled:
            _state.dtype = self.dtype
        with _depth_lock:
            depth += 1
        return self

    def __exit__(self, *exc):
        global depth
        _state.dtype = self._prev
        with _depth_lock:
            depth -= 1
        return False
