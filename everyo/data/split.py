"""Array splits: ``train_test_split`` and ``stratified_split`` (reference EveryO's; NumPy in,
NumPy out). ``random_split`` of datasets lives in :mod:`everyo.data.dataset`.

>>> import numpy as np, everyo as eo
>>> X, y = np.arange(20).reshape(10, 2), np.arange(10)
>>> X_train, X_test, y_train, y_test = eo.train_test_split(X, y, test_size=0.3, seed=0)
>>> X_train.shape, X_test.shape, y_test.shape
((7, 2), (3, 2), (3,))
"""

from __future__ import annotations

import numpy as np

from everyo.data.preprocessing import as_numpy
from everyo.errors import EveryOShapeError

__all__ = ["train_test_split", "stratified_split"]


def _test_count(n: int, test_size: float) -> int:
    return min(max(round(n * test_size), 1), n - 1)


def train_test_split(*arrays, test_size: float = 0.2, seed: int | None = None,
                     shuffle: bool = True) -> tuple[np.ndarray, ...]:  # fmt: skip
    """Split equal-length arrays with one shared permutation.

    Returns ``(a_train, a_test, b_train, b_test, ...)``. The test part holds
    ``round(n * test_size)`` rows (at least 1, at most ``n - 1``): the first rows of the
    permutation drawn from ``np.random.default_rng(seed)``, or the leading rows of the data with
    ``shuffle=False``.

    Raises
    ------
    ValueError
        No arrays, or ``test_size`` not strictly between 0 and 1 (counts are not accepted).
    EveryOShapeError
        The arrays differ in length, or hold fewer than 2 samples.
    """
    if not arrays:
        raise ValueError("train_test_split needs at least one array, e.g. (X, y)")
    if isinstance(test_size, bool) or not 0 < float(test_size) < 1:
        raise ValueError(
            f"test_size must be a fraction strictly between 0 and 1, got {test_size!r} "
            f"(for a count k of n samples pass k / n)"
        )
    data = [as_numpy(a) for a in arrays]
    lengths = {len(a) for a in data}
    if len(lengths) != 1:
        raise EveryOShapeError(
            f"train_test_split: the arrays differ in length {[len(a) for a in data]}"
        )
    n = lengths.pop()
    if n < 2:
        raise EveryOShapeError(f"train_test_split needs at least 2 samples, got {n}")
    order = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)
    k = _test_count(n, float(test_size))
    test, train = order[:k], order[k:]
    return tuple(part for a in data for part in (a[train], a[test]))


def stratified_split(features, labels, *, test_size: float = 0.2, seed: int | None = None):
    """Split so that each class keeps its share in both parts.

    Each class of ``n_c`` members sends ``round(n_c * test_size)`` of them (at least 1, at most
    ``n_c - 1``) to the test part; a class with one member stays in train. One-hot ``(N, C)``
    labels are reduced with argmax; the labels come back in the form given. Both index lists
    are shuffled with one ``np.random.default_rng(seed)``.

    Returns ``(x_train, x_test, y_train, y_test)``; an :class:`EveryOShapeError` when features
    and labels differ in length.
    """
    x, y = as_numpy(features), as_numpy(labels)
    if len(x) != len(y):
        raise EveryOShapeError(
            f"stratified_split: {len(x)} feature rows but {len(y)} labels; keep them aligned"
        )
    classes = y.argmax(axis=1) if y.ndim == 2 and y.shape[1] > 1 else y.reshape(len(y), -1)[:, 0]
    rng = np.random.default_rng(seed)
    train, test = [], []
    for c in np.unique(classes):
        members = rng.permutation(np.flatnonzero(classes == c))
        k = _test_count(len(members), float(test_size)) if len(members) > 1 else 0
        test.extend(members[:k])
        train.extend(members[k:])
    train, test = np.asarray(train, dtype=np.int64), np.asarray(test, dtype=np.int64)
    rng.shuffle(train)
    rng.shuffle(test)
    return x[train], x[test], y[train], y[test]
