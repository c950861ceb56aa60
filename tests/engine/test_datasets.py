"""Synthetic datasets: shapes, dtypes, classes, seeding."""

from __future__ import annotations

import numpy as np
import pytest

from everyo.datasets import make_blobs, make_digits, make_moons, make_spirals


@pytest.mark.parametrize(
    "make, shape, classes",
    [
        (lambda s: make_blobs(90, 3, centers=4, seed=s), (90, 3), 4),
        (lambda s: make_moons(50, seed=s), (50, 2), 2),
        (lambda s: make_spirals(60, 3, seed=s), (60, 2), 3),
        (lambda s: make_digits(40, size=12, seed=s), (40, 1, 12, 12), 10),
    ],
)
def test_shapes_dtypes_classes_and_seeds(make, shape, classes):
    X, y = make(0)
    assert X.shape == shape and X.dtype == np.float32 and y.dtype == np.int64
    assert sorted(set(y.tolist())) == list(range(classes))
    X2, y2 = make(0)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    X3, _ = make(1)
    assert not np.array_equal(X, X3)


def test_digits_classes_are_distinct_glyphs():
    X, y = make_digits(200, noise=0.0, jitter=0.0, seed=0)
    means = np.stack([X[y == d].mean(0).ravel() for d in range(10)])
    dists = np.linalg.norm(means[:, None] - means[None], axis=-1)
    assert dists[~np.eye(10, dtype=bool)].min() > 0.5
    assert 0.0 <= X.min() and X.max() <= 1.0
    with pytest.raises(ValueError):
        make_digits(10, size=4)


def test_blobs_are_separable_by_centre():
    X, y = make_blobs(300, centers=3, cluster_std=0.5, seed=2)
    centres = np.stack([X[y == c].mean(0) for c in range(3)])
    nearest = np.argmin(((X[:, None] - centres[None]) ** 2).sum(-1), axis=1)
    assert (nearest == y).mean() > 0.95
