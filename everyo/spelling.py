"""Spellings every view of everyo shares (text, HTML, the widgets, the CLI), so one thing reads
the same wherever it is shown: see docs/glossary.md."""

import math

NO_VALUE = "–"
"""A cell without a value (a live run's median, a column some rows lack, a sweep point that
failed): an en dash, never ``-``, ``—`` or an empty cell."""


# Numbers as every view writes them. The browser writes the few it measures itself (a bar it
# merged while zooming, the seconds a sweep point has run) with js/src/format.js, a twin of
# these functions held to them by tests/lab/test_format_js.py. Rounding is done on whole
# nanoseconds (half up), so both sides round alike, ties included.


def _round(n: int, unit: int) -> int:
    """``n / unit`` rounded half up (``n >= 0``)."""
    return (n + unit // 2) // unit


def count_text(n: int) -> str:
    """A count with thousands separators: ``1234`` -> ``"1,234"``."""
    return f"{int(n):,}"


def duration_text(ns: int) -> str:
    """A duration in milliseconds at a precision that suits its size: ``"1,234 ms"`` from
    100 ms, ``"12.35 ms"`` from 1 ms, else three significant digits (``"0.0123 ms"``,
    ``"0.000005 ms"`` for 5 ns); ``"0 ms"``."""
    ns = int(ns)
    if ns < 0:
        return "-" + duration_text(-ns)
    if ns == 0:
        return "0 ms"
    if ns < 1_000_000:
        digits = max(0, len(str(ns)) - 3)  # unit 10**digits ns keeps three significant digits
        q = _round(ns, 10**digits)
        if q >= 1000:  # rounded up to a fourth digit (99,960 ns: 0.100 ms)
            digits += 1
            q = _round(ns, 10**digits)
        if q * 10**digits < 1_000_000:
            return f"0.{q:0{6 - digits}d} ms"
    hundredths = _round(ns, 10_000)
    if hundredths < 10_000:
        return f"{hundredths // 100}.{hundredths % 100:02d} ms"
    return f"{_round(ns, 1_000_000):,} ms"


def clock_text(ns: int) -> str:
    """A time on the run's clock in milliseconds to the microsecond, without the unit:
    ``1_234_567_800`` ns -> ``"1,234.568"``."""
    ns = int(ns)
    sign = "-" if ns < 0 else ""
    us = _round(abs(ns), 1000)
    return f"{sign}{us // 1000:,}.{us % 1000:03d}"


def seconds_text(s: float) -> str:
    """Seconds to a tenth, half up: ``2.14`` -> ``"2.1 s"``, ``1.25`` -> ``"1.3 s"``; below
    zero reads ``"0.0 s"``."""
    tenths = math.floor(max(float(s), 0.0) * 10 + 0.5)
    return f"{tenths // 10}.{tenths % 10} s"


def format_bytes(n) -> str:
    """``"12.3 MB"`` (decimal units: the table's ``allocated`` column, the memory view);
    :data:`NO_VALUE` for none."""
    if n is None:
        return NO_VALUE
    n = float(n)
    for scale, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"
