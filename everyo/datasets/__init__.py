"""Datasets for labs and tests, generated locally (no downloads) and seeded.

Point clouds and drawn digits (:mod:`~everyo.datasets.synthetic`), reference EveryO's 8x8
glyph digits (:mod:`~everyo.datasets.glyphs`) and toy sequence tasks
(:mod:`~everyo.datasets.sequences`). Every function returns NumPy arrays ``(X, y)``.

>>> from everyo.datasets import make_moons, make_xor
>>> X, y = make_moons(100, seed=0)
>>> X.shape, sorted(set(y.tolist()))
((100, 2), [0, 1])
>>> make_xor(n_samples=8)[0].shape
(8, 2)
"""

from everyo.datasets import glyphs, sequences, synthetic
from everyo.datasets.glyphs import *  # noqa: F403
from everyo.datasets.sequences import *  # noqa: F403
from everyo.datasets.synthetic import *  # noqa: F403

__all__ = synthetic.__all__ + glyphs.__all__ + sequences.__all__
