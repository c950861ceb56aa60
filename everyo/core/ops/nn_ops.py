"""Neural-network ops: activations, dropout, linear, embedding; and (re-exported from their own
modules) convolution and pooling, normalisation, attention and losses.

Each op is one graph node with a fused backward closure, so a layer costs one dispatch and one
node, not a chain of small ops.
"""

from __future__ import annotations

import math

import numpy as np

from everyo.core import autocast as _autocast
from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.device import CPU
from everyo.core.ops import attention, conv, losses, nll, norm
from everyo.core.ops._dispatch import dispatch, unary
from everyo.core.ops._util import (
    _keep_mask,
    as_t,
    check_same_device,
    dense,
    norm_axis,
    scatter_add,
    weighted_inputs,
)
from everyo.core.ops.attention import *  # noqa: F403
from everyo.core.ops.conv import *  # noqa: F403
from everyo.core.ops.linalg import product
from everyo.core.ops.losses import *  # noqa: F403
from everyo.core.ops.nll import *  # noqa: F403
from everyo.core.ops.norm import *  # noqa: F403
from everyo.core.tensor import Tensor
from everyo.errors import EveryOConfigError, EveryOShapeError
from everyo.profiler.recording import flops as _flops
from everyo.profiler.recording import hooks as _hooks
from everyo.profiler.recording.flops import ELEMENTWISE, NO_FLOPS, declare, per_element

__all__ = [
    "relu", "gelu", "sigmoid", "tanh", "softmax", "log_softmax", "dropout", "linear",
    "embedding",
]  # fmt: skip
for _family in (attention, conv, losses, nll, norm):
    __all__ += _family.__all__

DROPOUT = declare("dropout", ELEMENTWISE)
EMBEDDING = declare("embedding", NO_FLOPS)
GELU = declare("gelu", per_element(8))
LINEAR = declare("linear", _flops.LINEAR)
LOG_SOFTMAX = declare("log_softmax", per_element(5))
RELU = declare("relu", ELEMENTWISE)
SIGMOID = declare("sigmoid", ELEMENTWISE)
SOFTMAX = declare("softmax", per_element(5))
TANH = declare("tanh", ELEMENTWISE)


# ---- activations ----------------------------------------------------------------------------
def _relu(x):
    if not isinstance(x, Tensor):
        x = as_t(x)
    arr = x.data
    if x._device is CPU:
        z = _ZEROS.get(arr.dtype)  # _relu_cpu, inlined
        out = np.maximum(arr, 0 if z is None else z)
    else:
        out = namespace_of(arr).maximum(arr, 0)
    return make_result(out, (x,), lambda g: (g * (out > 0),), RELU, x._device)


_ZEROS = {np.dtype(t): np.zeros((), t) for t in (np.float16, np.float32, np.float64)}


def _relu_cpu(a):
    # a 0-d zero of the array's dtype: NumPy 2 resolves a Python 0 (a "weak" scalar) on every
    # call, which costs more than the maximum of an 8x8 array itself
    z = _ZEROS.get(a.dtype)
    return np.maximum(a, 0 if z is None else z)


relu = unary(RELU, _relu, _relu_cpu, "``max(x, 0)``.")


def _erf(xp, x):
    # Numerical Recipes' erfc Chebyshev fit: relative error < 1.2e-7 everywhere, enough for
    # float32 and for gradient checks; NumPy has no erf and SciPy is not a dependency.
    z = xp.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))  # fmt: skip
    erfc = t * xp.exp(poly)
    return xp.where(x >= 0, 1.0 - erfc, erfc - 1.0)


_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _gelu(x, approximate):
    x = as_t(x)
    a = x.data
    xp = namespace_of(a)
    if approximate == "tanh":
        inner = _SQRT_2_PI * (a + 0.044715 * a * a * a)
        th = xp.tanh(inner)
        out = 0.5 * a * (1.0 + th)

        def backward(g):
            dinner = _SQRT_2_PI * (1.0 + 3 * 0.044715 * a * a)
            return (g * (0.5 * (1.0 + th) + 0.5 * a * (1.0 - th * th) * dinner),)

    else:
        cdf = 0.5 * (1.0 + _erf(xp, a * (1.0 / math.sqrt(2.0))))
        out = a * cdf

        def backward(g):
            return (g * (cdf + a * (_INV_SQRT_2PI * xp.exp(-0.5 * a * a))),)

    return make_result(out.astype(a.dtype, copy=False), (x,), backward, GELU, x._device)


def gelu(x, approximate: str = "none"):
    """Gaussian error linear unit ``x * Phi(x)``.

    ``approximate="none"`` (the default, as in PyTorch) uses the exact form with an erf accurate
    to 1.2e-7; ``"tanh"`` uses ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``. The gradient
    is the exact derivative of the form used.
    """
    if approximate not in ("none", "tanh"):
        raise EveryOConfigError(f"gelu: approximate must be 'none' or 'tanh', not {approximate!r}")
    return dispatch(GELU, _gelu, x, approximate)


def _sigmoid(x):
    x = as_t(x)
    a = x.data
    xp = namespace_of(a)
    e = xp.exp(-xp.abs(a))  # never overflows
    out = xp.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(a.dtype, copy=False)
    return make_result(out, (x,), lambda g: (g * out * (1.0 - out),), SIGMOID, x._device)


def sigmoid(x):
    """``1 / (1 + exp(-x))``, computed without overflow for large ``|x|``."""
    return dispatch(SIGMOID, _sigmoid, x)


def _tanh(x):
    x = as_t(x)
    out = namespace_of(x.data).tanh(x.data)
    return make_result(out, (x,), lambda g: (g * (1.0 - out * out),), TANH, x._device)


tanh = unary(TANH, _tanh, np.tanh, "Hyperbolic tangent.")


def _softmax(x, axis):
    x = _autocast.widen(as_t(x))
    a = x.data
    xp = namespace_of(a)
    e = xp.exp(a - a.max(axis=axis, keepdims=True))
    out = e / e.sum(axis=axis, keepdims=True)

    def backward(g):
        return (out * (g - (g * out).sum(axis=axis, keepdims=True)),)

    return make_result(out, (x,), backward, SOFTMAX, x._device)


def softmax(x, axis: int | None = None, *, dim: int | None = None):
    """``exp(x) / sum(exp(x))`` along ``axis``/``dim`` (default the last), stably."""
    axis = norm_axis(axis, dim)
    return dispatch(SOFTMAX, _softmax, x, -1 if axis is None else axis)


def _log_softmax(x, axis):
    x = _autocast.widen(as_t(x))
    a = x.data
    xp = namespace_of(a)
    shifted = a - a.max(axis=axis, keepdims=True)
    out = shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))

    def backward(g):
        return (g - xp.exp(out) * g.sum(axis=axis, keepdims=True),)

    return make_result(out, (x,), backward, LOG_SOFTMAX, x._device)


def log_softmax(x, axis: int | None = None, *, dim: int | None = None):
    """``log(softmax(x))`` along ``axis``/``dim`` (default the last), stably."""
    axis = norm_axis(axis, dim)
    return dispatch(LOG_SOFTMAX, _log_softmax, x, -1 if axis is None else axis)


# ---- dropout ----------------------------------------------------------------------------------
def _dropout(x, p, seed, rng):
    x = as_t(x)
    a = x.data
    xp = namespace_of(a)
    if p >= 1.0:
        mask = xp.zeros_like(a)
    else:
        mask = _keep_mask(xp, a.shape, p, a.dtype, seed, rng)
    return make_result(a * mask, (x,), lambda g: (g * mask,), DROPOUT, x._device)


def dropout(x, p: float = 0.5, training: bool = True, *, seed: int | None = None, rng=None):
    """Inverted dropout: zero each element with probability ``p`` and scale the rest by
    ``1/(1-p)``, so evaluation (``training=False``) is the identity.

    ``seed`` or ``rng`` (a ``numpy.random.Generator``; a CuPy one on CUDA) make it reproducible;
    otherwise the generator seeded by :func:`everyo.manual_seed` is used.
    """
    if not 0.0 <= p <= 1.0:
        raise EveryOConfigError(f"dropout probability must lie in [0, 1], got {p}")
    if not training or p == 0.0:
        return as_t(x)
    return dispatch(DROPOUT, _dropout, x, p, seed, rng)


# ---- linear and embedding ----------------------------------------------------------------------
def _linear(x, weight, bias):
    dev = getattr(x, "_device", None)
    if (  # the training-loop case: tensors on one device, no autocast; else the general path
        isinstance(x, Tensor)
        and isinstance(weight, Tensor)
        and weight._device is dev
        and not _autocast.depth
        and (bias is None or (isinstance(bias, Tensor) and bias._device is dev))
    ):
        parents = (x, weight) if bias is None else (x, weight, bias)
    else:
        parents, dev = weighted_inputs(x, weight, bias)
    a, w = parents[0].data, parents[1].data
    if a.shape[-1] != w.shape[-1]:
        raise EveryOShapeError(
            f"linear: input has {a.shape[-1]} features (shape {a.shape}) but the weight "
            f"{w.shape} expects {w.shape[-1]} (weight layout is (out_features, in_features))"
        )
    x, weight = parents[0], parents[1]
    has_b = bias is not None
    if a.ndim == 2:  # the common case: one GEMM each way, no reshapes
        out = a @ w.T
        if has_b:
            out += parents[2].data

        def backward(g):
            if not g.flags.c_contiguous:
                g = dense(g)
            gx = (g @ w) if x.requires_grad else None
            gw = (g.T @ a) if weight.requires_grad else None
            if has_b:
                return gx, gw, (g.sum(axis=0) if parents[2].requires_grad else None)
            return gx, gw

        return make_result(out, parents, backward, LINEAR, dev)
    out = product(a, w.T)
    if has_b:
        out += parents[2].data

    def backward(g):
        g = dense(g)
        g2 = g if g.ndim == 2 else g.reshape(-1, g.shape[-1])
        a2 = a if a.ndim == 2 else a.reshape(-1, a.shape[-1])
        gx = product(g, w) if x.requires_grad else None
        gw = (g2.T @ a2) if weight.requires_grad else None
        if has_b:
            return gx, gw, (g2.sum(axis=0) if parents[2].requires_grad else None)
        return gx, gw

    return make_result(out, parents, backward, LINEAR, dev)


def linear(x, weight, bias=None):
    """``x @ weight.T + bias`` as one op; ``weight`` has PyTorch's ``(out, in)`` layout.

    Under :func:`everyo.autocast` it computes in the autocast dtype.
    """
    p = _hooks.active
    if p is None or not p.record_ops:  # what dispatch does then, without its frame
        return _linear(x, weight, bias)
    return dispatch(LINEAR, _linear, x, weight, bias)


def _embedding(indices, weight, padding_idx):
    weight = as_t(weight)
    idx = indices.data if hasattr(indices, "data") and hasattr(indices, "_device") else indices
    xp = namespace_of(weight.data)
    idx = xp.asarray(idx)
    if idx.dtype.kind not in "iu":
        raise EveryOShapeError(f"embedding needs integer indices, got {idx.dtype}")
    n = weight.shape[0]
    if idx.size and (int(idx.min()) < -n or int(idx.max()) >= n):
        raise IndexError(f"embedding: indices must lie in [0, {n}) for a weight of shape "
                         f"{weight.shape}")  # fmt: skip
    out = weight.data[idx]

    def backward(g):
        gw = xp.zeros_like(weight.data)
        flat = idx.reshape(-1)
        scatter_add(gw, flat, g.reshape(flat.shape[0], -1))
        if padding_idx is not None:
            gw[padding_idx] = 0
        return (gw,)

    return make_result(out, (weight,), backward, EMBEDDING, weight._device)


def embedding(input, weight, padding_idx: int | None = None):  # noqa: A002 - PyTorch's name
    """Rows of ``weight`` picked by the integer ``input``; gradients of repeated indices add up
    (and the ``padding_idx`` row gets none)."""
    from everyo.core.tensor import Tensor

    if isinstance(input, Tensor) and isinstance(weight, Tensor):
        check_same_device(input, weight)
    return dispatch(EMBEDDING, _embedding, input, weight, padding_idx)
