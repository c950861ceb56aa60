"""``load_csv_dataset``: a numeric CSV file as an :class:`~everyo.data.ArrayDataset` (reference
EveryO's loader; the standard library's ``csv`` reader, no pandas).

>>> import everyo as eo, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "d.csv")
>>> _ = open(path, "w").write("x1,x2,label\\n1,2,0\\n3,4,1\\n")
>>> ds = eo.load_csv_dataset(path, target_column="label")
>>> ds.features.tolist(), ds.targets.tolist()
([[1.0, 2.0], [3.0, 4.0]], [0.0, 1.0])
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable

import numpy as np

from everyo.data.dataset import ArrayDataset
from everyo.errors import EveryOShapeError

__all__ = ["load_csv_dataset"]


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _read_rows(path, delimiter: str) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [[c.strip() for c in row] for row in csv.reader(fh, delimiter=delimiter)]
    return [r for r in rows if any(r)]  # blank lines are skipped


def _parse(rows: list[list[str]], first_line: int, path) -> np.ndarray:
    width = len(rows[0])
    table = np.empty((len(rows), width), dtype=np.float32)
    for i, row in enumerate(rows):
        if len(row) != width:
            raise EveryOShapeError(
                f"{path}, line {first_line + i}: {len(row)} cells where the first row has {width}"
            )
        for j, cell in enumerate(row):
            try:
                table[i, j] = float(cell)
            except ValueError:
                raise EveryOShapeError(
                    f"{path}, line {first_line + i}, column {j + 1}: {cell!r} is not a number; "
                    f"load_csv_dataset reads numeric tables only"
                ) from None
    return table


def _column(spec, header: list[str] | None, width: int, path) -> int:
    if isinstance(spec, str):
        if header is None or spec not in header:
            raise EveryOShapeError(
                f"{path}: no column named {spec!r}; the header is {header or '(none)'}"
            )
        return header.index(spec)
    index = int(spec)
    if not -width <= index < width:
        raise EveryOShapeError(f"{path}: column {index} is out of range for {width} columns")
    return index % width


def load_csv_dataset(path, *, target_column: int | str | None = -1, delimiter: str = ",",
                     has_header: bool | None = None,
                     skip_columns: Iterable[int | str] = ()) -> ArrayDataset:  # fmt: skip
    """Read a purely numeric CSV file into an :class:`ArrayDataset` of float32.

    Parameters
    ----------
    path : str or PathLike
    target_column : int, str or None
        The target column (an index, negative allowed, or a header name); None keeps every
        column as a feature and the dataset has no targets. Targets are a 1-D float32 array.
    delimiter : str
    has_header : bool or None
        None: the first line is a header when any of its cells is not a number.
    skip_columns : iterable of int or str
        Columns dropped from the features.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    EveryOShapeError
        The file is empty, a cell is not a number, rows differ in length, or a named column
        is not in the header.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no CSV file at {path}")
    rows = _read_rows(path, delimiter)
    if not rows:
        raise EveryOShapeError(f"{path} is empty: no rows to load")
    if has_header is None:
        has_header = not all(_is_number(c) for c in rows[0])
    header = rows[0] if has_header else None
    body = rows[1:] if has_header else rows
    if not body:
        raise EveryOShapeError(f"{path} has a header but no data rows")
    table = _parse(body, 2 if has_header else 1, path)
    width = table.shape[1]
    drop = {_column(c, header, width, path) for c in skip_columns}
    target = None if target_column is None else _column(target_column, header, width, path)
    keep = [j for j in range(width) if j != target and j not in drop]
    targets = None if target is None else table[:, target].copy()
    return ArrayDataset(np.ascontiguousarray(table[:, keep]), targets)
