"""Synthetic point clouds and drawn digits: ``make_blobs``, ``make_moons``, ``make_spirals``,
``make_digits``, ``make_regression``, ``make_xor``.

Each function returns ``(features, targets)`` as NumPy arrays (float32 features, int64 class
indices, float32 regression targets), ready for :class:`everyo.ArrayDataset`.

>>> from everyo.datasets import make_blobs
>>> X, y = make_blobs(300, centers=3, seed=0)
>>> X.shape, X.dtype, sorted(set(y.tolist()))
((300, 2), dtype('float32'), [0, 1, 2])
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "make_blobs", "make_moons", "make_spirals", "make_digits", "DIGIT_SEGMENTS",
    "make_regression", "make_xor",
]  # fmt: skip


def _split_counts(n: int, k: int) -> np.ndarray:
    counts = np.full(k, n // k)
    counts[: n % k] += 1
    return counts


def _finish(X, y, rng, shuffle: bool):
    if shuffle:
        order = rng.permutation(len(y))
        X, y = X[order], y[order]
    return X.astype(np.float32), y.astype(np.int64)


def make_blobs(
    n_samples: int = 300,
    n_features: int = 2,
    centers: int = 3,
    *,
    cluster_std: float = 1.0,
    center_box: tuple[float, float] = (-10.0, 10.0),
    shuffle: bool = True,
    seed: int | None = None,
    spread: float | None = None,
):
    """Isotropic Gaussian clusters: ``centers`` classes with centres drawn in ``center_box``.

    ``spread`` is reference EveryO's name for ``cluster_std``."""
    if spread is not None:
        cluster_std = spread
    if n_samples < 1 or centers < 1:
        raise ValueError("make_blobs needs n_samples >= 1 and centers >= 1")
    rng = np.random.default_rng(seed)
    means = rng.uniform(*center_box, size=(centers, n_features))
    counts = _split_counts(n_samples, centers)
    y = np.repeat(np.arange(centers), counts)
    X = means[y] + rng.normal(0.0, cluster_std, size=(n_samples, n_features))
    return _finish(X, y, rng, shuffle)


def make_moons(n_samples: int = 200, *, noise: float = 0.1, shuffle: bool = True, seed=None):
    """Two interleaving half circles (2 classes, 2 features)."""
    rng = np.random.default_rng(seed)
    n_out, n_in = _split_counts(n_samples, 2)
    t_out = np.linspace(0, np.pi, n_out)
    t_in = np.linspace(0, np.pi, n_in)
    X = np.concatenate(
        [
            np.stack([np.cos(t_out), np.sin(t_out)], 1),
            np.stack([1 - np.cos(t_in), 0.5 - np.sin(t_in)], 1),
        ]
    )
    y = np.repeat([0, 1], [n_out, n_in])
    X = X + rng.normal(0.0, noise, size=X.shape)
    return _finish(X, y, rng, shuffle)


def make_spirals(
    n_samples: int = 300, n_classes: int = 3, *, noise: float = 0.2, turns: float = 1.0,
    shuffle: bool = True, seed=None, classes: int | None = None,
):  # fmt: skip
    """``n_classes`` interleaved spiral arms in 2-D (the classic non-linear toy problem).

    ``classes`` is reference EveryO's name for ``n_classes``."""
    if classes is not None:
        n_classes = classes
    rng = np.random.default_rng(seed)
    counts = _split_counts(n_samples, n_classes)
    xs, ys = [], []
    for c, n in enumerate(counts):
        r = np.linspace(0.0, 1.0, n)
        theta = np.linspace(0, 2 * np.pi * turns, n) + 2 * np.pi * c / n_classes
        theta = theta + rng.normal(0.0, noise, n)
        xs.append(np.stack([r * np.sin(theta), r * np.cos(theta)], 1))
        ys.append(np.full(n, c))
    return _finish(np.concatenate(xs), np.concatenate(ys), rng, shuffle)


# Seven-segment glyphs: segments a (top), b (top right), c (bottom right), d (bottom),
# e (bottom left), f (top left), g (middle). The ten sets are all different.
DIGIT_SEGMENTS = {
    0: "abcdef", 1: "bc", 2: "abdeg", 3: "abcdg", 4: "bcfg",
    5: "acdfg", 6: "acdefg", 7: "abc", 8: "abcdefg", 9: "abcdfg",
}  # fmt: skip

# Each segment as a line between two corners of a unit glyph box (x right, y down).
_LINES = {
    "a": ((0, 0), (1, 0)), "b": ((1, 0), (1, 0.5)), "c": ((1, 0.5), (1, 1)),
    "d": ((0, 1), (1, 1)), "e": ((0, 0.5), (0, 1)), "f": ((0, 0), (0, 0.5)),
    "g": ((0, 0.5), (1, 0.5)),
}  # fmt: skip


def _draw_glyph(digit: int, size: int, rng: np.random.Generator, jitter: float) -> np.ndarray:
    """One glyph: segments drawn as soft strokes at a random position, scale and slant."""
    w = rng.uniform(0.35, 0.5) * size
    h = rng.uniform(0.6, 0.75) * size
    x0 = (size - w) / 2 + rng.uniform(-jitter, jitter) * size
    y0 = (size - h) / 2 + rng.uniform(-jitter, jitter) * size
    slant = rng.uniform(-0.15, 0.15)
    thickness = rng.uniform(0.5, 0.8)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64) + 0.5
    img = np.zeros((size, size))
    for seg in DIGIT_SEGMENTS[digit]:
        (ax, ay), (bx, by) = _LINES[seg]
        p = np.array([x0 + ax * w + slant * (1 - ay) * w, y0 + ay * h])
        q = np.array([x0 + bx * w + slant * (1 - by) * w, y0 + by * h])
        d = q - p
        t = np.clip(((xx - p[0]) * d[0] + (yy - p[1]) * d[1]) / (d @ d), 0, 1)
        dist = np.hypot(xx - (p[0] + t * d[0]), yy - (p[1] + t * d[1]))
        img = np.maximum(img, np.clip(1.5 * thickness - dist, 0, 1))
    return img


def make_digits(
    n_samples: int = 1000, *, size: int = 12, noise: float = 0.1, jitter: float = 0.08,
    shuffle: bool = True, seed=None,
):  # fmt: skip
    """Procedurally drawn digit images (10 classes), a small stand-in for MNIST in CNN labs.

    Returns
    -------
    images : float32 array of shape ``(n_samples, 1, size, size)``, values roughly in [0, 1]
    labels : int64 array of shape ``(n_samples,)``
    """
    if size < 8:
        raise ValueError(f"make_digits needs size >= 8 to draw readable glyphs, got {size}")
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(10), _split_counts(n_samples, 10))
    imgs = np.stack([_draw_glyph(int(d), size, rng, jitter) for d in y])
    imgs = imgs + rng.normal(0.0, noise, imgs.shape)
    return _finish(imgs[:, None], y, rng, shuffle)


def make_regression(*, n_samples: int = 200, n_features: int = 1, noise: float = 0.1,
                    bias: float = 0.0, seed: int | None = 0):  # fmt: skip
    """A linear target plus Gaussian noise: ``y = X @ w + bias + noise * N(0, 1)``.

    Returns float32 ``X`` ``(n_samples, n_features)`` and ``y`` ``(n_samples, 1)``; weights
    and features are standard normal. Deterministic by default (``seed=0``).
    """
    if n_samples <= 0 or n_features <= 0:
        raise ValueError(
            f"make_regression needs n_samples and n_features > 0, got {n_samples}, {n_features}"
        )
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features))
    w = rng.standard_normal((n_features, 1))
    y = X @ w + bias + noise * rng.standard_normal((n_samples, 1))
    return X.astype(np.float32), y.astype(np.float32)


def make_xor(*, n_samples: int = 400, noise: float = 0.25, seed: int | None = 0):
    """Points around the four corners ``(±1, ±1)``; the class (int64) is the XOR of the signs,
    1 when exactly one coordinate of the corner is negative (noise may cross the axes)."""
    rng = np.random.default_rng(seed)
    corners = rng.choice([-1.0, 1.0], size=(n_samples, 2))
    X = corners + noise * rng.standard_normal((n_samples, 2))
    y = ((corners[:, 0] < 0) ^ (corners[:, 1] < 0)).astype(np.int64)
    return X.astype(np.float32), y
