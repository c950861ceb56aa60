"""Normalisation ops: ``layer_norm`` and ``batch_norm``, each one node with a fused backward."""

from __future__ import annotations

from everyo.core import autocast as _autocast
from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.ops._dispatch import dispatch
from everyo.core.ops._util import as_t, check_same_device, data
from everyo.errors import EveryOShapeError
from everyo.profiler.recording.flops import declare, per_element

__all__ = ["layer_norm", "batch_norm"]

BATCH_NORM = declare("batch_norm", per_element(8))
LAYER_NORM = declare("layer_norm", per_element(8))


def _affine_parents(x, weight, bias):
    parents = [x]
    for p in (weight, bias):
        if p is not None:
            parents.append(as_t(p))
    check_same_device(*parents)
    return tuple(parents)


def _affine_norm_grads(g, xhat, rstd, w, axes, param_axes, weight, bias, batch_stats):
    """Gradients of ``xhat * w + bias`` with ``xhat = (x - mean) * rstd`` for the input, then
    ``weight`` and ``bias`` if given (summed over ``param_axes``). With ``batch_stats`` the mean
    and variance over ``axes`` came from ``x`` itself; otherwise they are constants."""
    gxhat = g if w is None else g * w
    if batch_stats:
        gx = rstd * (
            gxhat
            - gxhat.mean(axis=axes, keepdims=True)
            - xhat * (gxhat * xhat).mean(axis=axes, keepdims=True)
        )
    else:
        gx = gxhat * rstd
    grads = [gx]
    if weight is not None:
        grads.append((g * xhat).sum(axis=param_axes))
    if bias is not None:
        grads.append(g.sum(axis=param_axes))
    return grads


def _layer_norm(x, normalized_shape, weight, bias, eps):
    x = _autocast.widen(as_t(x))
    parents = _affine_parents(x, weight, bias)
    a = x.data
    xp = namespace_of(a)
    k = len(normalized_shape)
    if tuple(a.shape[a.ndim - k :]) != normalized_shape:
        raise EveryOShapeError(
            f"layer_norm: normalized_shape {normalized_shape} does not match the trailing dims "
            f"of the input {a.shape}"
        )
    axes = tuple(range(a.ndim - k, a.ndim))
    lead = tuple(range(a.ndim - k))
    mu = a.mean(axis=axes, keepdims=True)
    xc = a - mu
    rstd = 1.0 / xp.sqrt((xc * xc).mean(axis=axes, keepdims=True) + eps)
    xhat = xc * rstd
    w = parents[1].data if weight is not None else None
    out = xhat if w is None else xhat * w
    if bias is not None:
        out = out + parents[-1].data

    def backward(g):
        return _affine_norm_grads(g, xhat, rstd, w, axes, lead, weight, bias, True)

    return make_result(out.astype(a.dtype, copy=False), parents, backward, "layer_norm",
                       x._device)  # fmt: skip


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):  # noqa: A002
    """Normalise over the trailing ``normalized_shape`` dims, then scale by ``weight`` and shift by
    ``bias`` (both of ``normalized_shape``, optional)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    shape = tuple(normalized_shape)
    return dispatch(LAYER_NORM, _layer_norm, input, shape, weight, bias, eps)


def _update_running(buf, value, momentum):
    """``buf = (1 - momentum) * buf + momentum * value``, in place on the buffer's array."""
    arr = data(buf)
    arr *= 1.0 - momentum
    arr += momentum * value.astype(arr.dtype, copy=False)


def _batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps):
    x = _autocast.widen(as_t(x))
    parents = _affine_parents(x, weight, bias)
    a = x.data
    xp = namespace_of(a)
    if a.ndim < 2:
        raise EveryOShapeError(f"batch_norm needs (N, C, ...) input, got shape {a.shape}")
    c = a.shape[1]
    axes = (0,) + tuple(range(2, a.ndim))
    bshape = (1, c) + (1,) * (a.ndim - 2)
    count = a.size // c
    if training:
        if count < 2:
            raise EveryOShapeError(
                f"batch_norm in training mode needs more than one value per channel, got input "
                f"shape {a.shape}"
            )
        mu = a.mean(axis=axes, keepdims=True)
        xc = a - mu
        var = (xc * xc).mean(axis=axes, keepdims=True)
        if running_mean is not None:
            _update_running(running_mean, mu.reshape(c), momentum)
        if running_var is not None:
            _update_running(running_var, var.reshape(c) * (count / (count - 1)), momentum)
    else:
        if running_mean is None or running_var is None:
            raise EveryOShapeError("batch_norm in eval mode needs running_mean and running_var")
        xc = a - data(running_mean).reshape(bshape)
        var = data(running_var).reshape(bshape)
    rstd = 1.0 / xp.sqrt(var + eps)
    xhat = xc * rstd
    w = parents[1].data.reshape(bshape) if weight is not None else None
    out = xhat if w is None else xhat * w
    if bias is not None:
        out = out + parents[-1].data.reshape(bshape)

    def backward(g):
        return _affine_norm_grads(g, xhat, rstd, w, axes, axes, weight, bias, training)

    return make_result(out.astype(a.dtype, copy=False), parents, backward, "batch_norm",
                       x._device)  # fmt: skip


def batch_norm(input, running_mean, running_var, weight=None, bias=None,  # noqa: A002
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5):  # fmt: skip
    """Normalise each channel (axis 1) of ``(N, C, ...)`` input.

    In training mode it uses the batch statistics and updates ``running_mean``/``running_var``
    (Tensors or arrays, updated in place; either may be None) with ``momentum`` (the running
    variance is unbiased, as in PyTorch); in eval mode it uses the running statistics.
    """
    return dispatch(BATCH_NORM, _batch_norm, input, running_mean, running_var, weight, bias,
                    training, momentum, eps)  # fmt: skip
