"""Vectorised fixed-width JSON numbers: whole chunks of rows become bytes without a Python loop.

Numbers are right-aligned in a fixed width, padded with spaces (whitespace is legal between JSON
tokens), so every row of a chunk has the same layout and NumPy can write all of them at once.
"""

from __future__ import annotations

import numpy as np

SPACE, DOT = 32, 46


def digits(values: np.ndarray, width: int | None = None, *, blank_zeros: bool = True):
    """Decimal digits of non-negative ints as an ``(n, width)`` uint8 array.

    Leading zeros become spaces unless ``blank_zeros`` is false (for fraction digits).
    """
    v = np.asarray(values, np.int64)
    if width is None:
        width = len(str(int(v.max()))) if len(v) else 1
    pows = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    d = (v[:, None] // pows) % 10
    out = (d + 48).astype(np.uint8)
    if blank_zeros and width > 1:
        nz = d != 0
        nz[:, -1] = True  # "0" keeps its last digit
        lead = np.arange(width)[None, :] < nz.argmax(axis=1)[:, None]
        out[lead] = SPACE
    return out


def fixed3(values: np.ndarray) -> np.ndarray:
    """``v / 1000`` with three decimals (``12345`` -> ``"12.345"``), right-aligned."""
    v = np.maximum(np.asarray(values, np.int64), 0)
    whole = len(str(int(v.max()) // 1000)) if len(v) else 1
    out = digits(v, whole + 3)  # all digits at once, then open a gap for the point
    res = np.empty((len(v), whole + 4), np.uint8)
    res[:, :whole] = out[:, :whole]
    res[:, whole] = DOT
    frac = out[:, whole:]
    res[:, whole + 1 :] = np.where(frac == SPACE, 48, frac)  # "0.005", not "0.  5"
    lead = res[:, whole - 1] == SPACE  # values under 1000 need a "0" before the point
    res[lead, whole - 1] = 48
    return res


def exact_durations(start_ns: np.ndarray, dur_ns: np.ndarray) -> np.ndarray:
    """The ``dur`` field (µs) of each row such that ``ts + dur``, summed in float64 as trace
    viewers do, is exactly the float of the event's end.

    ``ts`` and the end are written as exact decimals of whole nanoseconds, and parse to the
    nearest doubles; the three-decimal ``dur`` does too, but the sum of two rounded doubles can
    miss the rounded end by one ulp (``21741.558 + 9.22 == 21750.778000000002``). A viewer
    compares exactly, so such an event overlaps the sibling starting at its end and every later
    event nests inside it. Rows whose sum misses get the double that lands on the end, written
    as its shortest round-trip text (``9.219999999999999``), or where no double lands on it
    (sums rounding to even), the one landing just before it; the others keep three decimals.
    Ends are monotone in the true end, so children stay within parents and siblings apart.
    """
    s = np.maximum(np.asarray(start_ns, np.int64), 0)
    d = np.maximum(np.asarray(dur_ns, np.int64), 0)
    field = fixed3(d)
    ts, end = s / 1000, (s + d) / 1000  # int -> double is exact below 2**53; / rounds once
    dur = d / 1000
    bad = np.flatnonzero(ts + dur != end)
    if not len(bad):
        return field
    fixed = end[bad] - ts[bad]
    for _ in range(64):  # a few ulps at most: each step moves the sum by at most one ulp
        total = ts[bad] + fixed
        if (total == end[bad]).all():
            break
        fixed = np.where(total < end[bad], np.nextafter(fixed, np.inf), fixed)
        fixed = np.where(total > end[bad], np.nextafter(fixed, -np.inf), fixed)
    # no double may land on the end (a ``ts`` of finer ulp than the end's: sums round to even);
    # then the one just below it, so that the event still ends before its sibling starts
    while True:
        over = ts[bad] + fixed > end[bad]
        if not over.any():
            break
        fixed = np.where(over, np.nextafter(fixed, -np.inf), fixed)
    texts = padded_table([repr(float(x)) for x in fixed], pad_left=True)
    width = max(field.shape[1], texts.shape[1])
    out = np.full((len(d), width), SPACE, np.uint8)
    out[:, width - field.shape[1] :] = field
    out[bad] = SPACE
    out[bad, width - texts.shape[1] :] = texts
    return out


def int_or_null(values: np.ndarray) -> np.ndarray:
    """Non-negative ints as digits; negative values (unknown) as ``null``."""
    v = np.asarray(values, np.int64)
    unknown = v < 0
    width = max(len(str(int(v.max()))) if len(v) else 1, 4 if unknown.any() else 1)
    out = digits(np.where(unknown, 0, v), width)
    if unknown.any():
        out[unknown] = np.frombuffer(b" " * (width - 4) + b"null", np.uint8)
    return out


def assemble(parts: list[np.ndarray]) -> bytes:
    """Rows of equal-height byte matrices side by side, as one bytes object."""
    n = parts[0].shape[0]
    out = np.empty((n, sum(p.shape[1] for p in parts)), np.uint8)
    col = 0
    for p in parts:
        out[:, col : col + p.shape[1]] = p
        col += p.shape[1]
    return out.tobytes()


def constant(text: str, n: int) -> np.ndarray:
    """``text`` repeated on ``n`` rows as an ``(n, len)`` uint8 array."""
    b = np.frombuffer(text.encode(), np.uint8)
    return np.broadcast_to(b, (n, len(b)))


def padded_table(texts: list[str], pad_left: bool = False) -> np.ndarray:
    """Strings as rows of one width, padded with spaces (on the left with ``pad_left``)."""
    raw = [t.encode() for t in texts]
    width = max((len(r) for r in raw), default=0)
    table = np.full((len(raw), width), SPACE, np.uint8)
    for i, r in enumerate(raw):
        if r:
            if pad_left:
                table[i, width - len(r) :] = np.frombuffer(r, np.uint8)
            else:
                table[i, : len(r)] = np.frombuffer(r, np.uint8)
    return table
