"""Elementwise ops with broadcasting: arithmetic, exp/log family, clip, where, comparisons."""

from __future__ import annotations

import numbers

import numpy as np

from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.ops._dispatch import dispatch
from everyo.core.ops._util import (
    as_t,
    check_same_device,
    data,
    operands,
    shape_error,
    tensors,
    unbroadcast,
)
from everyo.core.tensor import Tensor

__all__ = [
    "add", "subtract", "multiply", "divide", "negative", "power", "exp", "log", "sqrt", "abs",
    "clip", "maximum", "minimum", "where", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal",
]  # fmt: skip


def _binary(name, a, b, fwd, da, db):
    """Forward ``fwd(x, y)``; ``da``/``db(g, x, y, out)`` give the unreduced input gradients."""
    a, b, dev = operands(a, b)
    x, y = data(a), data(b)
    try:
        out = fwd(x, y)
    except ValueError as exc:
        raise shape_error(name, a, b, exc) from None

    def backward(g):
        grads = []
        if isinstance(a, Tensor):
            grads.append(unbroadcast(da(g, x, y, out), a.shape) if a.requires_grad else None)
        if isinstance(b, Tensor):
            grads.append(unbroadcast(db(g, x, y, out), b.shape) if b.requires_grad else None)
        return grads

    return make_result(out, tensors(a, b), backward, name, dev)


def _unary(name, x, fwd, dfn):
    """Forward ``fwd(arr)``; ``dfn(g, arr, out)`` is the input gradient."""
    x = as_t(x)
    arr = x.data
    out = fwd(arr)
    return make_result(out, (x,), lambda g: (dfn(g, arr, out),), name, x._device)


def _add(a, b):
    return _binary("add", a, b, lambda x, y: x + y, lambda g, *_: g, lambda g, *_: g)


def _subtract(a, b):
    return _binary("subtract", a, b, lambda x, y: x - y, lambda g, *_: g, lambda g, *_: -g)


def _multiply(a, b):
    return _binary(
        "multiply", a, b, lambda x, y: x * y, lambda g, x, y, o: g * y, lambda g, x, y, o: g * x
    )


def _divide(a, b):
    a, b, dev = operands(a, b)
    x, y = data(a), data(b)
    try:
        out = x / y
    except ValueError as exc:
        raise shape_error("divide", a, b, exc) from None

    def backward(g):
        ga = g / y  # shared: d/da = g / y and d/db = -(g / y) * out
        grads = []
        if isinstance(a, Tensor):
            grads.append(unbroadcast(ga, a.shape) if a.requires_grad else None)
        if isinstance(b, Tensor):
            gb = None
            if b.requires_grad:
                gb = ga * out
                gb *= -1  # in place on the fresh product: one pass fewer than -(ga) * out
                gb = unbroadcast(gb, b.shape)
            grads.append(gb)
        return grads

    return make_result(out, tensors(a, b), backward, "divide", dev)


def _power(a, b):
    def d_base(g, x, y, o):
        return g * y * x ** (y - 1)

    def d_exp(g, x, y, o):
        xp = namespace_of(o)
        return g * o * xp.log(xp.where(x > 0, x, 1))

    return _binary("power", a, b, lambda x, y: x**y, d_base, d_exp)


def _maximum(a, b):
    return _binary(
        "maximum",
        a,
        b,
        lambda x, y: _xp(x, y).maximum(x, y),
        lambda g, x, y, o: g * (x >= y),
        lambda g, x, y, o: g * (x < y),
    )


def _minimum(a, b):
    return _binary(
        "minimum",
        a,
        b,
        lambda x, y: _xp(x, y).minimum(x, y),
        lambda g, x, y, o: g * (x <= y),
        lambda g, x, y, o: g * (x > y),
    )


def _xp(*arrays):
    for a in arrays:
        if not isinstance(a, numbers.Number):
            return namespace_of(a)
    return np


def add(a, b):
    """``a + b`` with broadcasting."""
    return dispatch("add", _add, a, b)


def subtract(a, b):
    """``a - b`` with broadcasting."""
    return dispatch("subtract", _subtract, a, b)


def multiply(a, b):
    """``a * b`` with broadcasting."""
    return dispatch("multiply", _multiply, a, b)


def divide(a, b):
    """``a / b`` with broadcasting."""
    return dispatch("divide", _divide, a, b)


def power(a, b):
    """``a ** b`` with broadcasting (differentiable in both; the exponent's gradient uses
    ``log(a)`` where ``a > 0``)."""
    return dispatch("power", _power, a, b)


def maximum(a, b):
    """Elementwise maximum (ties send the gradient to ``a``)."""
    return dispatch("maximum", _maximum, a, b)


def minimum(a, b):
    """Elementwise minimum (ties send the gradient to ``a``)."""
    return dispatch("minimum", _minimum, a, b)


def negative(x):
    """``-x``."""
    return dispatch("negative", _unary, "negative", x, lambda a: -a, lambda g, a, o: -g)


def exp(x):
    """``e ** x``."""
    return dispatch("exp", _unary, "exp", x, lambda a: _xp(a).exp(a), lambda g, a, o: g * o)


def log(x):
    """Natural logarithm."""
    return dispatch("log", _unary, "log", x, lambda a: _xp(a).log(a), lambda g, a, o: g / a)


def sqrt(x):
    """Square root."""
    return dispatch(
        "sqrt", _unary, "sqrt", x, lambda a: _xp(a).sqrt(a), lambda g, a, o: g / (2 * o)
    )


def abs(x):  # noqa: A001 - the NumPy/PyTorch name
    """Absolute value (gradient ``sign(x)``, 0 at 0)."""
    return dispatch(
        "abs", _unary, "abs", x, lambda a: _xp(a).abs(a), lambda g, a, o: g * _xp(a).sign(a)
    )


def clip(x, min=None, max=None):  # noqa: A002 - PyTorch's clamp(min=, max=) names
    """Limit values to ``[min, max]``; the gradient is zero where clipping happened."""

    min, max = data(min), data(max)  # noqa: A001 - tensor bounds act as constants

    def fwd(a):
        return _xp(a).clip(a, min, max)

    def grad(g, a, o):
        mask = True
        if min is not None:
            mask = mask & (a >= min)
        if max is not None:
            mask = mask & (a <= max)
        return g * mask

    return dispatch("clip", _unary, "clip", x, fwd, grad)


def _where(cond, a, b):
    cond_arr = data(cond)
    a, b, dev = operands(a, b)
    if isinstance(cond, Tensor):
        check_same_device(*tensors(a, b), cond)
    x, y = data(a), data(b)
    xp = _xp(x, y, cond_arr)
    try:
        out = xp.where(cond_arr, x, y)
    except ValueError as exc:
        raise shape_error("where", a, b, exc) from None
    zero = out.dtype.type(0)

    def backward(g):
        grads = []
        if isinstance(a, Tensor):
            ga = xp.where(cond_arr, g, zero) if a.requires_grad else None
            grads.append(None if ga is None else unbroadcast(ga, a.shape))
        if isinstance(b, Tensor):
            gb = xp.where(cond_arr, zero, g) if b.requires_grad else None
            grads.append(None if gb is None else unbroadcast(gb, b.shape))
        return grads

    return make_result(out, tensors(a, b), backward, "where", dev)


def where(condition, a, b):
    """``a`` where ``condition`` is true, else ``b`` (differentiable in ``a`` and ``b``)."""
    return dispatch("where", _where, condition, a, b)


def _compare(name, fwd):
    def impl(a, b):
        a, b, dev = operands(a, b)
        try:
            return Tensor._make(fwd(data(a), data(b)), dev)
        except ValueError as exc:
            raise shape_error(name, a, b, exc) from None

    def op(a, b):
        return dispatch(name, impl, a, b)

    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}`` comparison: a boolean tensor, not differentiable."
    return op


equal = _compare("equal", lambda x, y: x == y)
not_equal = _compare("not_equal", lambda x, y: x != y)
less = _compare("less", lambda x, y: x < y)
less_equal = _compare("less_equal", lambda x, y: x <= y)
greater = _compare("greater", lambda x, y: x > y)
greater_equal = _compare("greater_equal", lambda x, y: x >= y)
