"""Feature preprocessing on NumPy arrays: ``StandardScaler``, ``MinMaxScaler``, ``standardize``
and ``one_hot_encode`` (reference EveryO's data utilities).

They take arrays, lists or Tensors and return NumPy arrays. Inputs that are not float64 become
float32, so scaled features feed the engine's float32 layers directly.

>>> import numpy as np, everyo as eo
>>> X = np.array([[1.0, 10.0], [3.0, 30.0]])
>>> eo.StandardScaler().fit_transform(X).tolist()
[[-1.0, -1.0], [1.0, 1.0]]
>>> eo.one_hot_encode([0, 2]).tolist()
[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
"""

from __future__ import annotations

import numpy as np

from everyo.core.tensor import Tensor
from everyo.errors import EveryOShapeError

__all__ = ["StandardScaler", "MinMaxScaler", "standardize", "one_hot_encode"]

_FLOOR = 1e-8  # a constant column scales by this instead of dividing by zero


def as_numpy(x) -> np.ndarray:
    """``x`` as a host NumPy array (Tensors are unwrapped, device arrays copied to the host)."""
    if isinstance(x, Tensor):
        return x.numpy()
    if hasattr(x, "get") and not isinstance(x, np.ndarray):  # a CuPy array
        return x.get()
    return np.asarray(x)


def as_features(x) -> np.ndarray:
    """``x`` as a float array: float64 stays float64, everything else becomes float32."""
    arr = as_numpy(x)
    return arr if arr.dtype == np.float64 else arr.astype(np.float32)


class _Scaler:
    _fitted: tuple | None = None  # the feature shape seen by fit()

    def fit_transform(self, X) -> np.ndarray:
        """``fit(X)`` then ``transform(X)``."""
        return self.fit(X).transform(X)

    def _checked(self, X, method: str) -> np.ndarray:
        if self._fitted is None:
            raise EveryOShapeError(
                f"{type(self).__name__}.{method}() called before fit(); call fit(X) or "
                f"fit_transform(X) on the training features first"
            )
        arr = as_features(X)
        if arr.shape[1:] != self._fitted:
            raise EveryOShapeError(
                f"{type(self).__name__}.{method}(): rows of shape {arr.shape[1:]} but the "
                f"scaler was fitted on rows of shape {self._fitted}"
            )
        return arr


class StandardScaler(_Scaler):
    """Scale each column to zero mean and unit (population) standard deviation.

    ``fit`` stores ``mean_`` and ``std_`` (ddof=0) over axis 0; ``transform`` returns
    ``(X - mean_) / max(std_, 1e-8)`` and ``inverse_transform`` undoes it.
    """

    def fit(self, X) -> StandardScaler:
        arr = as_features(X)
        self.mean_, self.std_ = arr.mean(axis=0), arr.std(axis=0)
        self._fitted = arr.shape[1:]
        return self

    def transform(self, X) -> np.ndarray:
        arr = self._checked(X, "transform")
        return (arr - self.mean_) / np.maximum(self.std_, _FLOOR)

    def inverse_transform(self, X) -> np.ndarray:
        arr = self._checked(X, "inverse_transform")
        return arr * np.maximum(self.std_, _FLOOR) + self.mean_


class MinMaxScaler(_Scaler):
    """Map each column linearly onto ``feature_range`` (``(low, high)``, low < high): the
    column's minimum goes to ``low``, its maximum to ``high``."""

    def __init__(self, feature_range=(0.0, 1.0)) -> None:
        low, high = (float(v) for v in feature_range)
        if low >= high:
            raise ValueError(f"MinMaxScaler feature_range needs low < high, got {feature_range}")
        self.feature_range = (low, high)

    def fit(self, X) -> MinMaxScaler:
        arr = as_features(X)
        self.min_, self.max_ = arr.min(axis=0), arr.max(axis=0)
        self._fitted = arr.shape[1:]
        return self

    def transform(self, X) -> np.ndarray:
        arr = self._checked(X, "transform")
        low, high = self.feature_range
        unit = (arr - self.min_) / np.maximum(self.max_ - self.min_, _FLOOR)
        return (unit * (high - low) + low).astype(arr.dtype, copy=False)


def standardize(features, axis=0) -> np.ndarray:
    """A one-shot z-score along ``axis``: ``(x - mean) / max(std, 1e-8)`` (population std)."""
    arr = as_features(features)
    mean = arr.mean(axis=axis, keepdims=True)
    std = arr.std(axis=axis, keepdims=True)
    return (arr - mean) / np.maximum(std, _FLOOR)


def one_hot_encode(labels, num_classes: int | None = None) -> np.ndarray:
    """Class labels (any shape; flattened) as a float32 ``(n, num_classes)`` NumPy array.

    ``num_classes`` defaults to ``max(labels) + 1``. A negative label, or one >= ``num_classes``,
    is an :class:`EveryOShapeError`. (``eo.one_hot`` is the Tensor-returning PyTorch-style
    function.)
    """
    flat = as_numpy(labels).reshape(-1).astype(np.int64)
    if num_classes is None:
        num_classes = int(flat.max()) + 1 if flat.size else 0
    num_classes = int(num_classes)
    if flat.size and flat.min() < 0:
        raise EveryOShapeError(f"one_hot_encode: labels must be >= 0, got {int(flat.min())}")
    if flat.size and flat.max() >= num_classes:
        raise EveryOShapeError(
            f"one_hot_encode: label {int(flat.max())} does not fit num_classes={num_classes}; "
            f"pass a larger num_classes or leave it None"
        )
    out = np.zeros((flat.size, num_classes), dtype=np.float32)
    out[np.arange(flat.size), flat] = 1.0
    return out
