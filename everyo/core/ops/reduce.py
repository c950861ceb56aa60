"""Reductions: sum, mean, max, min, var, std, logsumexp (differentiable); argmax, argmin."""

from __future__ import annotations

from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.ops._dispatch import dispatch, reduction
from everyo.core.ops._util import as_t, norm_axis
from everyo.core.tensor import Tensor
from everyo.errors import EveryOShapeError
from everyo.profiler.recording.flops import REDUCTION, declare

__all__ = [
    "sum", "mean", "max", "min", "var", "variance", "std", "logsumexp", "argmax", "argmin",
]  # fmt: skip

SUM = declare("sum", REDUCTION)
MEAN = declare("mean", REDUCTION)
MAX = declare("max", REDUCTION)
MIN = declare("min", REDUCTION)
VAR = declare("var", REDUCTION)
LOGSUMEXP = declare("logsumexp", REDUCTION)
ARGMAX = declare("argmax", REDUCTION)
ARGMIN = declare("argmin", REDUCTION)


def _axes(axis, ndim) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % ndim if ndim else a for a in axes)


def _expand(g, shape, axis, keepdims):
    """Broadcast a reduced gradient back to the input ``shape``."""
    xp = namespace_of(g)
    if not keepdims and shape:
        g = xp.expand_dims(g, _axes(axis, len(shape)))
    return xp.broadcast_to(g, shape)


def _count(shape, axis) -> int:
    n = 1
    for a in _axes(axis, len(shape)):
        n *= shape[a]
    return n


def _reduce(name, x, axis, keepdims, fwd, grad):
    x = as_t(x)
    arr = x.data
    out = fwd(arr, axis, keepdims)
    return make_result(out, (x,), lambda g: (grad(g, arr, out),), name, x._device)


def _sum(x, axis, keepdims):
    return _reduce(
        SUM,
        x,
        axis,
        keepdims,
        lambda a, ax, kd: a.sum(axis=ax, keepdims=kd),
        lambda g, a, o: _expand(g, a.shape, axis, keepdims).astype(a.dtype, copy=False),
    )


def _mean(x, axis, keepdims):
    def grad(g, a, o):
        # scale the reduced gradient, then broadcast it: no full-size array is written
        return _expand(g / _count(a.shape, axis), a.shape, axis, keepdims).astype(
            a.dtype, copy=False
        )

    return _reduce(MEAN, x, axis, keepdims, lambda a, ax, kd: a.mean(axis=ax, keepdims=kd), grad)


def _check_not_empty(name: str, shape: tuple, axis) -> None:
    """Called when NumPy refused a reduction: if it was over zero elements, raise an error that
    says so in the user's terms (NumPy's reads "zero-size array to reduction operation maximum
    which has no identity")."""
    if _count(shape, axis):
        return
    what = (
        f"an empty tensor of shape {shape}"
        if axis is None
        else f"axis={axis} of length 0 in a tensor of shape {shape}"
    )
    raise EveryOShapeError(
        f"{name}() needs at least one element to reduce, got {what}; {name} has no value for "
        f"zero elements (unlike sum(), which gives 0): check x.numel() > 0 first, or reduce "
        f"along an axis that has elements"
    ) from None


def _extreme(name, x, axis, keepdims):
    def fwd(a, ax, kd):
        try:
            return getattr(a, name)(axis=ax, keepdims=kd)
        except ValueError:
            _check_not_empty(name, a.shape, ax)
            raise

    def grad(g, a, o):
        ok = o if keepdims or not a.ndim else namespace_of(a).expand_dims(o, _axes(axis, a.ndim))
        mask = a == ok
        # ties share the gradient equally
        share = mask / mask.sum(axis=_axes(axis, a.ndim), keepdims=True)
        return (_expand(g, a.shape, axis, keepdims) * share).astype(a.dtype, copy=False)

    return _reduce(name, x, axis, keepdims, fwd, grad)


def _var(x, axis, keepdims, ddof):
    x = as_t(x)
    arr = x.data
    out = arr.var(axis=axis, keepdims=keepdims, ddof=ddof)

    def backward(g):
        centred = arr - arr.mean(axis=axis, keepdims=True)
        n = _count(arr.shape, axis) - ddof
        scaled = _expand(g * (2.0 / n), arr.shape, axis, keepdims)
        return ((scaled * centred).astype(arr.dtype, copy=False),)

    return make_result(out, (x,), backward, VAR, x._device)


def _logsumexp(x, axis, keepdims):
    x = as_t(x)
    arr = x.data
    xp = namespace_of(arr)
    try:
        m = arr.max(axis=axis, keepdims=True)
    except ValueError:
        _check_not_empty("logsumexp", arr.shape, axis)
        raise
    m = xp.where(xp.isfinite(m), m, 0)
    e = xp.exp(arr - m)
    s = e.sum(axis=axis, keepdims=True)
    out_k = xp.log(s) + m
    out = out_k if keepdims else out_k.reshape(_reduced_shape(arr.shape, axis))

    def backward(g):
        return ((_expand(g, arr.shape, axis, keepdims)) * (e / s),)

    return make_result(out, (x,), backward, LOGSUMEXP, x._device)


def _reduced_shape(shape, axis):
    axes = set(_axes(axis, len(shape)))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def _kw(axis, dim, keepdims, keepdim):
    return norm_axis(axis, dim), bool(keepdims if keepdim is None else keepdim)


def _max(x, axis, keepdims):
    return _extreme(MAX, x, axis, keepdims)


def _min(x, axis, keepdims):
    return _extreme(MIN, x, axis, keepdims)


sum = reduction(  # noqa: A001
    SUM,
    _sum,
    "sum",
    "Sum over ``axis`` (all axes by default); ``dim``/``keepdim`` are accepted too.",
)
mean = reduction(MEAN, _mean, "mean", "Arithmetic mean over ``axis``.")
max = reduction(  # noqa: A001
    MAX, _max, "max", "Maximum over ``axis`` (values only; use :func:`argmax` for indices)."
)
min = reduction(MIN, _min, "min", "Minimum over ``axis``.")  # noqa: A001


def var(x, axis=None, keepdims=False, *, ddof=0, dim=None, keepdim=None):
    """Variance over ``axis`` with ``ddof`` (NumPy's default 0: the population variance)."""
    axis, keepdims = _kw(axis, dim, keepdims, keepdim)
    return dispatch(VAR, _var, x, axis, keepdims, ddof)


def variance(a, axis=None, keepdims=False):
    """The population variance (``ddof=0``) of ``a`` over ``axis`` (an int, a tuple, or None for
    every element): reference EveryO's name for ``var(a, axis, keepdims)``, differentiable.

    An axis outside the tensor's rank raises :class:`~everyo.errors.EveryOShapeError`.

    >>> import everyo as eo
    >>> eo.variance(eo.tensor([1.0, 2.0, 3.0, 4.0])).item()
    1.25
    """
    a = as_t(a)
    if a.dtype.kind != "f":  # the reference's tensors of integers or bools are float32
        a = a.astype("float32")
    for ax in axis if isinstance(axis, (tuple, list)) else (() if axis is None else (axis,)):
        if not -a.ndim <= int(ax) < (a.ndim or 1):
            raise EveryOShapeError(
                f"variance: axis {ax} is out of range for a tensor of {a.ndim} dims (shape "
                f"{tuple(a.shape)}); use an axis in [-{a.ndim}, {a.ndim - 1}] or None"
            )
    return var(a, tuple(axis) if isinstance(axis, list) else axis, keepdims)


def std(x, axis=None, keepdims=False, *, ddof=0, dim=None, keepdim=None):
    """Standard deviation: ``sqrt(var(x))``."""
    from everyo.core.ops.elementwise import sqrt

    return sqrt(var(x, axis, keepdims, ddof=ddof, dim=dim, keepdim=keepdim))


def logsumexp(x, axis=None, keepdims=False, *, dim=None, keepdim=None):
    """``log(sum(exp(x)))`` computed stably (the maximum is subtracted first)."""
    axis, keepdims = _kw(axis, dim, keepdims, keepdim)
    return dispatch(LOGSUMEXP, _logsumexp, x, axis, keepdims)


def _arg(name, x, axis, keepdims):
    x = as_t(x)
    try:
        out = getattr(x.data, name)(axis=axis, keepdims=keepdims)
    except ValueError:
        _check_not_empty(name, x.data.shape, axis)
        raise
    return Tensor._make(namespace_of(out).asarray(out, dtype="int64"), x._device)


def argmax(x, axis=None, keepdims=False, *, dim=None, keepdim=None):
    """Indices of the maxima (int64, not differentiable)."""
    axis, keepdims = _kw(axis, dim, keepdims, keepdim)
    return dispatch(ARGMAX, _arg, ARGMAX, x, axis, keepdims)


def argmin(x, axis=None, keepdims=False, *, dim=None, keepdim=None):
    """Indices of the minima (int64, not differentiable)."""
    axis, keepdims = _kw(axis, dim, keepdims, keepdim)
    return dispatch(ARGMIN, _arg, ARGMIN, x, axis, keepdims)
