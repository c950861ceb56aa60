"""The single dispatch point every op goes through, and the fast entries of the common ops.

:func:`dispatch` runs ``impl(*args, **kwargs)`` as the op ``name``; with
``Profiler(record_ops=True)`` it hands the call to the profiler instead (``p.op_call``), which
times it and derives FLOPs and bytes from the op table (:mod:`everyo.profiler.recording.flops`,
where each op declares its cost under the same name constant its dispatch uses).

The entries built here (:func:`binary`, :func:`reflected`, :func:`unary`, :func:`reduction`) are
the same dispatch with a fast path in front, for the ops a training loop and a notebook call most
(``a + b``, ``a @ b``, ``relu``, ``sum``...). An entry first asks the one question
:func:`dispatch` asks (is a profiler recording ops? then ``p.op_call``, so ``record_ops`` still
sees every op); otherwise, when nothing else could make a difference — the operands are Tensors
on one device (or a Python number), no graph is needed (no operand requires grad, or grad mode is
off) and, for ops autocast changes, no autocast block is open — it computes the array and wraps
it, with no further call. Any other case runs ``impl``, the op's full implementation, exactly as
:func:`dispatch` would. Errors (shapes that do not broadcast...) are raised by ``impl``: the fast
path gives up on the first exception and lets ``impl`` produce the message.
"""

from __future__ import annotations

import numpy as np

from everyo.core import autocast as _autocast
from everyo.core.autograd import _mode
from everyo.core.device import CPU
from everyo.core.tensor import Tensor
from everyo.profiler.recording import hooks as _hooks

_new = object.__new__
_generic = np.generic
_asarray = np.asarray
_NUMBERS = (int, float)


def dispatch(name: str, impl, *args, **kwargs):
    """Run ``impl(*args, **kwargs)`` as the op ``name``."""
    p = _hooks.active
    if p is not None and p.record_ops:
        return p.op_call(name, impl, args, kwargs)
    return impl(*args, **kwargs)


def _entry(op, name: str, impl, doc: str):
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    op.__module__ = impl.__module__
    op.op_name = name  # the name the profiler records (tests and tools read it)
    return op


def binary(name: str, impl, fwd, doc: str, *, autocast: bool = False):
    """The entry of binary op ``name``: ``fwd(x, y)`` on the arrays (``y`` may be a Python
    number) when the fast path applies, else ``impl(a, b)`` through the dispatch point.

    ``autocast=True`` for ops that autocast changes (matmul): then an open autocast block on any
    thread sends the call to ``impl``.
    """

    def op(a, b):
        p = _hooks.active
        if p is not None and p.record_ops:
            return p.op_call(name, impl, (a, b), {})
        if isinstance(a, Tensor) and not (autocast and _autocast.depth):
            if isinstance(b, Tensor):
                ok = b._device is a._device and not (
                    (a.requires_grad or b.requires_grad) and _mode.enabled
                )
                y = b.data
            else:
                ok = type(b) in _NUMBERS and not (a.requires_grad and _mode.enabled)
                y = b
            if ok:
                try:
                    out = fwd(a.data, y)
                except Exception:  # noqa: BLE001 - impl raises the op's own error
                    return impl(a, b)
                if isinstance(out, _generic):  # 0-d operands give NumPy scalars
                    out = _asarray(out)
                t = _new(Tensor)
                t.data = out
                t._device = a._device
                t.requires_grad = False
                t.grad = t._node = None
                t._retain = False
                return t
        return impl(a, b)

    return _entry(op, name, impl, doc)


def reflected(name: str, impl, fwd, doc: str):
    """The reflected operator of binary op ``name`` (``__radd__``...): ``other OP self`` where
    ``other`` is what Python could not add itself (a number, a NumPy array)."""

    def op(self, other):
        p = _hooks.active
        if p is not None and p.record_ops:
            return p.op_call(name, impl, (other, self), {})
        if type(other) in _NUMBERS and not (self.requires_grad and _mode.enabled):
            try:
                out = fwd(other, self.data)
            except Exception:  # noqa: BLE001 - impl raises the op's own error
                return impl(other, self)
            if isinstance(out, _generic):
                out = _asarray(out)
            t = _new(Tensor)
            t.data = out
            t._device = self._device
            t.requires_grad = False
            t.grad = t._node = None
            t._retain = False
            return t
        return impl(other, self)

    op = _entry(op, name, impl, doc)
    op.__name__ = op.__qualname__ = f"r{op.__name__}"
    return op


def unary(name: str, impl, fwd, doc: str, *, second=None):
    """The entry of unary op ``name``: ``fwd(arr)`` (a NumPy function; ``fwd(arr, second)`` when
    ``second`` is given, as ``relu``'s ``np.maximum(arr, 0)``) on a CPU tensor when the fast path
    applies, else ``impl(x)`` through the dispatch point."""

    def op(x):
        p = _hooks.active
        if p is not None and p.record_ops:
            return p.op_call(name, impl, (x,), {})
        if isinstance(x, Tensor) and x._device is CPU and not (x.requires_grad and _mode.enabled):
            out = fwd(x.data) if second is None else fwd(x.data, second)
            if isinstance(out, _generic):
                out = _asarray(out)
            t = _new(Tensor)
            t.data = out
            t._device = CPU
            t.requires_grad = False
            t.grad = t._node = None
            t._retain = False
            return t
        return impl(x)

    return _entry(op, name, impl, doc)


def reduction(name: str, impl, method: str, doc: str):
    """The entry of reduction ``name`` (``sum``, ``mean``...) with NumPy's ``axis``/``keepdims``
    and PyTorch's ``dim``/``keepdim``: ``arr.<method>(axis=, keepdims=)`` when the fast path
    applies, else ``impl(x, axis, keepdims)`` through the dispatch point."""

    def op(x, axis=None, keepdims=False, *, dim=None, keepdim=None):
        if dim is not None or keepdim is not None or type(axis) is list:
            if dim is not None:
                if axis is not None:
                    raise TypeError("pass axis= or dim=, not both")
                axis = dim
            if type(axis) is list:
                axis = tuple(axis)
            if keepdim is not None:
                keepdims = keepdim
        keepdims = keepdims is True or bool(keepdims)
        p = _hooks.active
        if p is not None and p.record_ops:
            return p.op_call(name, impl, (x, axis, keepdims), {})
        if isinstance(x, Tensor) and not (x.requires_grad and _mode.enabled):
            try:
                out = getattr(x.data, method)(axis=axis, keepdims=keepdims)
            except Exception:  # noqa: BLE001 - impl raises the op's own error
                return impl(x, axis, keepdims)
            if isinstance(out, _generic):
                out = _asarray(out)
            t = _new(Tensor)
            t.data = out
            t._device = x._device
            t.requires_grad = False
            t.grad = t._node = None
            t._retain = False
            return t
        return impl(x, axis, keepdims)

    return _entry(op, name, impl, doc)
