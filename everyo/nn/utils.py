"""Gradient clipping: ``clip_grad_norm_`` and ``clip_grad_value_`` (in place on ``.grad``)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from everyo.core.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _grads(parameters) -> list:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float) -> float:
    """Scale all gradients together so that their global L2 norm is at most ``max_norm``.

    Returns the norm before clipping (``inf``/``nan`` when a gradient is not finite; the
    gradients are then left alone so a GradScaler can skip the step).
    """
    grads = _grads(parameters)
    if not grads:
        return 0.0
    total = 0.0
    for g in grads:
        a = g.data
        total += float((a.astype("float64", copy=False) ** 2).sum())
    norm = math.sqrt(total)
    if math.isfinite(norm) and norm > max_norm:
        factor = max_norm / (norm + 1e-6)
        for g in grads:
            g.data *= factor
    return norm


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float) -> None:
    """Clamp every gradient element into ``[-clip_value, clip_value]``."""
    for g in _grads(parameters):
        xp = g.xp
        xp.clip(g.data, -clip_value, clip_value, out=g.data)
