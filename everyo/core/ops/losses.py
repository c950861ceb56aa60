"""Losses as fused ops (one node, a hand-written backward): MSE, L1, cross-entropy, NLL and the
binary cross-entropies. ``reduction`` is ``"mean"`` (default), ``"sum"`` or ``"none"``."""

from __future__ import annotations

import numpy as np

from everyo.core import autocast as _autocast
from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.ops._dispatch import dispatch
from everyo.core.ops._util import as_t, check_same_device, unbroadcast
from everyo.core.tensor import Tensor
from everyo.errors import EveryOConfigError, EveryOShapeError

__all__ = [
    "mse_loss", "l1_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
]  # fmt: skip

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
    t = _autocast.widen(target if isinstance(target, Tensor) else as_t(target))
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
    return dispatch("mse_loss", _pointwise_loss, "mse_loss", input, target, reduction,
                    lambda xp, d: d * d, lambda xp, d: 2.0 * d)  # fmt: skip


def l1_loss(input, target, reduction: str = "mean"):  # noqa: A002
    """Mean absolute error ``|input - target|`` (gradient ``sign``, 0 at 0)."""
    _check_reduction(reduction)
    return dispatch("l1_loss", _pointwise_loss, "l1_loss", input, target, reduction,
                    lambda xp, d: xp.abs(d), lambda xp, d: xp.sign(d))  # fmt: skip


def _class_last(a):
    """``(N, C, d1, ...)`` as ``(N*d1*..., C)``; ``(N, C)`` unchanged; ``(C,)`` as ``(1, C)``."""
    if a.ndim == 1:
        return a[None, :]
    if a.ndim == 2:
        return a
    return namespace_of(a).moveaxis(a, 1, -1).reshape(-1, a.shape[1])


def _class_first(a2, shape):
    """Inverse of :func:`_class_last` for a gradient of the input's ``shape``."""
    if len(shape) <= 2:
        return a2.reshape(shape)
    moved = (shape[0],) + tuple(shape[2:]) + (shape[1],)
    return namespace_of(a2).moveaxis(a2.reshape(moved), -1, 1)


def _nll_core(name, x, target, weight, ignore_index, reduction, smoothing, from_logits):
    """Cross-entropy (``from_logits``) or NLL on log-probabilities, with class weights,
    ``ignore_index`` and label smoothing; returns the output tensor."""
    x = _autocast.widen(as_t(x))
    tgt = target.data if isinstance(target, Tensor) else namespace_of(x.data).asarray(target)
    parents = (x,)
    dev = check_same_device(x, target) if isinstance(target, Tensor) else x._device
    a = x.data
    xp = namespace_of(a)
    z = _class_last(a)
    rows, c = z.shape
    if (from_logits and weight is None and not smoothing and tgt.dtype.kind in "iu"
            and reduction != "none" and a.ndim == 2 and tgt.shape == (rows,) and rows):  # fmt: skip
        lo, hi = int(tgt.min()), int(tgt.max())
        if lo >= 0 and hi < c and not lo <= ignore_index <= hi:  # nothing ignored
            return _ce_fast(x, z, tgt, reduction, name, dev)
    if from_logits:
        shifted = z - z.max(axis=1, keepdims=True)
        logp = shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))
    else:
        logp = z
    w = None if weight is None else (weight.data if isinstance(weight, Tensor) else xp.asarray(
        weight)).astype(a.dtype, copy=False)  # fmt: skip
    soft = tgt.dtype.kind == "f"
    if soft:  # class probabilities, same shape as the input
        if tgt.shape != a.shape:
            raise EveryOShapeError(f"{name}: probability targets {tgt.shape} must match the "
                                   f"input {a.shape}")  # fmt: skip
        q = _class_last(tgt).astype(a.dtype, copy=False)
        if smoothing:
            q = q * (1.0 - smoothing) + smoothing / c
        coef = q if w is None else q * w  # d(loss_i)/d(logp_ic) = -coef_ic
        per = -(coef * logp).sum(axis=1)
        denom = None
    else:
        flat = tgt.reshape(-1)
        if flat.shape[0] != rows:
            raise EveryOShapeError(f"{name}: target {tgt.shape} does not fit input {a.shape}")
        valid = flat != ignore_index
        safe = xp.where(valid, flat, 0)
        if flat.size and (int(safe.min()) < 0 or int(safe.max()) >= c):
            raise IndexError(f"{name}: target class indices must lie in [0, {c})")
        r = xp.arange(rows)
        wt = valid.astype(a.dtype) if w is None else w[safe] * valid
        picked = logp[r, safe]
        per = -(1.0 - smoothing) * wt * picked
        if smoothing:
            all_w = logp.sum(axis=1) if w is None else (logp * w).sum(axis=1)
            per = per - (smoothing / c) * all_w * valid
        denom = wt.sum()
        coef = None
    out_shape = (a.shape[0],) + tuple(a.shape[2:]) if a.ndim >= 2 else ()
    if reduction == "none":
        out, n = per.reshape(out_shape), None
    else:
        out, n = _reduce(xp, per, reduction, denom if reduction == "mean" else None)
        if soft and reduction == "mean":  # probability targets average over the batch rows
            out, n = xp.asarray(per.sum() / rows), rows

    def backward(g):
        gs = _grad_scale(g, n)
        gper = gs.reshape(-1, 1) if reduction == "none" else gs
        if from_logits and not soft and w is None and not smoothing:
            # the common case: softmax minus the one-hot target, in two passes
            gz = xp.exp(logp)
            gz[r, safe] -= valid
            return (_class_first(gz * gper, a.shape),)
        if soft:
            cf = coef
        else:
            cf = xp.zeros_like(logp)
            cf[r, safe] = (1.0 - smoothing) * wt
            if smoothing:
                cf += (smoothing / c) * (1.0 if w is None else w) * valid[:, None]
        if from_logits:  # through log_softmax: -cf + softmax * sum(cf)
            gz = xp.exp(logp) * cf.sum(axis=1, keepdims=True) - cf
        else:
            gz = -cf
        return (_class_first(gz * gper, a.shape),)

    return make_result(out.astype(a.dtype, copy=False), parents, backward, name, dev)


def _ce_fast(x, z, tgt, reduction, name, dev):
    """Cross-entropy of ``(N, C)`` logits at valid class indices, no weights or smoothing: the
    training-loop case, in as few passes over the logits as possible."""
    xp = namespace_of(z)
    rows = z.shape[0]
    r = xp.arange(rows)
    shifted = z - z.max(axis=1, keepdims=True)
    e = xp.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    total = (xp.log(s[:, 0]) - shifted[r, tgt]).sum()
    n = rows if reduction == "mean" else 1
    out = xp.asarray(total / n if n != 1 else total, dtype=z.dtype)

    def backward(g):
        gz = e / s
        gz[r, tgt] -= 1.0
        gz *= g / n if n != 1 else g
        return (gz,)

    return make_result(out, (x,), backward, name, dev)


def cross_entropy(input, target, weight=None, ignore_index: int = -100,  # noqa: A002
                  reduction: str = "mean", label_smoothing: float = 0.0):  # fmt: skip
    """Softmax cross-entropy from logits ``(N, C)`` or ``(N, C, d1, ...)``.

    ``target`` is class indices ``(N, d1, ...)`` (entries equal to ``ignore_index`` count for
    nothing) or class probabilities of the input's shape. ``weight`` rescales classes; with
    ``reduction="mean"`` the loss is divided by the summed weights of the counted targets, as in
    PyTorch.
    """
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise EveryOConfigError(f"label_smoothing must lie in [0, 1], got {label_smoothing}")
    return dispatch("cross_entropy", _nll_core, "cross_entropy", input, target, weight,
                    ignore_index, reduction, float(label_smoothing), True)  # fmt: skip


def nll_loss(input, target, weight=None, ignore_index: int = -100,  # noqa: A002
             reduction: str = "mean"):  # fmt: skip
    """Negative log-likelihood of log-probabilities ``(N, C, ...)`` at class indices ``target``."""
    _check_reduction(reduction)
    return dispatch("nll_loss", _nll_core, "nll_loss", input, target, weight, ignore_index,
                    reduction, 0.0, False)  # fmt: skip


def _weights(weight, xp, dtype):
    if weight is None:
        return None
    return (weight.data if isinstance(weight, Tensor) else xp.asarray(weight)).astype(dtype)


def _bce(x, t, weight, reduction):
    x, t, dev = _pair("binary_cross_entropy", x, t)
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
    return dispatch("binary_cross_entropy", _bce, input, target, weight, reduction)


def _bce_logits(x, t, weight, reduction, pos_weight):
    x, t, dev = _pair("binary_cross_entropy_with_logits", x, t)
    z, y = x.data, t.data
    xp = namespace_of(z)
    sp_neg = xp.log1p(xp.exp(-xp.abs(z))) + xp.maximum(-z, 0)  # softplus(-z), stably
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
            e = xp.exp(-xp.abs(z))
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
    return dispatch("binary_cross_entropy_with_logits", _bce_logits, input, target, weight,
                    reduction, pos_weight)  # fmt: skip
