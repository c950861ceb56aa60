"""The engine core: devices, dtypes, Tensor, autograd, autocast, and every op."""

from __future__ import annotations

from everyo.core import ops
from everyo.core.autocast import autocast
from everyo.core.autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from everyo.core.device import Device, device
from everyo.core.dtype import bool_, float16, float32, float64, int32, int64
from everyo.core.float_mode import set_flush_denormal
from everyo.core.grad_scaler import GradScaler
from everyo.core.ops import *  # noqa: F403
from everyo.core.tensor import Tensor, as_tensor, is_tensor, tensor

bool = bool_  # noqa: A001 - eo.bool, as torch.bool

__all__ = [
    "Tensor", "tensor", "as_tensor", "is_tensor", "Device", "device", "no_grad", "enable_grad",
    "set_grad_enabled", "is_grad_enabled", "autocast", "float16", "float32", "float64",
    "int32", "int64", "bool_", "bool", "GradScaler", "set_flush_denormal",
] + ops.__all__  # fmt: skip
