"""Shape and movement ops: reshape, transpose/permute, flatten, squeeze/unsqueeze,
concatenate, stack, broadcast_to, indexing. All differentiable."""

from __future__ import annotations

from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.ops._dispatch import dispatch
from everyo.core.ops._util import as_t, check_same_device, scatter_add, unbroadcast
from everyo.core.tensor import Tensor
from everyo.errors import EveryOShapeError
from everyo.profiler.recording.flops import NO_FLOPS, declare

__all__ = [
    "reshape", "transpose", "permute", "flatten", "squeeze", "unsqueeze", "concatenate",
    "stack", "broadcast_to", "getitem",
]  # fmt: skip

BROADCAST_TO = declare("broadcast_to", NO_FLOPS)
CONCATENATE = declare("concatenate", NO_FLOPS)
GETITEM = declare("getitem", NO_FLOPS)
PERMUTE = declare("permute", NO_FLOPS)
RESHAPE = declare("reshape", NO_FLOPS)
STACK = declare("stack", NO_FLOPS)
TRANSPOSE = declare("transpose", NO_FLOPS)


def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def _reshape(x, shape):
    x = as_t(x)
    try:
        out = x.data.reshape(shape)
    except ValueError as exc:
        raise EveryOShapeError(f"cannot reshape {x.shape} into {shape}: {exc}") from None
    in_shape = x.shape
    return make_result(out, (x,), lambda g: (g.reshape(in_shape),), RESHAPE, x._device)


def reshape(x, *shape):
    """``x`` with a new shape of the same size (``-1`` infers one dimension)."""
    return dispatch(RESHAPE, _reshape, x, _shape_arg(shape))


def _permute(x, axes, name):
    x = as_t(x)
    n = x.ndim
    axes = tuple(reversed(range(n))) if axes is None else tuple(a % n if n else a for a in axes)
    if sorted(axes) != list(range(n)):
        raise EveryOShapeError(f"permutation {axes} does not fit a tensor of {n} dims")
    out = x.data.transpose(axes)
    inverse = tuple(sorted(range(n), key=axes.__getitem__))
    return make_result(out, (x,), lambda g: (g.transpose(inverse),), name, x._device)


def transpose(x, *dims):
    """Reverse the axes (no ``dims``), swap two (``transpose(x, 0, 1)``, PyTorch) or permute
    them (``transpose(x, (1, 0, 2))``, NumPy)."""
    x = as_t(x)
    if not dims or (len(dims) == 1 and dims[0] is None):
        axes = None
    elif len(dims) == 2 and all(isinstance(d, int) for d in dims):
        order = list(range(x.ndim))
        i, j = dims[0] % x.ndim, dims[1] % x.ndim
        order[i], order[j] = order[j], order[i]
        axes = tuple(order)
    else:
        axes = _shape_arg(dims)
    return dispatch(TRANSPOSE, _permute, x, axes, TRANSPOSE)


def permute(x, *dims):
    """Reorder the axes: ``permute(x, 0, 2, 1)`` or ``permute(x, (0, 2, 1))``."""
    return dispatch(PERMUTE, _permute, x, _shape_arg(dims), PERMUTE)


def flatten(x, start_dim: int = 0, end_dim: int = -1):
    """Merge dims ``start_dim..end_dim`` into one (PyTorch semantics)."""
    x = as_t(x)
    if x.ndim == 0:
        return reshape(x, (1,))
    s, e = start_dim % x.ndim, end_dim % x.ndim
    n = 1
    for d in x.shape[s : e + 1]:
        n *= d
    return reshape(x, x.shape[:s] + (n,) + x.shape[e + 1 :])


def squeeze(x, dim=None):
    """Drop size-1 dims (all of them, or ``dim``)."""
    x = as_t(x)
    if dim is None:
        shape = tuple(d for d in x.shape if d != 1)
    else:
        dims = {d % x.ndim for d in (dim if isinstance(dim, tuple) else (dim,))}
        shape = tuple(d for i, d in enumerate(x.shape) if not (i in dims and d == 1))
    return reshape(x, shape)


def unsqueeze(x, dim: int):
    """Insert a size-1 dim at ``dim``."""
    x = as_t(x)
    d = dim % (x.ndim + 1)
    return reshape(x, x.shape[:d] + (1,) + x.shape[d:])


def _concat(name, xs, axis, stacked):
    xs = [as_t(x) for x in xs]
    if not xs:
        raise EveryOShapeError(f"{name} needs at least one tensor")
    dev = check_same_device(*xs)
    xp = namespace_of(xs[0].data)
    arrays = [x.data for x in xs]
    try:
        out = (xp.stack if stacked else xp.concatenate)(arrays, axis=axis)
    except ValueError as exc:
        shapes = ", ".join(str(x.shape) for x in xs)
        raise EveryOShapeError(f"{name}: shapes {shapes} do not fit along axis {axis}") from exc
    ax = axis % out.ndim

    def backward(g):
        if stacked:
            return tuple(xp.take(g, i, axis=ax) for i in range(len(xs)))
        bounds, pos = [], 0
        for x in xs[:-1]:
            pos += x.shape[ax]
            bounds.append(pos)
        return tuple(xp.split(g, bounds, axis=ax))

    return make_result(out, tuple(xs), backward, name, dev)


def concatenate(tensors, axis: int = 0, *, dim=None):
    """Join tensors along an existing axis."""
    axis = axis if dim is None else dim
    return dispatch(CONCATENATE, _concat, CONCATENATE, list(tensors), axis, False)


def stack(tensors, axis: int = 0, *, dim=None):
    """Join tensors along a new axis."""
    axis = axis if dim is None else dim
    return dispatch(STACK, _concat, STACK, list(tensors), axis, True)


def _broadcast_to(x, shape):
    x = as_t(x)
    xp = namespace_of(x.data)
    try:
        out = xp.broadcast_to(x.data, shape)
    except ValueError as exc:
        raise EveryOShapeError(f"cannot broadcast {x.shape} to {shape}") from exc
    in_shape = x.shape
    return make_result(out, (x,), lambda g: (unbroadcast(g, in_shape),), BROADCAST_TO, x._device)


def broadcast_to(x, *shape):
    """A read-only view of ``x`` broadcast to ``shape``."""
    return dispatch(BROADCAST_TO, _broadcast_to, x, _shape_arg(shape))


def _is_basic(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice)) for i in items)


def _plain_index(index):
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, tuple):
        return tuple(i.data if isinstance(i, Tensor) else i for i in index)
    return index


def _getitem(x, index):
    arr = x.data
    try:
        out = arr[index]
    except IndexError as exc:
        raise IndexError(f"index {index!r} is out of range for shape {x.shape}: {exc}") from None
    basic = _is_basic(index)
    xp = namespace_of(arr)

    def backward(g):
        gx = xp.zeros(arr.shape, dtype=g.dtype)
        if basic:
            gx[index] = g
        else:  # fancy indices may repeat: accumulate
            scatter_add(gx, index, g)
        return (gx,)

    return make_result(out, (x,), backward, GETITEM, x._device)


def getitem(x, index):
    """``x[index]``: slicing, integer and boolean (fancy) indexing, differentiable."""
    x = as_t(x)
    items = index if isinstance(index, tuple) else (index,)
    idx_tensors = [i for i in items if isinstance(i, Tensor)]
    if idx_tensors:
        check_same_device(x, *idx_tensors)
    return dispatch(GETITEM, _getitem, x, _plain_index(index))
