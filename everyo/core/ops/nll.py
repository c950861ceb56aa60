"""Cross-entropy and negative log-likelihood as fused ops: class weights, ``ignore_index``, label
smoothing, probability targets, spatial ``(N, C, d1, ...)`` inputs, and a fast path for the
training-loop case (``(N, C)`` logits, valid indices, no weights or smoothing)."""

from __future__ import annotations

import numpy as np

from everyo.core import autocast as _autocast
from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.ops._dispatch import dispatch
from everyo.core.ops._util import as_t, check_same_device
from everyo.core.ops.losses import _check_reduction, _grad_scale, _reduce, _weights
from everyo.core.tensor import Tensor
from everyo.errors import EveryOConfigError, EveryOShapeError
from everyo.profiler.recording import hooks as _hooks
from everyo.profiler.recording.flops import declare, per_element

__all__ = ["cross_entropy", "nll_loss"]

CROSS_ENTROPY = declare("cross_entropy", per_element(6))
NLL_LOSS = declare("nll_loss", per_element(1))


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
    w = _weights(weight, xp, a.dtype)
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
            if not valid.all():  # ignored rows count for nothing: no gradient either
                gz *= valid[:, None]
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


_STARTS: dict = {}


def _row_starts(rows: int, c: int):
    """``arange(rows) * c``, the flat index of each row's first entry in a C-contiguous
    ``(rows, c)`` array; cached (read-only) for the few batch shapes a training loop uses."""
    key = (rows, c)
    starts = _STARTS.get(key)
    if starts is None:
        if len(_STARTS) >= 64:
            _STARTS.clear()
        starts = _STARTS[key] = np.arange(0, rows * c, c)
        starts.flags.writeable = False
    return starts


def _ce_fast(x, z, tgt, reduction, name, dev):
    """Cross-entropy of ``(N, C)`` logits at valid class indices, no weights or smoothing: the
    training-loop case, in as few passes over the logits as possible."""
    # NumPy: the reductions as ufunc calls (the same loops, without the array methods' Python
    # wrapper: a full sum through ndarray.sum costs twice the sum of 32 numbers)
    cpu = type(z) is np.ndarray
    xp = np if cpu else namespace_of(z)
    rows = z.shape[0]
    shifted = z - (_amax(z, 1, None, None, True) if cpu else z.max(axis=1, keepdims=True))
    e = xp.exp(shifted)
    s = _sum(e, 1, None, None, True) if cpu else e.sum(axis=1, keepdims=True)
    if cpu:  # the target entries by flat index: take/put cost a third of 2-D fancy indexing
        if tgt.dtype.kind == "u" and tgt.dtype.itemsize == 8:  # uint64 + int64 is float64
            tgt = tgt.astype(np.intp)  # the labels are < C: exact
        flat = _row_starts(rows, z.shape[1]) + tgt  # C-order flat index, whatever the layout
        per = np.log(s[:, 0]) - shifted.take(flat)
        total = _sum(per, None)
    else:
        r = xp.arange(rows)
        total = (xp.log(s[:, 0]) - shifted[r, tgt]).sum()
    n = rows if reduction == "mean" else 1
    out = xp.asarray(total / n if n != 1 else total, dtype=z.dtype)

    def backward(g):
        gz = e / s
        if cpu:  # put, like take, reads the flat index in C order (any memory layout)
            gz.put(flat, gz.take(flat) - 1.0)
        else:
            gz[r, tgt] -= 1.0
        if n == 1:
            gz *= g
        elif type(g) is np.ndarray and g.ndim == 0:
            # the same factor as g / n in g's dtype, computed on a Python float (a 0-d array
            # operation costs more than the multiply): a float64 quotient rounded once to
            # float32 or float16 equals the quotient computed in that format
            gz *= float(g) / n
        else:
            gz *= g / n
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
    if reduction != "mean":
        _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise EveryOConfigError(f"label_smoothing must lie in [0, 1], got {label_smoothing}")
    p = _hooks.active
    if (  # the training-loop case, straight to _ce_fast (what dispatch and _nll_core pick too)
        (p is None or not p.record_ops)
        and weight is None
        and not label_smoothing
        and reduction != "none"
        and not _autocast.depth
        and isinstance(input, Tensor)
        and isinstance(target, Tensor)
        and target._device is input._device
    ):
        z, tgt = input.data, target.data
        if (
            z.ndim == 2
            and tgt.ndim == 1
            and 0 < tgt.shape[0] == z.shape[0]
            and tgt.dtype.kind in "iu"
            and not 0 <= ignore_index < z.shape[1]  # else _nll_core looks for ignored labels
            and _labels_below(tgt, z.shape[1])
        ):
            return _ce_fast(input, z, tgt, reduction, CROSS_ENTROPY, input._device)
    return dispatch(CROSS_ENTROPY, _nll_core, CROSS_ENTROPY, input, target, weight,
                    ignore_index, reduction, float(label_smoothing), True)  # fmt: skip


_UNSIGNED = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}
_amax, _sum = np.maximum.reduce, np.add.reduce


def _labels_below(tgt, c: int) -> bool:
    """Whether every integer label lies in ``[0, c)``, in one pass: seen as unsigned integers
    of the same size, negative labels become larger than any class count."""
    u = tgt if tgt.dtype.kind == "u" else tgt.view(_UNSIGNED[tgt.dtype.itemsize])
    return int(_amax(u) if type(u) is np.ndarray else u.max()) < c


def nll_loss(input, target, weight=None, ignore_index: int = -100,  # noqa: A002
             reduction: str = "mean"):  # fmt: skip
    """Negative log-likelihood of log-probabilities ``(N, C, ...)`` at class indices ``target``."""
    _check_reduction(reduction)
    return dispatch(NLL_LOSS, _nll_core, NLL_LOSS, input, target, weight, ignore_index,
                    reduction, 0.0, False)  # fmt: skip
