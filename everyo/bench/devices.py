"""What the benchmarks need to know about GPUs, without importing CuPy.

CuPy is only ever looked up in ``sys.modules``: if the workload put data on a GPU, CuPy is
already imported; if it is not imported, nothing can be running on a GPU through it.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = [
    "on_gpu",
    "is_module",
    "cuda_synchronize",
    "gpu_pool_bytes",
    "free_gpu_pool",
    "is_out_of_memory",
]

_MAX_DEPTH = 3
_MAX_ITEMS = 64


def on_gpu(obj: Any, _depth: int = 0) -> bool:
    """Whether ``obj`` (or an item of a tuple, list or dict it holds) lives on a CUDA device.

    Recognises everyo tensors (``t.device.type == "cuda"``), CuPy arrays, and modules whose
    parameters are on a GPU. Containers are searched a few levels deep only.

    Examples
    --------
    >>> import numpy as np
    >>> on_gpu((np.ones(3), {"x": [1, 2]}))
    False
    """
    if obj is None or isinstance(obj, (str, bytes, int, float, bool)):
        return False
    if getattr(getattr(obj, "device", None), "type", None) == "cuda":
        return True
    if type(obj).__module__.split(".")[0] == "cupy" and "cupy" in sys.modules:
        return True
    if _depth >= _MAX_DEPTH:
        return False
    if isinstance(obj, dict):
        return any(on_gpu(v, _depth + 1) for v in list(obj.values())[:_MAX_ITEMS])
    if isinstance(obj, (tuple, list)):
        return any(on_gpu(v, _depth + 1) for v in obj[:_MAX_ITEMS])
    return _module_on_gpu(obj)


def is_module(obj: Any) -> bool:
    """Whether ``obj`` is an everyo ``nn.Module`` (without importing ``everyo.nn``: if it is not
    imported, nothing can be one)."""
    nn = sys.modules.get("everyo.nn")
    return nn is not None and isinstance(obj, nn.Module)


def _module_on_gpu(obj: Any) -> bool:
    # only everyo modules: calling parameters() on an arbitrary object could do anything
    if not is_module(obj):
        return False
    first = next(iter(obj.parameters()), None)
    return first is not None and on_gpu(first, _MAX_DEPTH)


def cuda_synchronize() -> None:
    """Wait until the current CUDA device has finished its queued work (no-op without CuPy)."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        cupy.cuda.Device().synchronize()


def gpu_pool_bytes() -> int | None:
    """Bytes held by CuPy's default memory pool, or ``None`` when CuPy is not in use."""
    cupy = sys.modules.get("cupy")
    if cupy is None:
        return None
    return int(cupy.get_default_memory_pool().total_bytes())


def free_gpu_pool() -> None:
    """Give CuPy's cached (unused) blocks back to the driver, so the next point starts clean."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()


def is_out_of_memory(exc: BaseException) -> bool:
    """MemoryError, or CuPy's ``OutOfMemoryError`` (matched by name: CuPy is not imported)."""
    if isinstance(exc, MemoryError):
        return True
    return any(cls.__name__ == "OutOfMemoryError" for cls in type(exc).__mro__)
