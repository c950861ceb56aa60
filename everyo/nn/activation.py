"""Activation layers: ``ReLU``, ``GELU``, ``Sigmoid``, ``Tanh``, ``Softmax``, ``LogSoftmax``."""

from __future__ import annotations

from everyo.core.ops import nn_ops as _nn_ops
from everyo.core.tensor import Tensor
from everyo.nn import functional as F
from everyo.nn.module import Module
from everyo.profiler.recording import hooks as _hooks

__all__ = ["ReLU", "GELU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax"]


class ReLU(Module):
    """``max(x, 0)``. ``inplace`` is accepted for PyTorch compatibility (the result is new)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        p = _hooks.active
        if (p is None or not p.record_ops) and isinstance(x, Tensor) and x.requires_grad:
            return _nn_ops._relu(x)  # training: what F.relu ends in, without its entry frames
        return _nn_ops.relu(x)  # the entry's own fast path when no graph is needed

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """Gaussian error linear unit; ``approximate="tanh"`` uses the tanh formula."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, x):
        return F.sigmoid(x)


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, x):
        return F.tanh(x)


class Softmax(Module):
    """Softmax along ``dim`` (default the last)."""

    def __init__(self, dim: int | None = -1) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, x):
        return F.softmax(x, dim=self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """``log(softmax(x))`` along ``dim``, computed stably."""

    def forward(self, x):
        return F.log_softmax(x, dim=self.dim)
