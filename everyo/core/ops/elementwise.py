"""Elementwise ops with broadcasting: arithmetic, exp/log family, clip, where, comparisons."""

from __future__ import annotations

import numbers
import operator as _operator

import numpy as np

from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.ops._dispatch import binary, dispatch, reflected, unary
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
from everyo.profiler.recording.flops import ELEMENTWISE, declare

__all__ = [
    "add", "subtract", "multiply", "divide", "negative", "power", "exp", "log", "sqrt", "abs",
    "clip", "maximum", "minimum", "where", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal",
]  # fmt: skip


ADD = declare("add", ELEMENTWISE)
SUBTRACT = declare("subtract", ELEMENTWISE)
MULTIPLY = declare("multiply", ELEMENTWISE)
DIVIDE = declare("divide", ELEMENTWISE)
POWER = declare("power", ELEMENTWISE)
MAXIMUM = declare("maximum", ELEMENTWISE)
MINIMUM = declare("minimum", ELEMENTWISE)
NEGATIVE = declare("negative", ELEMENTWISE)
EXP = declare("exp", ELEMENTWISE)
LOG = declare("log", ELEMENTWISE)
SQRT = declare("sqrt", ELEMENTWISE)
ABS = declare("abs", ELEMENTWISE)
CLIP = declare("clip", ELEMENTWISE)
WHERE = declare("where", ELEMENTWISE)
EQUAL = declare("equal", ELEMENTWISE)
NOT_EQUAL = declare("not_equal", ELEMENTWISE)
LESS = declare("less", ELEMENTWISE)
LESS_EQUAL = declare("less_equal", ELEMENTWISE)
GREATER = declare("greater", ELEMENTWISE)
GREATER_EQUAL = declare("greater_equal", ELEMENTWISE)


def _binary(name, a, b, fwd, da, db):
    """Forward ``fwd(x, y)``; ``da``/``db(g, x, y, out)`` give the unreduced input gradients."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a._device is b._device:
        dev, ta, tb = a._device, True, True  # the common case, without operands()
    else:
        a, b, dev = operands(a, b)
        ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    x = a.data if ta else a
    y = b.data if tb else b
    try:
        out = fwd(x, y)
    except ValueError as exc:
        raise shape_error(name, a, b, exc) from None

    def backward(g):
        grads = []
        if ta:
            grads.append(unbroadcast(da(g, x, y, out), a.shape) if a.requires_grad else None)
        if tb:
            grads.append(unbroadcast(db(g, x, y, out), b.shape) if b.requires_grad else None)
        return grads

    parents = (a, b) if ta and tb else (a,) if ta else (b,)
    return make_result(out, parents, backward, name, dev)


def _unary(name, x, fwd, dfn):
    """Forward ``fwd(arr)``; ``dfn(g, arr, out)`` is the input gradient."""
    x = as_t(x)
    arr = x.data
    out = fwd(arr)
    return make_result(out, (x,), lambda g: (dfn(g, arr, out),), name, x._device)


def _grad_a(g, x, y, o):
    return g


def _grad_neg(g, x, y, o):
    return -g


def _add(a, b):
    return _binary(ADD, a, b, _operator.add, _grad_a, _grad_a)


def _subtract(a, b):
    return _binary(SUBTRACT, a, b, _operator.sub, _grad_a, _grad_neg)


def _multiply(a, b):
    return _binary(
        MULTIPLY, a, b, _operator.mul, lambda g, x, y, o: g * y, lambda g, x, y, o: g * x
    )


def _divide(a, b):
    a, b, dev = operands(a, b)
    x, y = data(a), data(b)
    try:
        out = x / y
    except ValueError as exc:
        raise shape_error(DIVIDE, a, b, exc) from None

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

    return make_result(out, tensors(a, b), backward, DIVIDE, dev)


def _power(a, b):
    def d_base(g, x, y, o):
        return g * y * x ** (y - 1)

    def d_exp(g, x, y, o):
        xp = namespace_of(o)
        return g * o * xp.log(xp.where(x > 0, x, 1))

    return _binary(POWER, a, b, _operator.pow, d_base, d_exp)


def _max2(x, y):
    return _xp(x, y).maximum(x, y)


def _min2(x, y):
    return _xp(x, y).minimum(x, y)


def _maximum(a, b):
    return _binary(
        MAXIMUM, a, b, _max2, lambda g, x, y, o: g * (x >= y), lambda g, x, y, o: g * (x < y)
    )


def _minimum(a, b):
    return _binary(
        MINIMUM, a, b, _min2, lambda g, x, y, o: g * (x <= y), lambda g, x, y, o: g * (x > y)
    )


def _xp(*arrays):
    for a in arrays:
        if not isinstance(a, numbers.Number):
            return namespace_of(a)
    return np


add = binary(ADD, _add, _operator.add, "``a + b`` with broadcasting.")
subtract = binary(SUBTRACT, _subtract, _operator.sub, "``a - b`` with broadcasting.")
multiply = binary(MULTIPLY, _multiply, _operator.mul, "``a * b`` with broadcasting.")
divide = binary(DIVIDE, _divide, _operator.truediv, "``a / b`` with broadcasting.")
power = binary(
    POWER,
    _power,
    _operator.pow,
    "``a ** b`` with broadcasting (differentiable in both; the exponent's gradient uses "
    "``log(a)`` where ``a > 0``).",
)
maximum = binary(MAXIMUM, _maximum, _max2, "Elementwise maximum (ties send the gradient to ``a``).")
minimum = binary(MINIMUM, _minimum, _min2, "Elementwise minimum (ties send the gradient to ``a``).")

# the reflected operators of Tensor (``2 - t`` is ``t.__rsub__(2)``)
radd = reflected(ADD, _add, _operator.add, "``other + self``.")
rsubtract = reflected(SUBTRACT, _subtract, _operator.sub, "``other - self``.")
rmultiply = reflected(MULTIPLY, _multiply, _operator.mul, "``other * self``.")
rdivide = reflected(DIVIDE, _divide, _operator.truediv, "``other / self``.")
rpower = reflected(POWER, _power, _operator.pow, "``other ** self``.")


def _negative(x):
    return _unary(NEGATIVE, x, _operator.neg, lambda g, a, o: -g)


def _exp(x):
    return _unary(EXP, x, lambda a: _xp(a).exp(a), lambda g, a, o: g * o)


def _log(x):
    return _unary(LOG, x, lambda a: _xp(a).log(a), lambda g, a, o: g / a)


def _sqrt(x):
    return _unary(SQRT, x, lambda a: _xp(a).sqrt(a), lambda g, a, o: g / (2 * o))


def _abs(x):
    return _unary(ABS, x, lambda a: _xp(a).abs(a), lambda g, a, o: g * _xp(a).sign(a))


negative = unary(NEGATIVE, _negative, np.negative, "``-x``.")
exp = unary(EXP, _exp, np.exp, "``e ** x``.")
log = unary(LOG, _log, np.log, "Natural logarithm.")
sqrt = unary(SQRT, _sqrt, np.sqrt, "Square root.")
abs = unary(ABS, _abs, np.abs, "Absolute value (gradient ``sign(x)``, 0 at 0).")  # noqa: A001


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

    return dispatch(CLIP, _unary, CLIP, x, fwd, grad)


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
        raise shape_error(WHERE, a, b, exc) from None
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

    return make_result(out, tensors(a, b), backward, WHERE, dev)


def where(condition, a, b):
    """``a`` where ``condition`` is true, else ``b`` (differentiable in ``a`` and ``b``)."""
    return dispatch(WHERE, _where, condition, a, b)


def _compare(name, fwd):
    def impl(a, b):
        a, b, dev = operands(a, b)
        try:
            return Tensor._make(fwd(data(a), data(b)), dev)
        except ValueError as exc:
            raise shape_error(name, a, b, exc) from None

    impl.__name__ = f"_{name}"
    impl.__module__ = __name__
    doc = f"Elementwise ``{name}`` comparison: a boolean tensor, not differentiable."
    return binary(name, impl, fwd, doc)


equal = _compare(EQUAL, _operator.eq)
not_equal = _compare(NOT_EQUAL, _operator.ne)
less = _compare(LESS, _operator.lt)
less_equal = _compare(LESS_EQUAL, _operator.le)
greater = _compare(GREATER, _operator.gt)
greater_equal = _compare(GREATER_EQUAL, _operator.ge)
