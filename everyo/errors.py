"""Every error a user can cause is an :class:`EveryOError` (or a standard exception the guide
names).

Messages say what went wrong *and* what to do about it.

Errors about a bad value the caller passed are also ``ValueError`` (so ``except ValueError``
catches them, as it does in the reference EveryO for ``Profiler(warmup=-1)``):
``EveryOShapeError``, ``EveryOProfilerError``, ``EveryOBenchmarkError`` and
``EveryOConfigError``. ``EveryODTypeError`` is also a ``TypeError``, ``EveryOAutogradError`` a
``RuntimeError`` and ``EveryOExportError`` an ``OSError``. Nesting two profilers is a plain
``RuntimeError``, as in the reference.
"""

from __future__ import annotations

__all__ = [
    "EveryOError",
    "EveryODeviceError",
    "EveryOShapeError",
    "EveryODTypeError",
    "EveryOAutogradError",
    "EveryOProfilerError",
    "EveryOExportError",
    "EveryOSerializationError",
    "EveryOFileNotFoundError",
    "EveryOBenchmarkError",
    "EveryOConfigError",
    "EveryOBackendError",
    "EveryOCudaError",
    "EveryOGradientError",
    "EveryOConfigurationError",
    "EveryODeviceWarning",
    "EveryOBenchmarkWarning",
    "EveryOProfilerWarning",
    "EveryOWarning",
]


class EveryOError(Exception):
    """Base class of every error everyo raises on purpose."""


class EveryODeviceError(EveryOError):
    """A device spec is unknown or unusable, or tensors on two devices were mixed."""


class EveryOShapeError(EveryOError, ValueError):
    """Shapes do not fit together (broadcasting, matmul, reshape, state_dict loading)."""


class EveryODTypeError(EveryOError, TypeError):
    """A dtype is unsupported or data cannot become a regular array (ragged input)."""


class EveryOAutogradError(EveryOError, RuntimeError):
    """backward() cannot run: no gradient for a non-scalar, a freed graph, an integer leaf."""


class EveryOProfilerError(EveryOError, ValueError):
    """A profiler option or argument has a bad value (``warmup=-1``, an unknown ``group_by``,
    metadata that is not a dict), or a profiler was asked for a run it does not have."""


class EveryOExportError(EveryOError, OSError):
    """A trace or report could not be written or read; the message names the path."""


class EveryOSerializationError(EveryOError):
    """A saved model or state file is corrupt, foreign, or does not fit the model, or
    ``eo.save`` could not write it (the message names the path and what to do)."""


class EveryOFileNotFoundError(EveryOSerializationError, FileNotFoundError):
    """A saved file to read does not exist (caught by ``except FileNotFoundError`` and, as in
    reference EveryO, by ``except EveryOSerializationError``)."""


class EveryOBenchmarkError(EveryOError, ValueError):
    """A benchmark or sweep was asked for with values it cannot use."""


class EveryOConfigError(EveryOError, ValueError):
    """An option (CLI flag, magic option, keyword argument) has a bad value."""


class EveryOBackendError(EveryOError):
    """An array backend (CuPy, CUDA) cannot do what was asked (reference EveryO's name)."""


class EveryOCudaError(EveryOBackendError, EveryODeviceError):
    """CUDA was required (``strict=True``) but is not usable; also an ``EveryODeviceError``."""


# reference EveryO's names for two of the errors above
EveryOGradientError = EveryOAutogradError
EveryOConfigurationError = EveryOConfigError


class EveryOWarning(UserWarning):
    """Base class of everyo's warnings."""


class EveryODeviceWarning(EveryOWarning):
    """A requested device is unavailable and everyo fell back to another (once per process)."""


class EveryOBenchmarkWarning(EveryOWarning):
    """A benchmark was set up in a way that distorts its measurements."""


class EveryOProfilerWarning(EveryOWarning):
    """The profiler dropped something (an old run evicted to stay within the memory budget)."""
