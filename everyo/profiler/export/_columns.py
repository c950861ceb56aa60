"""Columns of a file's events, built a block of events at a time without ever joining them.

Each column lives in one anonymous memory mapping that grows in place (``mremap``: no copy) as
blocks come in; its pages are resident only once written. The readers used to keep each block's
arrays in a list and join them at the end: the events were held twice at that moment, and the
freed blocks stayed in the C heap (issue 44, case 10: a Chrome trace's load peaked at 1.9x its
file). The finished columns are views of the mappings, which the event store can take as they
are (``EventStore.from_columns``).
"""

from __future__ import annotations

import mmap

import numpy as np

_FIRST_ROWS = 1 << 16
BLOCK = 1 << 16
"""Rows converted at a time by :func:`floats_to_int64` (a block-sized temporary at most)."""


class _Column:
    __slots__ = ("map", "dtype", "rows")

    def __init__(self, dtype, rows: int):
        self.dtype = np.dtype(dtype)
        self.rows = 0
        # private: a shared anonymous mapping is a file of fixed size, and pages grown past
        # it by mremap raise SIGBUS when touched
        size = max(rows, _FIRST_ROWS) * self.dtype.itemsize
        self.map = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)

    def reserve(self, rows: int) -> None:
        need = rows * self.dtype.itemsize
        if need > len(self.map):
            self.map.resize(max(need, 2 * len(self.map)))

    def write(self, values) -> None:
        """Append ``values`` (an array, or an int: that many -1)."""
        k = values if isinstance(values, int) else len(values)
        self.reserve(self.rows + k)
        view = np.frombuffer(self.map, self.dtype, count=k, offset=self.rows * self.dtype.itemsize)
        view[:] = -1 if isinstance(values, int) else values
        del view  # (a view left alive would stop the next resize)
        self.rows += k

    def widened(self, dtype) -> _Column:
        """This column with values of ``dtype`` (a block that does not fit its type)."""
        wide = _Column(np.promote_types(self.dtype, dtype), self.rows)
        wide.write(np.frombuffer(self.map, self.dtype, count=self.rows))
        return wide

    def array(self) -> np.ndarray:
        return np.frombuffer(self.map, self.dtype, count=self.rows)


class Columns:
    """Named columns filled a block at a time; an optional column is kept when some block had
    it (``present``), and a block without it costs it no memory until one has it."""

    def __init__(self):
        self._cols: dict[str, _Column] = {}
        self._absent: dict[str, int] = {}  # rows before a column's first block
        self.present: set[str] = set()

    def add(self, name: str, values, *, present: bool = True) -> None:
        """``values`` of a block (an array); an int: that many events without the column (-1
        each, written only once another block has it)."""
        col = self._cols.get(name)
        if col is None:
            if isinstance(values, int):
                self._absent[name] = self._absent.get(name, 0) + values
                return
            values = np.asarray(values)
            before = self._absent.pop(name, 0)
            col = self._cols[name] = _Column(values.dtype, before + len(values))
            if before:
                col.write(before)
        elif not isinstance(values, int):
            values = np.asarray(values)
            if not np.can_cast(values.dtype, col.dtype, "safe"):
                col = self._cols[name] = col.widened(values.dtype)
        col.write(values)
        if present:
            self.present.add(name)

    def pop(self, name: str, dtype=None) -> np.ndarray | None:
        """Column ``name`` as one array, given up by this object (None when no block had it);
        ``dtype``: its type when it has no rows at all."""
        col = self._cols.pop(name, None)
        if col is None:
            return None if dtype is None else np.zeros(0, dtype)
        return col.array()

    def columns(self) -> dict:
        """The present columns, each one array."""
        out = {name: self.pop(name) for name in list(self._cols) if name in self.present}
        self._cols.clear()
        return out


def floats_to_int64(values: np.ndarray) -> np.ndarray:
    """Whole-valued float64 ``values`` as int64 in their own memory (a block at a time: the
    column is not held twice); ``values`` is no longer usable as floats after this."""
    out = values.view(np.int64)
    for lo in range(0, len(values), BLOCK):
        out[lo : lo + BLOCK] = values[lo : lo + BLOCK]  # (same memory: NumPy buffers the block)
    return out
