"""``eo.cuda``: is a GPU usable, how many, and waiting for queued GPU work."""

from __future__ import annotations

from everyo.core import backend

__all__ = ["is_available", "device_count", "synchronize"]


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
