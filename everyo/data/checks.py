"""Argument checks and error notes shared by the data utilities.

The checks run once per loader or split, never per sample; notes are added on the failing path
only, so the loops that fetch samples stay as fast as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from everyo.errors import EveryOConfigError

__all__ = ["check_seed", "check_prefetch", "add_note", "describe_indices"]

# what np.random.default_rng accepts as a ready-made source of randomness
_GENERATORS = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)


def check_seed(seed: Any, owner: str) -> None:
    """Raise unless ``seed`` is None, an int >= 0 (Python or NumPy) or a NumPy generator."""
    if seed is None or isinstance(seed, _GENERATORS):
        return
    fix = "e.g. seed=0 repeats the same shuffles on every run, seed=None draws new ones"
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(
            f"{owner} seed must be a whole number >= 0 or None, got {seed!r} "
            f"({type(seed).__name__}); {fix}"
        )
    if seed < 0:
        raise EveryOConfigError(f"{owner} seed must be a whole number >= 0, got {seed}; {fix}")


def check_prefetch(prefetch: Any) -> int:
    """``prefetch`` as an int >= 0, or a TypeError/EveryOConfigError naming it."""
    if isinstance(prefetch, bool) or not isinstance(prefetch, (int, np.integer)):
        raise TypeError(
            f"prefetch is a number of batches to prepare ahead, e.g. prefetch=2 (0: none), "
            f"got {prefetch!r} ({type(prefetch).__name__})"
        )
    if prefetch < 0:
        raise EveryOConfigError(
            f"prefetch is a number of batches to prepare ahead (0: none), e.g. prefetch=2; "
            f"got {prefetch}"
        )
    return int(prefetch)


def add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)``; on Python 3.10 the note is kept in ``__notes__`` all the same."""
    if hasattr(exc, "add_note"):
        exc.add_note(note)
        return
    try:
        exc.__notes__ = [*getattr(exc, "__notes__", []), note]
    except AttributeError:  # an exception type with __slots__: the original message stands
        pass


def describe_indices(positions, limit: int = 8) -> str:
    """``"0, 1, 2"`` or ``"0, 1, ..., 63 (64 samples)"`` for a note."""
    items = [int(i) for i in positions]
    if len(items) <= limit:
        return ", ".join(map(str, items))
    head = ", ".join(map(str, items[: limit - 1]))
    return f"{head}, ..., {items[-1]} ({len(items)} samples)"
