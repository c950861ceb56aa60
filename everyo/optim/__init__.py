"""Optimizers (``SGD``, ``Adam``, ``AdamW``) and learning-rate schedules.

``Optimizer.step()`` calls the subclass's ``_step()`` and, when a profiler is active, records it
as an ``"optimizer"`` region named ``"<ClassName>.step"``.
"""

from everyo.optim.adam import Adam, AdamW
from everyo.optim.lr_scheduler import CosineAnnealingLR, LRScheduler, StepLR
from everyo.optim.optimizer import Optimizer
from everyo.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "LRScheduler", "StepLR", "CosineAnnealingLR"]
