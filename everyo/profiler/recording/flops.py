"""FLOP and byte counts per op, from the shapes of its inputs and output.

The op table: each engine op declares its cost where it is defined, with the same name constant
its dispatch uses::

    ADD = declare("add", ELEMENTWISE)

    def add(a, b):
        return dispatch(ADD, _add, a, b)

so that the name the profiler records and the cost it looks up cannot drift apart (a test checks
that every dispatched op is declared). A cost is a function ``(tensor inputs, output elements)
-> FLOPs``; :data:`NO_FLOPS` says explicitly that an op does no arithmetic (reshape, creation,
copies). The counts are the usual analytic ones (a multiply-add is 2 FLOPs); bytes moved are the
bytes of the tensor inputs plus the output, a lower bound on memory traffic. An op the table does
not know gets ``-1`` FLOPs (unknown), never a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod

Cost = Callable[[list, int], int]
"""``cost(tensor_inputs, output_elements) -> FLOPs``; inputs in call order, shapes only read."""

COSTS: dict[str, Cost] = {}
"""The op table: op name (as dispatched and recorded) -> its cost function."""


def declare(name: str, cost: Cost) -> str:
    """Enter op ``name`` with ``cost`` in the table; returns ``name`` for the dispatch call.

    Declaring one name with two different costs is an error (two ops would share an identity).
    """
    known = COSTS.get(name)
    if known is not None and known is not cost:
        raise ValueError(f"op {name!r} is already declared with another cost ({known.__name__})")
    COSTS[name] = cost
    return name


def _size(x) -> int:
    s = getattr(x, "shape", None)
    return prod(s) if s is not None else 0


def ELEMENTWISE(ts: list, out_size: int) -> int:  # noqa: N802 - a table constant
    """One FLOP per output element (add, multiply, exp, relu, comparisons...)."""
    return out_size


def REDUCTION(ts: list, out_size: int) -> int:  # noqa: N802
    """One FLOP per input element (sum, mean, max, argmax...)."""
    return _size(ts[0]) if ts else 0


def NO_FLOPS(ts: list, out_size: int) -> int:  # noqa: N802
    """No arithmetic: views, copies, creation, indexing, dtype and device moves."""
    return 0


def per_element(k: int) -> Cost:
    """``k`` FLOPs per element of the first input (fused ops: softmax 5, gelu 8, norms 8...)."""

    def cost(ts: list, out_size: int) -> int:
        return k * (_size(ts[0]) if ts else out_size)

    cost.__name__ = f"per_element({k})"
    return cost


def MATMUL(ts: list, out_size: int) -> int:  # noqa: N802
    """``2 * k`` per output element, ``k`` the contracted dimension."""
    return matmul_flops(ts[0].shape, ts[1].shape, out_size) if len(ts) >= 2 else 0


def LINEAR(ts: list, out_size: int) -> int:  # noqa: N802
    """A matmul plus one add per output element when there is a bias."""
    return MATMUL(ts, out_size) + (out_size if len(ts) > 2 else 0)


def CONV(ts: list, out_size: int) -> int:  # noqa: N802
    """``2 * (C_in/groups * kh * kw)`` per output element, plus the bias."""
    if len(ts) < 2:
        return 0
    return conv_flops(ts[1].shape, out_size) + (out_size if len(ts) > 2 else 0)


def ATTENTION(ts: list, out_size: int) -> int:  # noqa: N802
    """``QK^T`` plus ``AV``."""
    return attention_flops(ts[0].shape, ts[1].shape) if len(ts) >= 3 else 0


def matmul_flops(a_shape, b_shape, out_size: int) -> int:
    """``2 * k`` per output element, ``k`` the contracted dimension."""
    return 2 * out_size * (a_shape[-1] if len(a_shape) else 1)


def conv_flops(weight_shape, out_size: int) -> int:
    """``2 * (C_in/groups * kh * kw)`` per output element."""
    return 2 * out_size * prod(weight_shape[1:])


def attention_flops(q_shape, k_shape) -> int:
    """``QK^T`` plus ``AV``: ``4 * batch * L_q * L_k * d``."""
    return 4 * prod(q_shape[:-1]) * k_shape[-2] * q_shape[-1]


def _nbytes(x) -> int:
    if isinstance(x, (tuple, list)):
        return sum(_nbytes(i) for i in x)
    nb = getattr(x, "nbytes", None)
    if nb is None:
        nb = getattr(getattr(x, "data", None), "nbytes", 0)
    return int(nb or 0)


def _tensors(args) -> list:
    """The array-like arguments, with the members of a list argument (concatenate, stack)."""
    out = []
    for a in args:
        if getattr(a, "shape", None) is not None:
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(x for x in a if getattr(x, "shape", None) is not None)
    return out


def count_flops(name: str, args, kwargs, out) -> int:
    """FLOPs of op ``name`` called with ``args``/``kwargs`` that returned ``out`` (-1: unknown)."""
    cost = COSTS.get(name)
    if cost is None:
        return -1
    ts = _tensors(args) + _tensors(kwargs.values())
    if getattr(out, "shape", None) is not None:
        out_size = _size(out)
    else:
        out_size = sum(_size(o) for o in _tensors(out or ()))
    return int(cost(ts, out_size))


def estimate(name: str, args, kwargs, out) -> tuple[int, int]:
    """``(flops, bytes moved)`` of one op call."""
    moved = sum(_nbytes(a) for a in _tensors(args))
    moved += sum(_nbytes(v) for v in _tensors(kwargs.values()))
    return count_flops(name, args, kwargs, out), moved + _nbytes(out)
