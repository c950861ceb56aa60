"""The losses under reference EveryO's module path ``everyo.nn.losses`` (they live in
:mod:`everyo.nn.loss`): ``from everyo.nn.losses import MAELoss, mae_loss`` works unchanged."""

from everyo.nn.loss import *  # noqa: F403
from everyo.nn.loss import __all__  # noqa: F401
