"""What the benchmarks need to know about GPUs, without importing CuPy or torch.

CuPy is only ever looked up in ``sys.modules``: if the workload put data on a GPU, CuPy is
already imported; if it is not imported, nothing can be running on a GPU through it. torch is
looked up the same way (:mod:`everyo.bench.torch_memory`).
"""

from __future__ import annotations

import sys
from typing import Any

from everyo.bench import torch_memory

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

    Recognises everyo and torch tensors (``t.device.type == "cuda"``), CuPy arrays, and everyo
    or torch modules whose parameters are on a GPU. Containers are searched a few levels deep only.

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
    # only everyo and torch modules: calling parameters() on an arbitrary object could do anything
    if torch_memory.is_torch_module(obj):
        return torch_memory.torch_on_cuda(obj)
    if not is_module(obj):
        return False
    first = next(iter(obj.parameters()), None)
    return first is not None and on_gpu(first, _MAX_DEPTH)


def cuda_synchronize() -> None:
    """Wait until the current CUDA device has finished its queued work, through CuPy and
    through torch where each is in use (no-op without either)."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        cupy.cuda.Device().synchronize()
    torch_memory.torch_synchronize()


def gpu_pool_bytes() -> int | None:
    """Bytes held by CuPy's default memory pool, or ``None`` when CuPy is not in use."""
    cupy = sys.modules.get("cupy")
    if cupy is None:
        return None
    return int(cupy.get_default_memory_pool().total_bytes())


def free_gpu_pool() -> None:
    """Give CuPy's and torch's cached (unused) blocks back to the driver, so the next point
    starts clean."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()
    torch_memory.free_torch_cache()


def is_out_of_memory(exc: BaseException) -> bool:
    """MemoryError, CuPy's or torch's ``OutOfMemoryError`` (matched by name: neither is
    imported), or torch's CPU allocator failing (a ``RuntimeError``)."""
    if isinstance(exc, MemoryError) or torch_memory.is_torch_out_of_memory(exc):
        return True
    return any(cls.__name__ == "OutOfMemoryError" for cls in type(exc).__mro__)
