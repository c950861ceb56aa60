"""Ten 8x8 bitmap digits and ``load_digits``, a small offline digit-classification set built
from them by shifting, scaling the intensity and adding noise (reference EveryO's; not MNIST).

>>> from everyo.datasets import load_digits, render_digit
>>> X, y = load_digits(samples_per_class=3)
>>> X.shape, X.dtype, y[:3].tolist()
((30, 64), dtype('float32'), [0, 0, 0])
>>> int(render_digit(1).sum())
22
"""

from __future__ import annotations

import numpy as np

__all__ = ["GLYPHS", "IMAGE_SHAPE", "NUM_CLASSES", "render_digit", "load_digits"]

IMAGE_SHAPE = (8, 8)
NUM_CLASSES = 10

# '#' is ink. Drawn for this module; each glyph differs from every other in several pixels.
GLYPHS = tuple(
    tuple(glyph.split())
    for glyph in (
        "..####.. .#....#. .#...##. .#..#.#. .#.#..#. .##...#. .#....#. ..####..",
        "...##... ..###... .#.##... ...##... ...##... ...##... ...##... .######.",
        "..####.. .#....#. ......#. .....#.. ....#... ...#.... ..#..... .######.",
        "..####.. .#....#. ......#. ...###.. ......#. ......#. .#....#. ..####..",
        ".....#.. ....##.. ...#.#.. ..#..#.. .#...#.. .######. .....#.. .....#..",
        ".######. .#...... .#...... .#####.. ......#. ......#. .#....#. ..####..",
        "...###.. ..#..... .#...... .#####.. .#....#. .#....#. .#....#. ..####..",
        ".######. ......#. .....#.. .....#.. ....#... ....#... ...#.... ...#....",
        "..####.. .#....#. .#....#. ..####.. .#....#. .#....#. .#....#. ..####..",
        "..####.. .#....#. .#....#. .#....#. ..#####. ......#. .....#.. ..###...",
    )
)


def render_digit(digit: int) -> np.ndarray:
    """The clean 8x8 float32 glyph of ``digit`` (1.0 for ink, 0.0 elsewhere)."""
    if isinstance(digit, bool) or not isinstance(digit, (int, np.integer)) or not 0 <= digit <= 9:
        raise ValueError(f"render_digit takes a digit 0..9, got {digit!r}")
    rows = GLYPHS[int(digit)]
    return np.array([[c == "#" for c in row] for row in rows], dtype=np.float32)


def load_digits(*, samples_per_class: int = 200, noise: float = 0.15, max_shift: int = 1,
                flatten: bool = True, seed: int | None = 0):  # fmt: skip
    """``samples_per_class`` noisy copies of each glyph, in class order.

    Each copy is shifted by up to ``max_shift`` pixels each way (zeros enter at the edge), its
    ink scaled to a random intensity in [0.7, 1.0], Gaussian noise of std ``noise`` added and
    the result clipped to [0, 1].

    Returns
    -------
    X : float32, ``(10 * samples_per_class, 64)``, or ``(..., 8, 8)`` with ``flatten=False``
    y : int64 class labels
    """
    if samples_per_class <= 0:
        raise ValueError(f"samples_per_class must be > 0, got {samples_per_class}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(NUM_CLASSES), samples_per_class).astype(np.int64)
    clean = np.stack([render_digit(d) for d in range(NUM_CLASSES)])
    pad = int(max_shift)
    padded = np.pad(clean, ((0, 0), (pad, pad), (pad, pad)))
    shifts = rng.integers(-pad, pad + 1, size=(len(y), 2)) if pad else np.zeros((len(y), 2), int)
    X = np.empty((len(y), *IMAGE_SHAPE), dtype=np.float64)
    for i, (label, (dy, dx)) in enumerate(zip(y, shifts)):
        X[i] = padded[label, pad - dy : pad - dy + 8, pad - dx : pad - dx + 8]
    X *= rng.uniform(0.7, 1.0, size=(len(y), 1, 1))
    X += noise * rng.standard_normal(X.shape)
    X = np.clip(X, 0.0, 1.0).astype(np.float32)
    return (X.reshape(len(y), -1) if flatten else X), y
