"""The checks of counts every benchmark option shares (``repeat``, ``processes``, a sweep's
sizes): one rule, one message."""

from __future__ import annotations

import numbers
from typing import Any

from everyo.errors import EveryOBenchmarkError

__all__ = ["check_count"]


def check_count(label: str, value: Any, *, minimum: int) -> int:
    """``value`` as a Python int; raises unless it is an integer >= ``minimum``, NumPy's
    included (``np.int64(5)``, a count read from an array), a bool not (shared option check)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise EveryOBenchmarkError(f"{label} must be an integer >= {minimum}, got {value!r}")
    return int(value)  # (a result saved as JSON holds plain ints)
