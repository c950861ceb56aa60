"""Channels-last (NHWC) convolution and pooling with TensorFlow-style padding, spelled as the
reference EveryO spells them: ``Conv2D``, ``MaxPool2D``, ``AvgPool2D`` and the functional
``conv2d``, ``max_pool2d``, ``avg_pool2d`` of this module.

They keep the reference's semantics, which differ from everyo's PyTorch-style ``Conv2d`` /
``eo.conv2d`` (NCHW, kernels ``(out, in, kh, kw)``, symmetric integer padding):

- input ``(N, H, W, C)``, output ``(N, out_h, out_w, C_out)``;
- kernels ``(kh, kw, in_channels, out_channels)`` (TensorFlow's layout), initialised by name
  (``initializer="he_uniform"``), bias zero;
- ``padding`` is ``"valid"``, ``"same"`` (case-insensitive; output ``ceil(size / stride)``, an
  odd total puts the extra row/column at the bottom/right) or a non-negative int for all sides;
- ``AvgPool2D`` divides by the number of real (unpadded) cells of each window.

Everything is built from the engine's NCHW ops (``permute``, ``concatenate``, ``conv2d``,
``max_pool2d``, ``avg_pool2d``, ``multiply``), so autograd, autocast and the profiler's op and
module events work as for any other layer.

>>> import everyo as eo
>>> conv = eo.Conv2D(3, 8, 3, padding="same", seed=0)
>>> conv.weight.shape, conv(eo.zeros(2, 5, 5, 3)).shape
((3, 3, 3, 8), (2, 5, 5, 8))
>>> eo.MaxPool2D(2)(eo.zeros(2, 5, 5, 8)).shape
(2, 2, 2, 8)
"""

from __future__ import annotations

import math

import numpy as np

from everyo.core import ops
from everyo.core.ops._util import as_t
from everyo.core.tensor import Tensor, tensor
from everyo.errors import EveryOShapeError
from everyo.nn import init
from everyo.nn.module import Module
from everyo.nn.parameter import Parameter

__all__ = ["Conv2D", "MaxPool2D", "AvgPool2D", "conv2d", "max_pool2d", "avg_pool2d"]


# ---- arguments ------------------------------------------------------------------------------
def _pair(value, name: str) -> tuple[int, int]:
    """An int or a pair of positive ints (a float fails with ``TypeError``, as in the reference)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int or a pair of ints, got {value!r}")
    if isinstance(value, (int, np.integer)):
        pair = (int(value), int(value))
    else:
        try:
            items = tuple(value)
        except TypeError:
            raise TypeError(f"{name} must be an int or a pair of ints, got {value!r}") from None
        if len(items) != 2:
            raise EveryOShapeError(f"{name} must be an int or a pair, got {value!r}")
        pair = (int(items[0]), int(items[1]))
    if pair[0] <= 0 or pair[1] <= 0:
        raise EveryOShapeError(f"{name} must be positive, got {value!r}")
    return pair


def _pads(padding, size: int, k: int, s: int, op: str) -> tuple[int, int]:
    """``(before, after)`` padding of one spatial axis."""
    if isinstance(padding, str):
        mode = padding.strip().lower()
        if mode == "valid":
            return 0, 0
        if mode == "same":
            total = max((math.ceil(size / s) - 1) * s + k - size, 0)
            return total // 2, total - total // 2
        raise EveryOShapeError(f"{op}: padding must be 'valid', 'same' or an int >= 0, got "
                               f"{padding!r}")  # fmt: skip
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, (bool, np.bool_)):
        if padding < 0:
            raise EveryOShapeError(f"{op}: padding must be >= 0, got {padding}")
        return int(padding), int(padding)
    raise EveryOShapeError(
        f"{op}: padding must be 'valid', 'same' or one int for all sides, got {padding!r} "
        f"(pairs are not accepted; use everyo.Conv2d for per-axis padding)"
    )


def _geometry(x: Tensor, k, s, padding, op: str):
    """Per-axis ``(before, after)`` pads of an NHWC input, checked against the window."""
    if x.ndim != 4:
        raise EveryOShapeError(f"{op} needs a 4-D NHWC input (batch, height, width, channels), "
                               f"got shape {tuple(x.shape)}")  # fmt: skip
    pads = []
    for axis, size in enumerate(x.shape[1:3]):
        before, after = _pads(padding, size, k[axis], s[axis], op)
        if size + before + after < k[axis]:
            raise EveryOShapeError(
                f"{op}: the window {k} is larger than the padded input ({size} + {before} + "
                f"{after} along {'height' if axis == 0 else 'width'}); use a smaller window or "
                f"padding='same'"
            )
        pads.append((before, after))
    return pads


def _pad_nchw(x: Tensor, pads, value: float) -> Tensor:
    """``x`` (NCHW) padded by ``pads`` ``[(top, bottom), (left, right)]`` with ``value``,
    differentiably (the padding is concatenated constant blocks)."""
    for axis, (before, after) in zip((2, 3), pads):
        parts = []
        for amount in (before, after):
            shape = list(x.shape)
            shape[axis] = amount
            parts.append(
                ops.full(tuple(shape), value, dtype=x.dtype, device=x.device) if amount else None
            )
        if parts[0] is not None or parts[1] is not None:
            x = ops.concatenate([p for p in (parts[0], x, parts[1]) if p is not None], axis=axis)
    return x


def _to_nchw(x: Tensor) -> Tensor:
    return ops.permute(x, 0, 3, 1, 2)


def _to_nhwc(x: Tensor) -> Tensor:
    return ops.permute(x, 0, 2, 3, 1)


# ---- functional forms -----------------------------------------------------------------------
def conv2d(x, weight, bias=None, *, stride=1, padding="valid") -> Tensor:
    """Convolve an NHWC ``x`` with a ``(kh, kw, in, out)`` ``weight`` (reference EveryO's
    ``conv2d``; ``everyo.conv2d`` is the NCHW PyTorch one)."""
    x, weight = as_t(x), as_t(weight)
    if weight.ndim != 4:
        raise EveryOShapeError(f"conv2d needs a (kh, kw, in, out) kernel, got shape "
                               f"{tuple(weight.shape)}")  # fmt: skip
    kh, kw, cin, _ = weight.shape
    s = _pair(stride, "stride")
    pads = _geometry(x, (kh, kw), s, padding, "conv2d")
    if x.shape[-1] != cin:
        raise EveryOShapeError(
            f"conv2d: the input has {x.shape[-1]} channels on its last axis (shape "
            f"{tuple(x.shape)}, NHWC) but the kernel {tuple(weight.shape)} expects {cin}"
        )
    xn = _to_nchw(x)
    (t, b), (left, r) = pads
    if t == b and left == r:  # symmetric: the NCHW op pads by itself, without a copy here
        sym = (t, left)
    else:
        xn, sym = _pad_nchw(xn, pads, 0.0), (0, 0)
    out = ops.conv2d(xn, ops.permute(weight, 3, 2, 0, 1), bias, s, sym)
    return _to_nhwc(out)


def max_pool2d(x, pool_size=2, *, stride=None, padding="valid") -> Tensor:
    """Maximum over each NHWC window; padding cells are ``-inf``, ties go to the first cell in
    window order. ``stride=None`` means ``stride = pool_size``."""
    return _pool(x, pool_size, stride, padding, "max_pool2d")


def avg_pool2d(x, pool_size=2, *, stride=None, padding="valid") -> Tensor:
    """Mean over each NHWC window, dividing by the number of real (unpadded) cells."""
    return _pool(x, pool_size, stride, padding, "avg_pool2d")


def _pool(x, pool_size, stride, padding, op: str) -> Tensor:
    x = as_t(x)
    k = _pair(pool_size, "pool_size")
    s = k if stride is None else _pair(stride, "stride")
    pads = _geometry(x, k, s, padding, op)
    padded = any(p for pair in pads for p in pair)
    xn = _to_nchw(x)
    if op == "max_pool2d":
        xn = _pad_nchw(xn, pads, -np.inf) if padded else xn
        return _to_nhwc(ops.max_pool2d(xn, k, s, 0))
    out = ops.avg_pool2d(_pad_nchw(xn, pads, 0.0) if padded else xn, k, s, 0)
    if padded:  # rescale from kh*kw to the count of real cells of each window
        ones = np.pad(np.ones(x.shape[1:3]), pads)
        win = np.lib.stride_tricks.sliding_window_view(ones, k)[:: s[0], :: s[1]]
        scale = (k[0] * k[1]) / win.sum(axis=(2, 3))
        out = out * tensor(scale, dtype=out.dtype, device=out.device)
    return _to_nhwc(out)


# ---- layers ---------------------------------------------------------------------------------
def _he(shape, fan_in, fan_out, gen, normal):
    return gen.normal(0, math.sqrt(2.0 / fan_in), shape) if normal else gen.uniform(
        -math.sqrt(6.0 / fan_in), math.sqrt(6.0 / fan_in), shape)  # fmt: skip


def _glorot(shape, fan_in, fan_out, gen, normal):
    if normal:
        return gen.normal(0, math.sqrt(2.0 / (fan_in + fan_out)), shape)
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    return gen.uniform(-bound, bound, shape)


_INITIALIZERS = {
    "he_uniform": lambda *a: _he(*a, False),
    "he_normal": lambda *a: _he(*a, True),
    "xavier_uniform": lambda *a: _glorot(*a, False),
    "xavier_normal": lambda *a: _glorot(*a, True),
    "zeros": lambda shape, *_: np.zeros(shape),
    "ones": lambda shape, *_: np.ones(shape),
    "uniform": lambda shape, fi, fo, gen: gen.uniform(-0.05, 0.05, shape),
    "normal": lambda shape, fi, fo, gen: gen.normal(0.0, 0.05, shape),
}
for _a, _b in (("kaiming", "he"), ("glorot", "xavier")):
    for _kind in ("uniform", "normal"):
        _INITIALIZERS[f"{_a}_{_kind}"] = _INITIALIZERS[f"{_b}_{_kind}"]


def kernel_initializer(name: str):
    """The initializer called ``name`` (case-insensitive): ``fn(shape, fan_in, fan_out, gen)``."""
    key = str(name).lower()
    if key not in _INITIALIZERS:
        raise ValueError(f"unknown initializer {name!r}; use one of {sorted(_INITIALIZERS)}")
    return _INITIALIZERS[key]


class Conv2D(Module):
    """2-D convolution over NHWC input with a ``(kh, kw, in_channels, out_channels)`` kernel,
    as reference EveryO's ``Conv2D`` (see the module docstring for the differences from
    :class:`everyo.Conv2d`).

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size, stride : int or pair
    padding : ``"valid"``, ``"same"`` or int
        Checked when the layer is called.
    bias : bool
        A zero-initialised ``(out_channels,)`` bias.
    initializer : str
        ``he_uniform`` (default), ``he_normal``, ``xavier_*``/``glorot_*``, ``kaiming_*``,
        ``zeros``, ``ones``, ``uniform``, ``normal``; fan-in ``kh*kw*in``.
    seed : int, optional
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size=3, *, stride=1,
                 padding="valid", bias: bool = True, initializer: str = "he_uniform",
                 seed=None) -> None:  # fmt: skip
        super().__init__()
        if int(in_channels) <= 0 or int(out_channels) <= 0:
            raise EveryOShapeError(f"Conv2D channel counts must be positive, got "
                                   f"{in_channels} and {out_channels}")  # fmt: skip
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size, self.stride = _pair(kernel_size, "kernel_size"), _pair(stride, "stride")
        self.padding, self.use_bias, self.initializer = padding, bool(bias), initializer
        kh, kw = self.kernel_size
        shape = (kh, kw, self.in_channels, self.out_channels)
        values = kernel_initializer(initializer)(
            shape, kh * kw * self.in_channels, kh * kw * self.out_channels, init.rng(seed)
        )
        self.weight = Parameter(np.asarray(values, dtype=np.float32))
        if self.use_bias:
            self.bias = Parameter(np.zeros(self.out_channels, dtype=np.float32))
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        return conv2d(x, self.weight, self.bias, stride=self.stride, padding=self.padding)

    def get_config(self) -> dict:
        return {
            "in_channels": self.in_channels, "out_channels": self.out_channels,
            "kernel_size": list(self.kernel_size), "stride": list(self.stride),
            "padding": self.padding, "bias": self.use_bias, "initializer": self.initializer,
        }  # fmt: skip

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding!r}, NHWC")  # fmt: skip


class MaxPool2D(Module):
    """Max over ``pool_size`` windows of NHWC input (``stride=None``: non-overlapping)."""

    _op = staticmethod(max_pool2d)

    def __init__(self, pool_size=2, *, stride=None, padding="valid") -> None:
        super().__init__()
        self.pool_size = _pair(pool_size, "pool_size")
        self.stride = None if stride is None else _pair(stride, "stride")
        self.padding = padding

    def forward(self, x):
        return self._op(x, self.pool_size, stride=self.stride, padding=self.padding)

    def get_config(self) -> dict:
        return {
            "pool_size": list(self.pool_size),
            "stride": None if self.stride is None else list(self.stride),
            "padding": self.padding,
        }

    def extra_repr(self) -> str:
        return f"pool_size={self.pool_size}, stride={self.stride}, padding={self.padding!r}, NHWC"


class AvgPool2D(MaxPool2D):
    """Mean over ``pool_size`` windows of NHWC input; padded cells do not count in the divisor
    (PyTorch's ``count_include_pad=False``)."""

    _op = staticmethod(avg_pool2d)
