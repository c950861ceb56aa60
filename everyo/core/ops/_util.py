"""Helpers shared by the op families: operand coercion, device checks, gradient reduction."""

from __future__ import annotations

import numbers

import numpy as np

from everyo.core.autocast import active_dtype, cast_inputs
from everyo.core.backend import is_cupy_array, namespace_of
from everyo.core.tensor import Tensor, as_tensor
from everyo.errors import EveryODeviceError, EveryOShapeError


def check_same_device(*tensors: Tensor):
    """The common device of ``tensors``; mixing devices is an error, never a silent copy."""
    dev = tensors[0]._device
    for t in tensors[1:]:
        if t._device is not dev and t._device != dev:
            raise EveryODeviceError(
                f"tensors on two devices in one op: {dev} and {t._device}; move one explicitly "
                f"with .to('{dev}') or .to('{t._device}')"
            )
    return dev


def weighted_inputs(x, weight, bias):
    """The parents of a weighted op (linear, conv2d): ``(x, weight[, bias])`` as tensors on one
    device, cast to the autocast dtype when autocast is on. Returns ``(parents, device)``."""
    x, weight = as_t(x), as_t(weight)
    parents = (x, weight) if bias is None else (x, weight, as_t(bias))
    dev = check_same_device(*parents)
    if active_dtype() is not None:
        parents = cast_inputs(*parents)
    return parents, dev


def operands(a, b):
    """Coerce a binary op's operands: Tensors stay, Python numbers stay scalars (keeping the
    tensor's dtype), anything else becomes a tensor. Returns ``(a, b, device)``."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            return a, b, check_same_device(a, b)
        if isinstance(b, numbers.Number):
            return a, b, a._device
        b = as_tensor(b)
        return a, b, check_same_device(a, b)
    if isinstance(b, Tensor):
        if isinstance(a, numbers.Number):
            return a, b, b._device
        a = as_tensor(a)
        return a, b, check_same_device(a, b)
    a, b = as_tensor(a), as_tensor(b)
    return a, b, check_same_device(a, b)


def data(x):
    return x.data if isinstance(x, Tensor) else x


def shape_error(op: str, a, b, exc: Exception) -> EveryOShapeError:
    sa = getattr(a, "shape", ())
    sb = getattr(b, "shape", ())
    return EveryOShapeError(f"{op}: shapes {tuple(sa)} and {tuple(sb)} do not broadcast ({exc})")


def unbroadcast(g, shape: tuple):
    """Sum ``g`` down to ``shape`` (the inverse of broadcasting)."""
    if g.shape == shape:
        return g
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape)


def tensors(*xs) -> tuple:
    """The Tensor operands among ``xs`` (the graph parents)."""
    return tuple(x for x in xs if isinstance(x, Tensor))


def norm_axis(axis, dim):
    """Accept NumPy's ``axis`` or PyTorch's ``dim`` (not both)."""
    if dim is not None:
        if axis is not None:
            raise TypeError("pass axis= or dim=, not both")
        return tuple(dim) if isinstance(dim, list) else dim
    return tuple(axis) if isinstance(axis, list) else axis


def as_t(x) -> Tensor:
    """``x`` as a Tensor (no copy when it already is one)."""
    return x if isinstance(x, Tensor) else as_tensor(x)


def scatter_add(target, index, values) -> None:
    """``target[index] += values`` with repeated indices accumulating (NumPy or CuPy)."""
    if is_cupy_array(target):
        import cupyx

        if getattr(getattr(index, "dtype", None), "kind", "") == "b":  # positions, not masks
            index = index.nonzero()
        cupyx.scatter_add(target, index, values)
    else:
        import numpy as np

        np.add.at(target, index, values)


def dense(g):
    """``g`` as a C-contiguous array. Gradients arriving from ``sum``/``mean`` are broadcast views
    with zero strides, which BLAS cannot take: NumPy's matmul would fall back to a slow loop."""
    return g if g.flags.c_contiguous else namespace_of(g).ascontiguousarray(g)


def _keep_mask(xp, shape, p, dtype, seed, rng):
    """A float mask of ``1/(1-p)`` (kept) and ``0`` (dropped)."""
    if xp is np:
        if rng is None:
            from everyo.core.ops import creation

            rng = creation.global_rng() if seed is None else np.random.default_rng(seed)
        draw = rng.random(shape, dtype=np.float32)
    else:  # CuPy: draw on the device, no host round trip
        gen = xp.random.default_rng(seed) if rng is None else rng
        draw = gen.random(shape, dtype=np.float32)
    return (draw >= p).astype(dtype) * (1.0 / (1.0 - p))
