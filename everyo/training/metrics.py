"""Metrics for :class:`everyo.Trainer`: functions ``metric(outputs, targets) -> float``.

The Trainer averages each metric over batches, weighted by batch size, so a metric must be a
per-sample mean. Pass a name from :data:`METRICS` or any such callable.
"""

from __future__ import annotations

from collections.abc import Callable

from everyo.core.tensor import Tensor

__all__ = ["accuracy", "binary_accuracy", "mean_absolute_error", "METRICS", "resolve_metrics"]


def _arr(x):
    return x.data if isinstance(x, Tensor) else x


def accuracy(outputs, targets) -> float:
    """Fraction of rows whose arg-max over the class axis (1) equals the target index."""
    out, tgt = _arr(outputs), _arr(targets)
    if tgt.ndim == out.ndim:  # targets given as probabilities / one-hot
        tgt = tgt.argmax(axis=1)
    return float((out.argmax(axis=1) == tgt).mean())


def binary_accuracy(outputs, targets) -> float:
    """Fraction of logits on the right side of 0 for 0/1 targets."""
    out, tgt = _arr(outputs), _arr(targets)
    return float(((out > 0) == (tgt.reshape(out.shape) > 0.5)).mean())


def mean_absolute_error(outputs, targets) -> float:
    out, tgt = _arr(outputs), _arr(targets)
    return float(abs(out - tgt.reshape(out.shape)).mean())


METRICS: dict[str, Callable] = {
    "accuracy": accuracy,
    "acc": accuracy,
    "binary_accuracy": binary_accuracy,
    "mae": mean_absolute_error,
}


def resolve_metrics(metrics) -> dict[str, Callable]:
    """``{name: fn}`` from names and callables (a callable is named by its ``__name__``)."""
    if isinstance(metrics, str) or callable(metrics):
        metrics = (metrics,)
    out = {}
    for m in metrics:
        if isinstance(m, str):
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
