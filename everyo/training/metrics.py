"""Metrics for :class:`everyo.Trainer`: functions ``metric(outputs, targets) -> float``.

The Trainer averages each metric over batches, weighted by batch size, so a metric must be a
per-sample mean. Pass a name from :data:`METRICS` or any such callable.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from everyo.core.tensor import Tensor
from everyo.errors import EveryOShapeError

__all__ = [
    "accuracy", "binary_accuracy", "mean_absolute_error", "confusion_matrix", "METRICS",
    "resolve_metrics",
]  # fmt: skip


def _arr(x):
    return x.data if isinstance(x, Tensor) else x


def _labels(x):
    """Class labels of scores ``(N, C, ...)`` (arg-max over the class axis 1), of one-hot rows,
    or of labels ``(N,)`` / ``(N, 1)`` (flattened)."""
    a = _arr(x)
    if not hasattr(a, "ndim"):
        a = np.asarray(a)
    if a.ndim >= 2 and a.shape[1] > 1:
        return a.argmax(axis=1)
    return a.reshape(-1)


def _label_pair(outputs, targets, name: str):
    out, tgt = _labels(outputs), _labels(targets)
    if out.shape != tgt.shape:
        raise EveryOShapeError(
            f"{name}: {out.shape[0] if out.ndim else 1} predicted labels but targets give "
            f"{tgt.shape}; pass predictions (N, C) or (N,) and targets (N,), (N, 1) or (N, C)"
        )
    return out, tgt


def accuracy(outputs, targets) -> float:
    """Fraction of samples whose predicted class equals the target class.

    Predictions are scores ``(N, C)`` (arg-max over the class axis) or labels ``(N,)``; targets
    are class indices ``(N,)``/``(N, 1)`` or one-hot ``(N, C)``. Empty input gives 0.0.
    """
    out, tgt = _label_pair(outputs, targets, "accuracy")
    return float((out == tgt).mean()) if out.size else 0.0


def binary_accuracy(outputs, targets) -> float:
    """Fraction of logits on the right side of 0 for 0/1 targets."""
    out, tgt = _arr(outputs), _arr(targets)
    return float(((out > 0) == (tgt.reshape(out.shape) > 0.5)).mean())


def mean_absolute_error(outputs, targets) -> float:
    out, tgt = _arr(outputs), _arr(targets)
    return float(abs(out - tgt.reshape(out.shape)).mean())


def confusion_matrix(prediction, target, num_classes: int | None = None) -> np.ndarray:
    """The int64 ``(C, C)`` confusion matrix: rows are the true class, columns the predicted one.

    Labels are reduced as in :func:`accuracy` (argument order prediction, target: the reverse of
    scikit-learn's). ``num_classes`` defaults to ``max(label) + 1`` over both sides.

    >>> import everyo as eo
    >>> eo.confusion_matrix([0, 1, 1], [0, 1, 0]).tolist()
    [[1, 1], [0, 1]]
    """
    pred, true = (_host(a) for a in _label_pair(prediction, target, "confusion_matrix"))
    pred, true = pred.astype(np.int64), true.astype(np.int64)
    if num_classes is None:
        num_classes = int(max(pred.max(), true.max())) + 1
    out = np.zeros((int(num_classes), int(num_classes)), dtype=np.int64)
    np.add.at(out, (true, pred), 1)
    return out


def _host(a) -> np.ndarray:
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


def mean_squared_error(outputs, targets) -> float:
    out, tgt = _arr(outputs), _arr(targets)
    return float(((out - tgt.reshape(out.shape)) ** 2).mean())


def r2(outputs, targets) -> float:
    """The coefficient of determination ``1 - SS_res / SS_tot`` (0.0 for constant targets).

    Unlike the other metrics it is not a per-sample mean: over batches the Trainer averages
    the batches' values."""
    out, tgt = _arr(outputs), _arr(targets)
    tgt = tgt.reshape(out.shape)
    ss_tot = float(((tgt - tgt.mean(axis=0)) ** 2).sum())
    ss_res = float(((tgt - out) ** 2).sum())
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else 0.0


METRICS: dict[str, Callable] = {
    "accuracy": accuracy,
    "acc": accuracy,
    "binary_accuracy": binary_accuracy,
    "mae": mean_absolute_error,
    "mse": mean_squared_error,
    "r2": r2,
}


def resolve_metrics(metrics) -> dict[str, Callable]:
    """``{name: fn}`` from names and callables (a callable is named by its ``__name__``)."""
    if isinstance(metrics, str) or callable(metrics):
        metrics = (metrics,)
    out = {}
    for m in metrics:
        if isinstance(m, str):
            m = m.lower() if m.lower() in METRICS else m  # names are case-insensitive
            if m not in METRICS:
                from everyo.errors import EveryOConfigError

                raise EveryOConfigError(
                    f"unknown metric {m!r}; use one of {sorted(METRICS)} or pass a callable "
                    f"metric(outputs, targets) -> float"
                )
            out["accuracy" if m == "acc" else m] = METRICS[m]
        elif callable(m):
            out[getattr(m, "__name__", type(m).__name__)] = m
        else:
            raise TypeError(f"a metric is a name or a callable, got {m!r}")
    return out
