"""The regression threshold: one quantity, a slowdown in percent, spelt the same everywhere.

``"10%"`` means 10 % in Python, on the command line and in the magics. A bare number keeps the
unit each place has always used: a fraction in Python (``threshold=0.10``), a percentage on the
command line (``--threshold 10``). The two ranges do not overlap, so a number written in the
other place's unit is refused rather than read silently as something else: ``--threshold 0.10``
would have gated at 0.1 %, and ``threshold=10`` at 1000 %.
"""

from __future__ import annotations

from everyo.errors import EveryOBenchmarkError

MAX_PERCENT = 1000.0  # a 10x slowdown: beyond it a threshold gates nothing


def threshold_fraction(value, *, bare: str = "fraction") -> float:
    """``value`` as a fraction (``0.10`` for 10 %): ``"10%"``, or a bare number in the unit
    ``bare`` says (``"fraction"`` in Python, ``"percent"`` on the command line)."""
    percent = _percent_text(value)
    if percent is None and bare == "percent":
        percent = _number(value, f"--threshold {value}")
        if 0 < percent < 1:
            raise EveryOBenchmarkError(
                f"--threshold {value} is in percent, so it would gate at {percent:g} %: write "
                f"--threshold {percent * 100:g} (or {percent * 100:g}%) for "
                f"{percent * 100:g} %"
            )
    elif percent is None:
        fraction = _number(value, f"threshold={value!r}")
        if fraction >= 1:
            raise EveryOBenchmarkError(
                f"threshold={value!r} is a fraction (0.10 = 10 %), so it would gate at "
                f"{fraction * 100:g} %: write threshold={fraction / 100:g} or "
                f"threshold='{fraction:g}%' for {fraction:g} %"
            )
        percent = fraction * 100
    if not 0 <= percent < MAX_PERCENT:
        raise EveryOBenchmarkError(
            f"the threshold is a slowdown between 0 % and {MAX_PERCENT:g} %, got {value!r}; "
            "10 % is the default"
        )
    return percent / 100


def _percent_text(value) -> float | None:
    """``"10%"`` / ``"10 %"`` as 10.0; None for anything without a percent sign."""
    if not isinstance(value, str) or not value.strip().endswith("%"):
        return None
    return _number(value.strip()[:-1].strip(), f"threshold {value!r}")


def _number(value, shown: str) -> float:
    if isinstance(value, bool):
        value = None  # True is not 1 %
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if number != number:  # NaN, or not a number at all
        raise EveryOBenchmarkError(
            f"{shown} is not a threshold; write a slowdown such as '10%' (or 0.10 in Python, "
            "10 on the command line)"
        )
    return number
