"""``Conv2d`` (weights ``(out, in, kh, kw)``), ``MaxPool2d``, ``AvgPool2d``."""

from __future__ import annotations

from everyo.errors import EveryOShapeError
from everyo.nn import functional as F
from everyo.nn import init
from everyo.nn.linear import empty_param
from everyo.nn.module import Module

__all__ = ["Conv2d", "MaxPool2d", "AvgPool2d"]


def _pair(v) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


class Conv2d(Module):
    """2-D convolution over ``(N, C_in, H, W)`` input, PyTorch's layout and default init.

    ``padding`` is an int, a pair, ``"valid"`` (0) or ``"same"`` (odd kernels, stride 1).
    ``groups`` splits the channels into independent convolutions (weight
    ``(out, in / groups, kh, kw)``; ``groups=in_channels`` is a depthwise convolution).

    >>> import everyo as eo
    >>> conv = eo.Conv2d(1, 8, 3, padding=1, seed=0)
    >>> conv.weight.shape, conv(eo.zeros(2, 1, 12, 12)).shape
    ((8, 1, 3, 3), (2, 8, 12, 12))
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, *, seed=None) -> None:  # fmt: skip
        super().__init__()
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.groups = int(groups)
        if self.groups < 1 or self.in_channels % self.groups or self.out_channels % self.groups:
            raise EveryOShapeError(
                f"Conv2d: groups={groups} must be >= 1 and divide in_channels "
                f"({in_channels}) and out_channels ({out_channels})"
            )
        self.kernel_size, self.stride, self.dilation = (
            _pair(kernel_size), _pair(stride), _pair(dilation),
        )  # fmt: skip
        self.padding = self._resolve_padding(padding)
        kh, kw = self.kernel_size
        self.weight = empty_param(out_channels, in_channels // self.groups, kh, kw)
        if bias:
            self.bias = empty_param(out_channels)
        else:
            self.register_parameter("bias", None)
        init.layer_default_(self.weight, self.bias, seed=seed)

    def _resolve_padding(self, padding) -> tuple[int, int]:
        if padding == "valid":
            return (0, 0)
        if padding == "same":
            if self.stride != (1, 1) or any(k % 2 == 0 for k in self.kernel_size):
                raise ValueError("padding='same' needs stride 1 and odd kernel sizes here")
            return tuple(d * (k // 2) for k, d in zip(self.kernel_size, self.dilation))
        return _pair(padding)

    def forward(self, x):
        return F.conv2d(
            x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    def extra_repr(self) -> str:
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        return s + ("" if self.bias is not None else ", bias=False")


class MaxPool2d(Module):
    """Max over ``kernel_size`` windows (``stride`` defaults to ``kernel_size``)."""

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(MaxPool2d):
    """Mean over ``kernel_size`` windows (padding counted, as PyTorch's default)."""

    def __init__(self, kernel_size, stride=None, padding=0, count_include_pad: bool = True):
        super().__init__(kernel_size, stride, padding)
        self.count_include_pad = count_include_pad

    def forward(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding,
                            count_include_pad=self.count_include_pad)  # fmt: skip
