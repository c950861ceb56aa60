"""Learning-rate schedules: ``StepLR`` and ``CosineAnnealingLR`` (call ``step()`` per epoch)."""

from __future__ import annotations

import math

from everyo.optim.optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "CosineAnnealingLR"]


class LRScheduler:
    """Base class: sets each group's ``lr`` to ``get_lr()`` on every :meth:`step`."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__} needs an Optimizer, got {optimizer!r}")
        self.optimizer = optimizer
        for g in optimizer.param_groups:
            g.setdefault("initial_lr", g["lr"])
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def get_lr(self) -> list[float]:
        raise NotImplementedError

    def step(self) -> None:
        """Advance one epoch and update the optimizer's learning rates."""
        self.last_epoch += 1
        for g, lr in zip(self.optimizer.param_groups, self.get_lr()):
            g["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The learning rates set by the latest :meth:`step`."""
        return list(self._last_lr)

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state: dict) -> None:
        self.__dict__.update(state)


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs.

    >>> import everyo as eo
    >>> opt = eo.optim.SGD([eo.nn.Parameter(eo.zeros(1))], lr=1.0)
    >>> sched = eo.optim.StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0]); sched.step()
    >>> lrs
    [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        if step_size < 1:
            raise ValueError(f"step_size must be >= 1, got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        factor = self.gamma ** (max(self.last_epoch, 0) // self.step_size)
        return [base * factor for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneal from the initial rate to ``eta_min`` along half a cosine over ``T_max`` epochs:
    ``eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):  # noqa: N803
        if T_max < 1:
            raise ValueError(f"T_max must be >= 1, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        cos = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * cos for base in self.base_lrs]
