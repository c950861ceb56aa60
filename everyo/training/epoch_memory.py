"""Peak memory of a training epoch, measured cheaply.

Host: the process's peak resident set (``VmHWM``), reset at the start of each epoch through
``/proc/self/clear_refs`` where Linux allows it (otherwise the process-lifetime peak from
``getrusage``). CUDA: the CuPy memory pool's bytes in use, sampled after every batch.
"""

from __future__ import annotations

import sys


def _read_hwm() -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _rusage_peak() -> int | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


class PeakMemory:
    """``start()`` at the epoch start, ``sample()`` after each batch, ``result()`` at the end:
    ``{"peak_host_mib": ..., "peak_device_mib": ...}`` (entries absent when unmeasurable)."""

    def __init__(self, device) -> None:
        self._pool = None
        if getattr(device, "type", "cpu") == "cuda":
            cupy = sys.modules.get("cupy")
            self._pool = cupy.get_default_memory_pool() if cupy is not None else None
        self._device_peak = 0
        self._host_resettable = False

    def start(self) -> None:
        self._host_resettable = _reset_hwm()
        self._device_peak = self._pool.used_bytes() if self._pool is not None else 0

    def sample(self) -> None:
        if self._pool is not None:
            used = self._pool.used_bytes()
            if used > self._device_peak:
                self._device_peak = used

    def result(self) -> dict:
        out = {}
        host = _read_hwm() if self._host_resettable else None
        if host is None:
            host = _rusage_peak()
        if host is not None:
            out["peak_host_mib"] = host / 2**20
        if self._pool is not None:
            out["peak_device_mib"] = self._device_peak / 2**20
        return out
