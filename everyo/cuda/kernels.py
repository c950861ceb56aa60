"""Reference EveryO's GPU kernel functions, run with CuPy: ``add``, ``multiply``, ``matmul``,
``relu``, ``sum_all``. They take and return NumPy arrays (no autograd) and fall back to NumPy
when CUDA is missing or an input is not eligible (not float32, shapes differ, matmul not 2-D);
``strict=True`` raises :class:`~everyo.errors.EveryOCudaError` instead when CUDA is missing or
an input is not float32.

>>> import numpy as np
>>> from everyo import cuda
>>> cuda.add(np.ones(3, np.float32), np.ones(3, np.float32)).tolist()  # GPU or NumPy
[2.0, 2.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from everyo.core import backend
from everyo.errors import EveryOCudaError

__all__ = ["add", "multiply", "matmul", "relu", "sum_all", "EXTENSION_NAME", "KERNEL_NAMES"]

EXTENSION_NAME = "cupy"  # everyo's CUDA backend (the reference builds its own extension)
KERNEL_NAMES = ("add", "multiply", "matmul", "relu", "sum_all")


def _host(x) -> np.ndarray:
    return x.get() if backend.is_cupy_array(x) else np.asarray(x)


def _on_gpu(arrays, strict: bool, name: str, eligible: bool) -> bool:
    """Whether to run ``name`` on the GPU; raises for ``strict`` when it cannot."""
    usable = backend.cuda_device_count() > 0
    float32 = all(a.dtype == np.float32 for a in arrays)
    if strict and not usable:
        raise EveryOCudaError(
            f"cuda.{name}(strict=True): no CUDA GPU is usable (CuPy missing, no device, or "
            f"EVERYO_DISABLE_CUDA set); run `python -m everyo doctor`"
        )
    if strict and not float32:
        raise EveryOCudaError(
            f"cuda.{name}(strict=True) takes float32 arrays, got "
            f"{', '.join(str(a.dtype) for a in arrays)}; cast with .astype(np.float32)"
        )
    return usable and float32 and eligible


def _run(name: str, arrays, gpu_fn, cpu_fn, eligible: bool, strict: bool) -> np.ndarray:
    if _on_gpu(arrays, strict, name, eligible):
        cupy = backend.cupy_module()
        return gpu_fn(*(cupy.asarray(a) for a in arrays)).get()
    return np.asarray(cpu_fn(*arrays))


def add(a, b, *, strict: bool = False) -> np.ndarray:
    """Element-wise ``a + b`` of two float32 arrays of one shape."""
    a, b = _host(a), _host(b)
    return _run("add", (a, b), lambda x, y: x + y, np.add, a.shape == b.shape, strict)


def multiply(a, b, *, strict: bool = False) -> np.ndarray:
    """Element-wise ``a * b`` of two float32 arrays of one shape."""
    a, b = _host(a), _host(b)
    return _run("multiply", (a, b), lambda x, y: x * y, np.multiply, a.shape == b.shape, strict)


def matmul(a, b, *, strict: bool = False) -> np.ndarray:
    """The matrix product of two 2-D float32 arrays."""
    a, b = _host(a), _host(b)
    eligible = a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0]
    return _run("matmul", (a, b), lambda x, y: x @ y, np.matmul, eligible, strict)


def relu(x, *, strict: bool = False) -> np.ndarray:
    """``max(x, 0)`` of a float32 array."""
    x = _host(x)
    return _run("relu", (x,), lambda v: v.clip(0), lambda v: np.maximum(v, 0), True, strict)


def sum_all(x, *, strict: bool = False) -> np.ndarray:
    """The sum of every element, as a 0-d float32 array."""
    x = _host(x)
    out = _run("sum_all", (x,), lambda v: v.sum(), np.sum, True, strict)
    return np.asarray(out, dtype=np.float32)
