"""Matrix products: ``matmul`` (every rank combination, batched, broadcasting) and ``dot``."""

from __future__ import annotations

from everyo.core import autocast as _autocast
from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.ops._dispatch import binary, dispatch, reflected
from everyo.core.ops._util import as_t, check_same_device, dense, unbroadcast
from everyo.errors import EveryOShapeError
from everyo.profiler.recording import flops as _flops
from everyo.profiler.recording.flops import declare

__all__ = ["matmul", "dot"]

MATMUL = declare("matmul", _flops.MATMUL)
DOT = declare("dot", _flops.MATMUL)


def fold(x, y):
    """``x (..., K) @ y (K, N)`` as one 2-D product: one large GEMM is several times faster than
    NumPy's loop of small ones over the leading dims."""
    return (x.reshape(-1, x.shape[-1]) @ y).reshape(x.shape[:-1] + (y.shape[-1],))


def product(x, y):
    """``x @ y``, folding the leading dims of ``x`` when ``y`` is a matrix."""
    if x.ndim > 2 and y.ndim == 2:
        return fold(x, y)
    return x @ y


def _matmul_grads(g, a, b, need_a=True, need_b=True):
    """Gradients of ``a @ b`` for any ranks (1-D operands promoted as NumPy does)."""
    g = dense(g)
    if a.ndim == 2 and b.ndim == 2:  # the common case, without reshapes
        return (g @ b.T if need_a else None), (a.T @ g if need_b else None)
    if a.ndim == 1 and b.ndim == 1:  # inner product: g is a scalar
        return g * b, g * a
    if a.ndim > 2 and b.ndim == 2:  # a batch times one matrix: two large GEMMs, no batch sum
        ga = fold(g, b.T) if need_a else None
        gb = a.reshape(-1, a.shape[-1]).T @ g.reshape(-1, g.shape[-1]) if need_b else None
        return ga, gb
    xp = namespace_of(g)
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = xp.expand_dims(g2, -2)
    if b.ndim == 1:
        g2 = xp.expand_dims(g2, -1)
    ga = g2 @ xp.swapaxes(b2, -1, -2)
    gb = xp.swapaxes(a2, -1, -2) @ g2
    return unbroadcast(ga, a2.shape).reshape(a.shape), unbroadcast(gb, b2.shape).reshape(b.shape)


def _matmul(a, b, name):
    a, b = as_t(a), as_t(b)
    dev = check_same_device(a, b)
    if _autocast.active_dtype() is not None:
        a, b = _autocast.cast_inputs(a, b)
    x, y = a.data, b.data
    if x.ndim == 0 or y.ndim == 0:
        raise EveryOShapeError("matmul needs tensors of at least 1 dimension; use multiply")
    try:
        out = product(x, y)
    except ValueError as exc:
        raise EveryOShapeError(
            f"matmul: shapes {a.shape} and {b.shape} do not fit (inner dims "
            f"{x.shape[-1]} and {y.shape[0] if y.ndim == 1 else y.shape[-2]} differ)"
        ) from exc

    def backward(g):
        ga, gb = _matmul_grads(g, x, y, a.requires_grad, b.requires_grad)
        return ga if a.requires_grad else None, gb if b.requires_grad else None

    return make_result(out, (a, b), backward, name, dev)


def _matmul_op(a, b):
    return _matmul(a, b, MATMUL)


matmul = binary(
    MATMUL,
    _matmul_op,
    product,
    """Matrix product with NumPy's rules: 1-D operands are vectors, leading dims broadcast.

    >>> import everyo as eo
    >>> eo.matmul(eo.ones(128, 256), eo.ones(256, 64)).shape
    (128, 64)
    """,
    autocast=True,
)
rmatmul = reflected(MATMUL, _matmul_op, product, "``other @ self``.")


def dot(a, b):
    """Inner product of two 1-D tensors (or ``matmul`` for higher ranks)."""
    return dispatch(DOT, _matmul, a, b, DOT)
