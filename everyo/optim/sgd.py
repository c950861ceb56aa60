"""Stochastic gradient descent with momentum, Nesterov momentum and weight decay."""

from __future__ import annotations

from collections.abc import Iterable

from everyo.optim.optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD with PyTorch's update rule.

    ``g = grad + weight_decay * p``; with momentum ``buf = momentum * buf + (1 - dampening) * g``
    (``buf = g`` on the first step) and ``g = buf`` (or ``g + momentum * buf`` with
    ``nesterov``); then ``p -= lr * g``.

    >>> import everyo as eo
    >>> w = eo.nn.Parameter(eo.ones(2))
    >>> (w * w).sum().backward()
    >>> eo.optim.SGD([w], lr=0.1).step()
    >>> w.tolist()
    [0.800000011920929, 0.800000011920929]
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 0.01,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ) -> None:
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(
                f"SGD needs lr, momentum and weight_decay >= 0 (got {lr}, {momentum}, "
                f"{weight_decay})"
            )
        if momentum >= 1:
            raise ValueError(f"SGD momentum must lie in [0, 1), got {momentum}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum needs momentum > 0 and dampening 0")
        defaults = dict(
            lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
            nesterov=nesterov,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _step(self) -> None:
        for group in self.param_groups:
            lr, mom, damp = group["lr"], group["momentum"], group["dampening"]
            wd, nesterov = group["weight_decay"], group["nesterov"]
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                g = g.data
                if wd:
                    g = g + wd * p.data
                if mom:
                    st = self._state_for(p)
                    buf = st.get("momentum_buffer")
                    if buf is None:
                        buf = st["momentum_buffer"] = g.copy()
                    else:
                        buf *= mom
                        buf += (1 - damp) * g if damp else g
                    g = g + mom * buf if nesterov else buf
                p.data -= lr * g
