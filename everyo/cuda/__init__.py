"""``eo.cuda``: is a GPU usable, how many, and waiting for queued GPU work; and reference
EveryO's kernel functions on NumPy arrays (:mod:`~everyo.cuda.kernels`) and GPU-resident
arrays (:mod:`~everyo.cuda.resident`). Importing it never imports CuPy."""

from __future__ import annotations

from everyo.core import backend
from everyo.cuda.kernels import (
    EXTENSION_NAME,
    KERNEL_NAMES,
    add,
    matmul,
    multiply,
    relu,
    sum_all,
)
from everyo.cuda.resident import ResidentTensor, to_device

__all__ = [
    "is_available", "device_count", "synchronize", "unavailable_reason", "runtime_info",
    "reset_cache", "add", "multiply", "matmul", "relu", "sum_all", "to_device",
    "ResidentTensor", "EXTENSION_NAME", "KERNEL_NAMES",
]  # fmt: skip


def is_available() -> bool:
    """True when CuPy is installed, sees a GPU, and ``EVERYO_DISABLE_CUDA`` is not set."""
    return backend.cuda_device_count() > 0


def device_count() -> int:
    """Number of usable CUDA devices (0 without CuPy or a GPU)."""
    return backend.cuda_device_count()


def synchronize(device=None) -> None:
    """Wait until all queued GPU work on ``device`` (default: the current one) has finished.

    A no-op without a GPU, so code written for CUDA runs unchanged on the CPU.
    """
    if not is_available():
        return
    cupy = backend.cupy_module()
    if device is None:
        cupy.cuda.Device().synchronize()
        return
    from everyo.core.device import device as _resolve

    dev = _resolve(device)
    if dev.type == "cuda":
        cupy.cuda.Device(dev.index).synchronize()


def unavailable_reason() -> str | None:
    """Why CUDA is not usable, in words; None when it is."""
    if backend.cuda_disabled():
        return "EVERYO_DISABLE_CUDA is set"
    if is_available():
        return None
    try:
        import cupy  # noqa: F401
    except ImportError:
        return 'CuPy is not installed (pip install "everyo[cuda12]" or "everyo[cuda13]")'
    return "CuPy sees no CUDA device (no GPU, or no driver)"


def runtime_info() -> dict:
    """``available``, ``extension``, ``device_count``, ``reason``, ``devices`` (one property dict
    each) and, when available, ``runtime_version``."""
    info = {
        "available": is_available(),
        "extension": EXTENSION_NAME,
        "device_count": device_count(),
        "reason": unavailable_reason(),
        "devices": [],
    }
    if info["available"]:
        cupy = backend.cupy_module()
        info["runtime_version"] = int(cupy.cuda.runtime.runtimeGetVersion())
        for i in range(info["device_count"]):
            props = cupy.cuda.runtime.getDeviceProperties(i)
            name = props["name"]
            info["devices"].append({
                "index": i,
                "name": name.decode() if isinstance(name, bytes) else str(name),
                "total_memory": int(props["totalGlobalMem"]),
                "compute_capability": f"{props['major']}.{props['minor']}",
            })  # fmt: skip
    return info


def reset_cache() -> None:
    """Forget the cached device count, so the next call probes CUDA again (for tests)."""
    backend._cuda_count = None
