"""FLOP and byte counts per op, from the shapes of its inputs and output.

The counts are the usual analytic ones (a multiply-add is 2 FLOPs); bytes moved are the bytes of
the tensor inputs plus the output, a lower bound on memory traffic. An op this table does not
know gets ``-1`` FLOPs (unknown), never a guess.
"""

from __future__ import annotations

from math import prod

ELEMENTWISE = frozenset(
    "add sub mul div neg abs exp log sqrt rsqrt pow maximum minimum relu leaky_relu sigmoid tanh "
    "where clamp clip square reciprocal sign dropout eq ne lt le gt ge silu "
    "addcmul addcdiv lerp".split()
)
REDUCTIONS = frozenset(
    "sum mean max min var std argmax argmin amax amin prod logsumexp norm".split()
)
COSTLY_ELEMENTWISE = {
    "gelu": 8,
    "softplus": 4,
    "elu": 4,
    "softmax": 5,
    "log_softmax": 5,
    "layer_norm": 8,
    "batch_norm": 8,
    "group_norm": 8,
    "cross_entropy": 6,
    "nll_loss": 1,
    "mse_loss": 3,
    "embedding": 0,
}
FREE = frozenset(
    "reshape view transpose permute expand squeeze unsqueeze flatten getitem "
    "contiguous detach clone copy to cat stack split chunk pad zeros ones full "
    "zeros_like ones_like empty arange randn rand".split()
)


def _shape(x):
    return getattr(x, "shape", None)


def _nbytes(x) -> int:
    nb = getattr(x, "nbytes", None)
    if nb is None:
        nb = getattr(getattr(x, "data", None), "nbytes", 0)
    if isinstance(x, (tuple, list)):
        return sum(_nbytes(i) for i in x)
    return int(nb or 0)


def _size(x) -> int:
    s = _shape(x)
    return prod(s) if s is not None else 0


def _tensors(args) -> list:
    return [a for a in args if _shape(a) is not None]


def matmul_flops(a_shape, b_shape, out_size: int) -> int:
    """``2 * k`` per output element, ``k`` the contracted dimension."""
    return 2 * out_size * (a_shape[-1] if len(a_shape) else 1)


def conv_flops(weight_shape, out_size: int) -> int:
    """``2 * (C_in/groups * kh * kw)`` per output element."""
    return 2 * out_size * prod(weight_shape[1:])


def attention_flops(q_shape, k_shape) -> int:
    """``QK^T`` plus ``AV``: ``4 * batch * L_q * L_k * d``."""
    return 4 * prod(q_shape[:-1]) * k_shape[-2] * q_shape[-1]


def count_flops(name: str, args, kwargs, out) -> int:
    """FLOPs of op ``name`` called with ``args``/``kwargs`` that returned ``out`` (-1: unknown)."""
    ts = _tensors(args) + _tensors(kwargs.values())
    out_size = _size(out) if _shape(out) is not None else sum(_size(o) for o in _tensors(out or ()))
    base = name.rsplit(".", 1)[-1]
    if base in ("matmul", "mm", "bmm", "dot", "linear") and len(ts) >= 2:
        flops = matmul_flops(_shape(ts[0]), _shape(ts[1]), out_size)
        return flops + (out_size if base == "linear" and len(ts) > 2 else 0)
    if base.startswith("conv") and len(ts) >= 2:
        return conv_flops(_shape(ts[1]), out_size) + (out_size if len(ts) > 2 else 0)
    if base in ("scaled_dot_product_attention", "attention") and len(ts) >= 3:
        return attention_flops(_shape(ts[0]), _shape(ts[1]))
    if base in ELEMENTWISE:
        return out_size
    if base in REDUCTIONS:
        return _size(ts[0]) if ts else 0
    if base in COSTLY_ELEMENTWISE:
        return COSTLY_ELEMENTWISE[base] * (_size(ts[0]) if ts else out_size)
    if base in FREE:
        return 0
    if base.endswith("pool2d") or base.endswith("pool1d"):
        return _size(ts[0]) if ts else 0
    return -1


def estimate(name: str, args, kwargs, out) -> tuple[int, int]:
    """``(flops, bytes moved)`` of one op call."""
    moved = sum(_nbytes(a) for a in _tensors(args))
    moved += sum(_nbytes(v) for v in _tensors(kwargs.values()))
    return count_flops(name, args, kwargs, out), moved + _nbytes(out)
