"""``ResidentTensor``: a float32 array kept on the GPU between reference EveryO kernel calls
(``to_device`` uploads once; ``numpy()`` downloads). No autograd: for training, use
``eo.tensor(..., device="cuda")``."""

from __future__ import annotations

import numpy as np

from everyo.core import backend
from everyo.errors import EveryOCudaError, EveryOShapeError

__all__ = ["ResidentTensor", "to_device"]


class ResidentTensor:
    """GPU storage of one float32 array; ``+``, ``*`` and ``@`` with another ResidentTensor,
    ``relu()``, ``sum()`` (a float) and ``numpy()``."""

    __slots__ = ("_data",)
    device = "cuda"

    def __init__(self, data) -> None:
        self._data = data  # a cupy.ndarray

    @property
    def shape(self) -> tuple:
        return tuple(self._data.shape)

    @property
    def size(self) -> int:
        return int(self._data.size)

    def numpy(self) -> np.ndarray:
        return self._data.get()

    def _other(self, other, op: str):
        if not isinstance(other, ResidentTensor):
            raise TypeError(
                f"ResidentTensor {op} needs another ResidentTensor, got {type(other).__name__}; "
                f"upload it with everyo.cuda.to_device"
            )
        return other._data

    def __add__(self, other) -> ResidentTensor:
        return ResidentTensor(self._data + self._other(other, "+"))

    def __mul__(self, other) -> ResidentTensor:
        return ResidentTensor(self._data * self._other(other, "*"))

    def __matmul__(self, other) -> ResidentTensor:
        return ResidentTensor(self._data @ self._other(other, "@"))

    def relu(self) -> ResidentTensor:
        return ResidentTensor(self._data.clip(0))

    def sum(self) -> float:
        return float(self._data.sum())

    def __repr__(self) -> str:
        return f"ResidentTensor(shape={self.shape}, device='cuda')"


def to_device(value) -> ResidentTensor:
    """Upload a float32 array to the GPU once.

    Raises :class:`EveryOCudaError` without a usable GPU or for a non-float32 input, and
    :class:`EveryOShapeError` for an empty one.
    """
    arr = value.get() if backend.is_cupy_array(value) else np.asarray(value)
    if backend.cuda_device_count() == 0:
        raise EveryOCudaError(
            "cuda.to_device needs a usable CUDA GPU (CuPy and a device); run "
            "`python -m everyo doctor`, or keep the array on the host"
        )
    if arr.dtype != np.float32:
        raise EveryOCudaError(f"cuda.to_device takes float32 arrays, got {arr.dtype}")
    if arr.size == 0:
        raise EveryOShapeError("cuda.to_device got an empty array")
    return ResidentTensor(backend.cupy_module().asarray(arr))
