"""Array namespaces: NumPy on the CPU, CuPy on CUDA (imported lazily, only when a GPU is used)."""

from __future__ import annotations

import os
import sys
import types

import numpy as np

from everyo.errors import EveryODeviceError

_cuda_count: int | None = None


def cuda_disabled() -> bool:
    """True when ``EVERYO_DISABLE_CUDA=1`` forces everything onto the CPU."""
    return os.environ.get("EVERYO_DISABLE_CUDA", "").strip() not in ("", "0", "false", "False")


def cuda_device_count() -> int:
    """Number of CUDA devices CuPy can use (0 without CuPy, without a GPU, or when disabled)."""
    global _cuda_count
    if cuda_disabled():
        return 0
    if _cuda_count is None:
        try:
            import cupy

            _cuda_count = int(cupy.cuda.runtime.getDeviceCount())
        except (
            Exception
        ):  # no CuPy, no driver, no device: all mean "no GPU" (nvdashboard does this)
            _cuda_count = 0
    return _cuda_count


def cupy_module() -> types.ModuleType:
    """The CuPy module, or an :class:`EveryODeviceError` that says how to get it."""
    try:
        import cupy
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise EveryODeviceError(
            'CUDA needs CuPy: pip install "everyo[cuda12]" (or [cuda13]); '
            "`python -m everyo doctor` checks the setup"
        ) from exc
    return cupy


def is_cupy_array(obj) -> bool:
    """True for a ``cupy.ndarray``, without importing CuPy when it is not loaded yet."""
    cupy = sys.modules.get("cupy")
    return cupy is not None and isinstance(obj, cupy.ndarray)


def namespace_of(array) -> types.ModuleType:
    """``numpy`` or ``cupy``: the namespace an array belongs to."""
    return sys.modules["cupy"] if is_cupy_array(array) else np
