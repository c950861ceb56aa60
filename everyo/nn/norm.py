"""Normalisation layers: ``BatchNorm1d``, ``BatchNorm2d`` (running statistics as buffers) and
``LayerNorm``."""

from __future__ import annotations

import numpy as np

from everyo.core.tensor import Tensor
from everyo.errors import EveryOShapeError
from everyo.nn import functional as F
from everyo.nn.linear import empty_param
from everyo.nn.module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm"]


class _BatchNorm(Module):
    _dims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.num_features, self.eps, self.momentum = int(num_features), eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = empty_param(num_features)
            self.weight.data[...] = 1
            self.bias = empty_param(num_features)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, np.float32)))
            self.register_buffer("running_var", Tensor(np.ones(num_features, np.float32)))
            self.register_buffer("num_batches_tracked", Tensor(np.zeros((), np.int64)))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.data[...] = 0
            self.running_var.data[...] = 1
            self.num_batches_tracked.data[...] = 0

    def forward(self, x):
        if x.ndim not in self._dims or x.shape[1] != self.num_features:
            raise EveryOShapeError(
                f"{type(self).__name__}({self.num_features}) expects input of "
                f"{' or '.join(f'{d}-D' for d in self._dims)} with {self.num_features} channels "
                f"at dim 1, got shape {tuple(x.shape)}"
            )
        use_batch = self.training or not self.track_running_stats
        momentum = self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.data[...] += 1
            if momentum is None:  # cumulative moving average, as in PyTorch
                momentum = 1.0 / float(self.num_batches_tracked.item())
        update = self.training and self.track_running_stats
        return F.batch_norm(
            x,
            self.running_mean if update or not use_batch else None,
            self.running_var if update or not use_batch else None,
            self.weight,
            self.bias,
            training=use_batch,
            momentum=momentum or 0.0,
            eps=self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``(N, C)`` or ``(N, C, L)`` input over the batch (and length)."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of ``(N, C, H, W)`` input per channel.

    Training mode normalises with the batch statistics and updates the ``running_mean`` and
    ``running_var`` buffers (momentum 0.1, unbiased variance); eval mode uses the buffers.
    """

    _dims = (4,)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims, with learnable scale and shift."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True) -> None:  # fmt: skip
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(int(s) for s in shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = empty_param(*self.normalized_shape)
            self.weight.data[...] = 1
        else:
            self.register_parameter("weight", None)
        if elementwise_affine and bias:
            self.bias = empty_param(*self.normalized_shape)
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )
