"""Differentiable conversions: dtype casts and device transfers (explicit, never silent)."""

from __future__ import annotations

from everyo.core import dtype as _dt
from everyo.core.autograd import make_result
from everyo.core.device import device as _resolve
from everyo.core.ops._dispatch import dispatch
from everyo.core.tensor import Tensor, _transfer
from everyo.profiler.recording.flops import NO_FLOPS, declare

__all__ = ["astype"]

ASTYPE = declare("astype", NO_FLOPS)
CLONE = declare("clone", NO_FLOPS)
TO = declare("to", NO_FLOPS)


def _astype(x: Tensor, dt):
    src = x.data.dtype
    out = x.data.astype(dt)
    return make_result(out, (x,), lambda g: (g.astype(src),), ASTYPE, x._device)


def astype(x: Tensor, dtype) -> Tensor:
    """``x`` cast to ``dtype``; the gradient is cast back to ``x``'s dtype."""
    dt = _dt.to_dtype(dtype)
    if dt == x.data.dtype:
        return x
    return dispatch(ASTYPE, _astype, x, dt)


def _to_device(x: Tensor, dev):
    out = _transfer(x.data, x._device, dev, copy=False)
    src = x._device
    return make_result(
        out.data, (x,), lambda g: (_transfer(g, dev, src, copy=False).data,), TO, dev
    )


def to(x: Tensor, device=None, dtype=None) -> Tensor:
    """``x`` on ``device`` and/or as ``dtype`` (itself when nothing changes, as in PyTorch)."""
    out = x
    if dtype is not None:
        out = astype(out, dtype)
    if device is not None:
        dev = _resolve(device)
        if dev != out._device:
            out = dispatch(TO, _to_device, out, dev)
    return out


def cpu(x: Tensor) -> Tensor:
    return to(x, "cpu")


def cuda(x: Tensor, strict: bool = False) -> Tensor:
    """``x`` on the first GPU; without one, a warning and ``x`` itself (``strict`` raises)."""
    return to(x, _resolve("cuda", strict=strict))


def clone(x: Tensor) -> Tensor:
    """A copy of the data that stays in the graph."""
    return dispatch(
        CLONE,
        lambda t: make_result(t.data.copy(), (t,), lambda g: (g,), CLONE, t._device),
        x,
    )
