"""Device time of module events on CUDA tensors, from CUDA events resolved when profiling stops.

A module call whose first tensor argument lives on a GPU gets a pair of CUDA events recorded on
the current stream around it. Nothing waits for the GPU while the program runs; at stop, one
synchronisation on the last event, then ``cupy.cuda.get_elapsed_time`` per pair fills the run's
``device_ns`` column. Host timings of asynchronous GPU work only measure the launch, which is why
summaries show both and flag events without a device time.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np

_CUPY_INSTALLED = None  # find_spec("cupy"), asked once per process


def _first_tensor_device(args):
    for a in args:
        dev = getattr(a, "device", None)
        if dev is not None:
            return getattr(dev, "type", None)
    return None


class CudaTimer:
    """Pairs of CUDA events per module event; ``resolve()`` turns them into nanoseconds."""

    def __init__(self, cupy):
        self._cupy = cupy
        self._pairs: list[tuple[object, object, object]] = []  # (event id, start, end)

    @classmethod
    def create(cls):
        """A timer where CuPy is imported and sees a GPU, else ``None``."""
        cupy = sys.modules.get("cupy")
        if cupy is None:
            return None
        try:
            if cupy.cuda.runtime.getDeviceCount() < 1:
                return None
        except Exception:
            return None
        return cls(cupy)

    @staticmethod
    def possible() -> bool:
        """Whether this process could meet CUDA tensors (CuPy imported or installed)."""
        global _CUPY_INSTALLED
        if "cupy" in sys.modules:
            return True
        if _CUPY_INSTALLED is None:
            _CUPY_INSTALLED = importlib.util.find_spec("cupy") is not None
        return _CUPY_INSTALLED

    @staticmethod
    def wanted(args) -> bool:
        """Whether a call with these arguments runs on a GPU (its first tensor is on CUDA)."""
        return _first_tensor_device(args) == "cuda"

    def begin(self, args):
        if _first_tensor_device(args) != "cuda":
            return None
        if self._cupy is None:
            import cupy

            self._cupy = cupy
        ev = self._cupy.cuda.Event()
        ev.record()
        return ev

    def end(self, start_event, ident) -> None:
        ev = self._cupy.cuda.Event()
        ev.record()
        self._pairs.append((ident, start_event, ev))

    def resolve(self) -> tuple[list, np.ndarray]:
        """``(event ids, device_ns)`` for every timed event; synchronises once."""
        if not self._pairs:
            return [], np.empty(0, np.int64)
        self._cupy.cuda.runtime.deviceSynchronize()  # once, at stop
        idents = [i for i, _, _ in self._pairs]
        ms = [self._cupy.cuda.get_elapsed_time(a, b) for _, a, b in self._pairs]
        self._pairs.clear()
        return idents, (np.array(ms) * 1e6).astype(np.int64)
