"""Toy sequence tasks for recurrent and attention models (reference EveryO's): recall the
first token, copy the sequence, compute the parity. All int64, seeded (``seed=0`` default).

>>> from everyo.datasets import make_parity_task
>>> X, y = make_parity_task(n_samples=4, length=5)
>>> X.shape, bool(((X.sum(axis=1) % 2) == y).all())
((4, 5), True)
"""

from __future__ import annotations

import numpy as np

__all__ = ["make_recall_task", "make_copy_task", "make_parity_task"]


def make_recall_task(*, n_samples: int = 2000, length: int = 20, num_classes: int = 4,
                     vocab_size: int = 16, seed: int | None = 0):  # fmt: skip
    """Sequences ``(n_samples, length)`` whose first token is the label (``< num_classes``);
    the other tokens are distractors drawn from ``[num_classes, vocab_size)``. Returns
    ``(sequences, labels)``."""
    if vocab_size <= num_classes:
        raise ValueError(f"vocab_size ({vocab_size}) must exceed num_classes ({num_classes})")
    if length < 1:
        raise ValueError(f"length must be >= 1, got {length}")
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, num_classes, size=n_samples).astype(np.int64)
    seqs = rng.integers(num_classes, vocab_size, size=(n_samples, length)).astype(np.int64)
    seqs[:, 0] = labels
    return seqs, labels


def make_copy_task(*, n_samples: int = 2000, length: int = 8, vocab_size: int = 10,
                   seed: int | None = 0):  # fmt: skip
    """Random token sequences and their copy: ``(seq, seq.copy())``, int64 ``(n, length)``."""
    rng = np.random.default_rng(seed)
    seqs = rng.integers(0, vocab_size, size=(n_samples, length)).astype(np.int64)
    return seqs, seqs.copy()


def make_parity_task(*, n_samples: int = 2000, length: int = 12, seed: int | None = 0):
    """Binary sequences ``(n, length)`` and their parity (number of ones mod 2), int64."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, size=(n_samples, length)).astype(np.int64)
    return bits, (bits.sum(axis=1) % 2).astype(np.int64)
