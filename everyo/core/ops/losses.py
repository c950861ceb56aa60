"""Losses as fused ops (one node, a hand-written backward): MSE, L1 and the binary
cross-entropies (cross-entropy and NLL live in :mod:`.nll`). ``reduction`` is
``"mean"`` (default), ``"sum"`` or ``"none"``."""

from __future__ import annotations

import numpy as np

from everyo.core import autocast as _autocast
from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.ops._dispatch import dispatch
from everyo.core.ops._util import as_t, check_same_device, unbroadcast
from everyo.core.tensor import Tensor
from everyo.errors import EveryOConfigError, EveryOShapeError
from everyo.profiler.recording.flops import declare, per_element

__all__ = ["mse_loss", "l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits"]

BINARY_CROSS_ENTROPY = declare("binary_cross_entropy", per_element(7))
BINARY_CROSS_ENTROPY_WITH_LOGITS = declare("binary_cross_entropy_with_logits", per_element(8))
L1_LOSS = declare("l1_loss", per_element(3))
MSE_LOSS = declare("mse_loss", per_element(3))

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise EveryOConfigError(f"reduction must be one of {_REDUCTIONS}, not {reduction!r}")


def _reduce(xp, elems, reduction, denom=None):
    """Reduce per-element losses; returns ``(value, scale)`` where ``scale`` turns the incoming
    gradient into the per-element one (``g / n`` for mean, ``g`` otherwise)."""
    if reduction == "none":
        return elems, None
    total = elems.sum()
    if reduction == "sum":
        return xp.asarray(total), None
    n = elems.size if denom is None else denom
    return xp.asarray(total / n), n


def _grad_scale(g, n):
    return g if n is None else g / n


def _pair(name, input, target):  # noqa: A002
    x = _autocast.widen(as_t(input))
    t = _autocast.widen(as_t(target))
    dev = check_same_device(x, t)
    if x.shape != t.shape:
        raise EveryOShapeError(f"{name}: input {x.shape} and target {t.shape} must have the "
                               f"same shape")  # fmt: skip
    return x, t, dev


def _pointwise_loss(name, input, target, reduction, value, deriv):  # noqa: A002
    x, t, dev = _pair(name, input, target)
    xp = namespace_of(x.data)
    diff = x.data - t.data
    out, n = _reduce(xp, value(xp, diff), reduction)

    def backward(g):
        gd = _grad_scale(g, n) * deriv(xp, diff)
        return gd if x.requires_grad else None, (-gd if t.requires_grad else None)

    return make_result(out, (x, t), backward, name, dev)


def mse_loss(input, target, reduction: str = "mean"):  # noqa: A002
    """Mean squared error ``(input - target) ** 2``."""
    _check_reduction(reduction)
    return dispatch(MSE_LOSS, _pointwise_loss, MSE_LOSS, input, target, reduction,
                    lambda xp, d: d * d, lambda xp, d: 2.0 * d)  # fmt: skip


def l1_loss(input, target, reduction: str = "mean"):  # noqa: A002
    """Mean absolute error ``|input - target|`` (gradient ``sign``, 0 at 0)."""
    _check_reduction(reduction)
    return dispatch(L1_LOSS, _pointwise_loss, L1_LOSS, input, target, reduction,
                    lambda xp, d: xp.abs(d), lambda xp, d: xp.sign(d))  # fmt: skip


def _weights(weight, xp, dtype):
    """Class or element weights as an array of ``dtype`` (None stays None); never written to."""
    if weight is None:
        return None
    arr = weight.data if isinstance(weight, Tensor) else xp.asarray(weight)
    return arr.astype(dtype, copy=False)


def _bce(x, t, weight, reduction):
    x, t, dev = _pair(BINARY_CROSS_ENTROPY, x, t)
    p, y = x.data, t.data
    xp = namespace_of(p)
    # PyTorch clamps the logs at -100 so that p = 0 or 1 gives a finite loss
    with np.errstate(divide="ignore"):  # log(0) = -inf, then clamped
        lp = xp.maximum(xp.log(p), -100.0)
        l1p = xp.maximum(xp.log1p(-p), -100.0)
    elems = -(y * lp + (1.0 - y) * l1p)
    w = _weights(weight, xp, p.dtype)
    if w is not None:
        elems = elems * w
    out, n = _reduce(xp, elems, reduction)

    def backward(g):
        gs = _grad_scale(g, n)
        if w is not None:
            gs = gs * w
        gx = gs * (p - y) / xp.maximum(p * (1.0 - p), 1e-12) if x.requires_grad else None
        gt = unbroadcast(gs * (l1p - lp), y.shape) if t.requires_grad else None
        return gx, gt

    return make_result(out.astype(p.dtype, copy=False), (x, t), backward,
                       "binary_cross_entropy", dev)  # fmt: skip


def binary_cross_entropy(input, target, weight=None, reduction: str = "mean"):  # noqa: A002
    """Binary cross-entropy of probabilities ``input`` in [0, 1] (logs clamped at -100)."""
    _check_reduction(reduction)
    return dispatch(BINARY_CROSS_ENTROPY, _bce, input, target, weight, reduction)


def _bce_logits(x, t, weight, reduction, pos_weight):
    x, t, dev = _pair(BINARY_CROSS_ENTROPY_WITH_LOGITS, x, t)
    z, y = x.data, t.data
    xp = namespace_of(z)
    e = xp.exp(-xp.abs(z))  # never overflows; the backward's sigmoid reuses it
    sp_neg = xp.log1p(e) + xp.maximum(-z, 0)  # softplus(-z), stably
    pw = _weights(pos_weight, xp, z.dtype)
    lw = 1.0 if pw is None else 1.0 + (pw - 1.0) * y
    elems = (1.0 - y) * z + lw * sp_neg
    w = _weights(weight, xp, z.dtype)
    if w is not None:
        elems = elems * w
    out, n = _reduce(xp, elems, reduction)

    def backward(g):
        gs = _grad_scale(g, n)
        if w is not None:
            gs = gs * w
        gx = gt = None
        if x.requires_grad:
            sig = xp.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
            gx = gs * ((1.0 - y) - lw * (1.0 - sig))
        if t.requires_grad:
            gt = gs * (-z + (0.0 if pw is None else (pw - 1.0) * sp_neg))
        return gx, gt

    return make_result(out.astype(z.dtype, copy=False), (x, t), backward,
                       "binary_cross_entropy_with_logits", dev)  # fmt: skip


def binary_cross_entropy_with_logits(input, target, weight=None,  # noqa: A002
                                     reduction: str = "mean", pos_weight=None):  # fmt: skip
    """``binary_cross_entropy(sigmoid(input), target)`` computed stably from logits;
    ``pos_weight`` weighs the positive term per class."""
    _check_reduction(reduction)
    return dispatch(BINARY_CROSS_ENTROPY_WITH_LOGITS, _bce_logits, input, target, weight,
                    reduction, pos_weight)  # fmt: skip
