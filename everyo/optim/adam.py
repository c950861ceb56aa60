"""Adam (L2 weight decay folded into the gradient) and AdamW (decoupled weight decay)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from everyo.optim.optimizer import Optimizer

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma & Ba) with PyTorch's update rule and bias correction.

    ``m = b1 m + (1-b1) g``, ``v = b2 v + (1-b2) g²``,
    ``p -= lr / (1-b1^t) * m / (sqrt(v) / sqrt(1-b2^t) + eps)``; ``weight_decay`` adds
    ``weight_decay * p`` to ``g`` first.
    """

    _decoupled = False

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        if lr < 0 or eps < 0 or weight_decay < 0:
            raise ValueError(f"{type(self).__name__} needs lr, eps, weight_decay >= 0")
        if not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"betas must lie in [0, 1), got {betas}")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)

    def _step(self) -> None:
        for group in self.param_groups:
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g, data = p.grad.data, p.data
                st = self._state_for(p)
                if not st:
                    xp = p.xp
                    st["step"] = 0
                    st["exp_avg"] = xp.zeros_like(data)
                    st["exp_avg_sq"] = xp.zeros_like(data)
                st["step"] = t = st["step"] + 1
                if wd:
                    if self._decoupled:
                        data *= 1 - lr * wd
                    else:
                        g = g + wd * data
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m *= b1
                m += (1 - b1) * g
                v *= b2
                v += (1 - b2) * (g * g)
                step_size = lr / (1 - b1**t)
                denom = p.xp.sqrt(v)
                denom *= 1 / math.sqrt(1 - b2**t)
                denom += eps
                denom = m / denom
                denom *= step_size
                data -= denom


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): ``p *= 1 - lr * weight_decay``
    before the Adam update; default ``weight_decay=0.01`` as in PyTorch."""

    _decoupled = True

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
    ) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
