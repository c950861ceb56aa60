"""The dtypes everyo supports, as NumPy dtypes (CuPy uses the same objects)."""

from __future__ import annotations

import builtins

import numpy as np

from everyo.errors import EveryODTypeError

__all__ = ["float16", "float32", "float64", "int32", "int64", "bool_", "to_dtype"]

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
bool_ = np.dtype("bool")

SUPPORTED = (float16, float32, float64, int32, int64, bool_)
DEFAULT_FLOAT = float32

_ALIASES = {
    "half": float16,
    "float": float32,
    "double": float64,
    "int": int64,
    "long": int64,
    "bool": bool_,
}


def to_dtype(spec) -> np.dtype:
    """Turn ``"float32"``, ``np.float32``, ``float``, ``eo.float32``... into a supported dtype."""
    if spec is builtins.float:
        return float32
    if spec is builtins.int:
        return int64
    if spec is builtins.bool:
        return bool_
    if isinstance(spec, str) and spec in _ALIASES:
        return _ALIASES[spec]
    try:
        dt = np.dtype(spec)
    except TypeError as exc:
        raise EveryODTypeError(f"unknown dtype {spec!r}; use one of {_names()}") from exc
    if dt not in SUPPORTED:
        raise EveryODTypeError(f"dtype {dt} is not supported; use one of {_names()}")
    return dt


def normalize_array_dtype(dt: np.dtype) -> np.dtype:
    """The supported dtype an array of dtype ``dt`` becomes (unsigned/small ints widen)."""
    if dt in SUPPORTED:
        return dt
    if dt.kind in "iu":
        return int64
    if dt.kind == "f":
        return float64
    raise EveryODTypeError(
        f"arrays of dtype {dt} cannot become tensors; convert to one of {_names()}"
    )


def is_floating(dt: np.dtype) -> bool:
    return dt.kind == "f"


def _names() -> str:
    return ", ".join(str(d) for d in SUPPORTED)
