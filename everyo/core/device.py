"""Devices: ``cpu``, ``cuda``, ``cuda:N``, ``gpu`` and ``auto``.

>>> from everyo.core.device import device
>>> print(device("cpu"))
cpu

Without a usable GPU, ``device("cuda")`` falls back to the CPU with one
:class:`~everyo.errors.EveryODeviceWarning` per process; ``strict=True`` raises instead and
``"auto"`` falls back silently. ``EVERYO_DISABLE_CUDA=1`` forces the CPU.
"""

from __future__ import annotations

import threading
import warnings

from everyo.core import backend
from everyo.errors import EveryOCudaError, EveryODeviceError, EveryODeviceWarning

__all__ = ["Device", "device"]

_SPELLINGS = "'cpu', 'cuda', 'cuda:N', 'gpu' or 'auto'"


class Device:
    """Where a tensor's data lives and its ops run. Compare with ``==``; print gives the spec."""

    __slots__ = ("type", "index")

    def __init__(self, type: str, index: int | None = None) -> None:
        self.type = type
        self.index = index

    @property
    def xp(self):
        """The array namespace of this device: ``numpy`` or ``cupy``."""
        if self.type == "cpu":
            import numpy

            return numpy
        return backend.cupy_module()

    @property
    def is_cuda(self) -> bool:
        """True for a CUDA device."""
        return self.type == "cuda"

    def __str__(self) -> str:
        return "cpu" if self.type == "cpu" else f"cuda:{self.index}"

    def __repr__(self) -> str:
        return f"device('{self}')"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other, strict=True)
            except EveryODeviceError:
                return False
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):  # the shared instance on loading (ops compare devices with `is`)
        return _interned, (self.type, self.index)


CPU = Device("cpu")
_cuda_devices: dict[int, Device] = {}
_warn_lock = threading.Lock()
_warned = False


def _cuda(index: int) -> Device:
    dev = _cuda_devices.get(index)
    if dev is None:
        dev = _cuda_devices.setdefault(index, Device("cuda", index))
    return dev


def _interned(type: str, index: int | None) -> Device:
    return CPU if type == "cpu" else _cuda(index)


def _parse(spec: str) -> tuple[str, int | None]:
    text = spec.strip().lower()
    if text in ("cpu", "auto"):
        return text, None
    if text in ("cuda", "gpu"):
        return "cuda", None
    head, sep, tail = text.partition(":")
    if head in ("cuda", "gpu") and sep:
        if not tail.isdigit():
            raise EveryODeviceError(
                f"malformed device {spec!r}: the index after 'cuda:' must be a non-negative "
                f"integer, e.g. 'cuda:0'"
            )
        return "cuda", int(tail)
    raise EveryODeviceError(f"unknown device {spec!r}: use {_SPELLINGS}")


def _fallback(spec: str, strict: bool) -> Device:
    global _warned
    reason = (
        "EVERYO_DISABLE_CUDA is set"
        if backend.cuda_disabled()
        else "no CUDA GPU is usable (CuPy missing or no device)"
    )
    if strict:
        raise EveryOCudaError(
            f"device {spec!r} requested with strict=True but {reason}; run "
            f"`python -m everyo doctor`, or use device('auto') to fall back to the CPU"
        )
    with _warn_lock:
        first, _warned = not _warned, True
    if first:
        warnings.warn(
            f"device {spec!r} requested but {reason}; falling back to the CPU "
            f"(pass strict=True to raise instead)",
            EveryODeviceWarning,
            stacklevel=3,
        )
    return CPU


def device(spec: str | Device | None = "cpu", *, strict: bool = False) -> Device:
    """Resolve a device spec.

    Parameters
    ----------
    spec : str, Device or None
        ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"gpu"`` or ``"auto"``; ``None`` means ``"cpu"``.
    strict : bool
        Raise :class:`EveryODeviceError` instead of falling back when CUDA is unusable.
    """
    if spec is None:
        return CPU
    if isinstance(spec, Device):
        if spec.type == "cuda" and strict and backend.cuda_device_count() <= (spec.index or 0):
            return _fallback(str(spec), strict)
        return spec
    if not isinstance(spec, str):
        raise EveryODeviceError(f"device must be a string or Device, not {type(spec).__name__}")
    kind, index = _parse(spec)
    if kind == "cpu":
        return CPU
    count = backend.cuda_device_count()
    if kind == "auto":
        return _cuda(0) if count else CPU
    if count == 0:
        return _fallback(spec, strict)
    index = 0 if index is None else index
    if index >= count:
        raise EveryODeviceError(
            f"device {spec!r} does not exist: {count} CUDA device(s) visible (cuda:0"
            f"{f'..cuda:{count - 1}' if count > 1 else ''})"
        )
    return _cuda(index)


resolve_device = device  # reference EveryO's alias


def device_of_array(array) -> Device:
    """The device an array lives on."""
    if backend.is_cupy_array(array):
        return _cuda(int(array.device.id))
    return CPU


def _reset_fallback_warning() -> None:
    """Let the next fallback warn again (tests use this; the warning is once per process)."""
    global _warned
    _warned = False


# `everyo.core.device` names this function once `everyo.core` is imported (the package exports
# it), so the reset is reachable under that spelling too.
device._reset_fallback_warning = _reset_fallback_warning
