"""Weight initialisation, seeded: the same ``seed`` gives the same values on every device.

Values are drawn on the host with NumPy's ``default_rng(seed)`` and written into the tensor in
place. Without a seed the generator of :func:`everyo.manual_seed` is used, so
``eo.manual_seed(0)`` makes a whole model reproducible.
"""

from __future__ import annotations

import math

import numpy as np

from everyo.core.tensor import Tensor

__all__ = [
    "rng", "uniform_", "normal_", "zeros_", "ones_", "constant_", "kaiming_uniform_",
    "xavier_uniform_", "fan_in_and_fan_out", "layer_default_",
]  # fmt: skip


def rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A generator for ``seed`` (an int, a Generator, or None for the global one)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        from everyo.core.ops import creation

        return creation.global_rng()
    return np.random.default_rng(seed)


def _write(t: Tensor, values: np.ndarray) -> Tensor:
    t.data[...] = t.xp.asarray(values.astype(t.dtype, copy=False))
    return t


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, *, seed=None) -> Tensor:
    """Fill ``t`` with samples from U(a, b)."""
    return _write(t, rng(seed).uniform(a, b, t.shape))


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, *, seed=None) -> Tensor:
    """Fill ``t`` with samples from N(mean, std²)."""
    return _write(t, rng(seed).normal(mean, std, t.shape))


def constant_(t: Tensor, value: float) -> Tensor:
    t.data[...] = value
    return t


def zeros_(t: Tensor) -> Tensor:
    return constant_(t, 0)


def ones_(t: Tensor) -> Tensor:
    return constant_(t, 1)


def fan_in_and_fan_out(shape: tuple) -> tuple[int, int]:
    """PyTorch's fans for a weight of ``shape`` ``(out, in, *kernel)``."""
    if len(shape) < 2:
        raise ValueError(f"fans need a weight of at least 2 dims, got shape {shape}")
    receptive = math.prod(shape[2:]) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def kaiming_uniform_(t: Tensor, a: float = math.sqrt(5), *, seed=None) -> Tensor:
    """He-uniform with PyTorch's default ``a=sqrt(5)``: bound ``1/sqrt(fan_in)`` for Linear."""
    fan_in, _ = fan_in_and_fan_out(t.shape)
    gain = math.sqrt(2.0 / (1 + a * a))
    bound = math.sqrt(3.0) * gain / math.sqrt(fan_in)
    return uniform_(t, -bound, bound, seed=seed)


def xavier_uniform_(t: Tensor, gain: float = 1.0, *, seed=None) -> Tensor:
    """Glorot-uniform: bound ``gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = fan_in_and_fan_out(t.shape)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound, seed=seed)


def layer_default_(weight: Tensor, bias: Tensor | None = None, *, seed=None) -> None:
    """PyTorch's default init of ``Linear`` and ``Conv2d``: ``kaiming_uniform_(a=sqrt(5))`` for
    the weight, then the bias uniform in ``±1/sqrt(fan_in)``, both from one generator."""
    gen = rng(seed)
    kaiming_uniform_(weight, a=math.sqrt(5), seed=gen)
    if bias is not None:
        bound = 1.0 / math.sqrt(fan_in_and_fan_out(weight.shape)[0])
        uniform_(bias, -bound, bound, seed=gen)
