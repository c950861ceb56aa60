"""Loss layers: ``MSELoss``, ``L1Loss``, ``BCELoss``, ``BCEWithLogitsLoss``,
``CrossEntropyLoss`` (class indices, label smoothing) and ``NLLLoss``; reductions
``"mean"`` (default), ``"sum"`` and ``"none"``. Each wraps one fused functional op.

``Loss`` is their public base class and ``MAELoss`` / :func:`mae_loss` the reference EveryO's
spelling of ``L1Loss`` (same values, but shapes must match exactly: no broadcasting)."""

from __future__ import annotations

import numpy as np

from everyo.core.ops.losses import _check_reduction
from everyo.errors import EveryOShapeError
from everyo.nn import functional as F
from everyo.nn.module import Module

__all__ = [
    "Loss", "MSELoss", "L1Loss", "MAELoss", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss",
    "NLLLoss", "mae_loss",
]  # fmt: skip


class Loss(Module):
    """Base class of the losses: holds ``reduction`` (``"mean"``, ``"sum"`` or ``"none"``; any
    other value is a ``ValueError``). Subclasses define ``forward(prediction, target)``;
    :meth:`_reduce` applies the reduction to element-wise losses.

    >>> import everyo as eo
    >>> class Huber(eo.Loss):
    ...     def forward(self, prediction, target):
    ...         d = abs(prediction - target)
    ...         return self._reduce(eo.where(d < 1, 0.5 * d * d, d - 0.5))
    >>> Huber()(eo.tensor([0.0, 3.0]), eo.tensor([0.5, 0.0])).item()
    1.3125
    """

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        _check_reduction(reduction)  # at construction, not at the first forward
        self.reduction = reduction

    def _reduce(self, t):
        if self.reduction == "mean":
            return t.mean()
        return t.sum() if self.reduction == "sum" else t

    def get_config(self) -> dict:
        return {"reduction": self.reduction}

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction={self.reduction!r}"


_Loss = Loss  # the name the layers below were written against


class MSELoss(_Loss):
    """Mean squared error ``(input - target)²``."""

    def forward(self, input, target):  # noqa: A002 - PyTorch's argument names
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error ``|input - target|``."""

    def forward(self, input, target):  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


def mae_loss(prediction, target, reduction: str = "mean"):
    """Mean absolute error of two tensors of the same shape (``l1_loss`` without broadcasting:
    a ``(N, 1)`` prediction against an ``(N,)`` target is an :class:`EveryOShapeError`)."""
    shapes = tuple(
        tuple(x.shape) if hasattr(x, "shape") else np.shape(x) for x in (prediction, target)
    )
    if shapes[0] != shapes[1]:
        raise EveryOShapeError(
            f"MAELoss: prediction {shapes[0]} and target {shapes[1]} differ in shape; reshape "
            f"one (e.g. target.reshape(prediction.shape)), or use L1Loss, which broadcasts"
        )
    return F.l1_loss(prediction, target, reduction=reduction)


class MAELoss(L1Loss):
    """Mean absolute error ``|prediction - target|`` (reference EveryO's ``L1Loss``); the shapes
    must match exactly."""

    def forward(self, prediction, target):
        return mae_loss(prediction, target, reduction=self.reduction)


class BCELoss(_Loss):
    """Binary cross-entropy of probabilities in [0, 1] (logs clamped at -100)."""

    def __init__(self, weight=None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy from logits, computed stably (``pos_weight`` per class)."""

    def __init__(self, weight=None, reduction: str = "mean", pos_weight=None) -> None:
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )


class CrossEntropyLoss(_Loss):
    """Softmax cross-entropy of logits ``(N, C, ...)`` against class indices ``(N, ...)`` (or
    class probabilities), with optional ``label_smoothing`` and class ``weight``.

    >>> import everyo as eo
    >>> loss = eo.CrossEntropyLoss()(eo.zeros(4, 10), eo.tensor([0, 1, 2, 3]))
    >>> round(loss.item(), 4)  # log(10)
    2.3026
    """

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:  # fmt: skip
        super().__init__(reduction)
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing

    def forward(self, input, target):  # noqa: A002
        return F.cross_entropy(  # positional: a keyword call costs more, every step
            input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing
        )

    def extra_repr(self) -> str:
        extra = super().extra_repr()
        if self.label_smoothing:
            extra = ", ".join(filter(None, [extra, f"label_smoothing={self.label_smoothing}"]))
        return extra


class NLLLoss(_Loss):
    """Negative log-likelihood of log-probabilities ``(N, C, ...)`` at class indices."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input, target):  # noqa: A002
        return F.nll_loss(input, target, self.weight, self.ignore_index, reduction=self.reduction)
