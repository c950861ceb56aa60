"""The summary table: its columns and cell formats (shared by the HTML and text renderings and
laid out by the widget), and the profiler's summary rows, sorted, cut and given share-bar
widths."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from everyo import spelling
from everyo.errors import EveryOProfilerError
from everyo.profiler.analysis import names, schema
from everyo.profiler.analysis.schema import GROUP_BY, check_group_by
from everyo_lab.views._batch import as_run

__all__ = [
    "add_labels",
    "check_group_by",
    "columns_for",
    "display_label",
    "event_label",
    "finish_rows",
    "format_cell",
    "GROUP_BY",
    "group_label",
    "NO_VALUE",
    "OVERLAP_WARNING",
    "SHARE",
    "sort_order",
    "sort_rows",
    "table_dict",
    "table_rows",
    "TableColumn",
    "TEXT_COLUMNS",
    "wall_ns",
]

OVERLAP_WARNING = (
    "Nested module timing intervals overlap: do not add parent and child totals together "
    "and read the sum as wall-clock time."
)

TEXT_COLUMNS = schema.TEXT_COLUMNS
"""Columns aligned left like the group column; every other column is a number."""

NO_VALUE = spelling.NO_VALUE
"""How a cell without a value reads, in every rendering (the widget's included)."""


@dataclasses.dataclass(frozen=True)
class TableColumn:
    """One column of the summary table as every renderer shows it.

    ``label`` and ``unit`` make the ``header`` ("total ms"); ``align`` is ``"left"`` (text) or
    ``"right"`` (numbers); ``fmt`` formats a value (``"bytes"``:
    :func:`everyo.spelling.format_bytes`); ``bar`` marks the share column, drawn with a bar.
    """

    key: str
    label: str
    unit: str = ""
    align: str = "right"
    fmt: str = "{}"
    bar: bool = False

    @property
    def header(self) -> str:
        return f"{self.label} {self.unit}" if self.unit else self.label

    def to_dict(self) -> dict:
        """What the widget gets: ``key``, ``label``, ``unit``, ``align``, ``header``, ``bar``."""
        return {
            "key": self.key,
            "label": self.label,
            "unit": self.unit,
            "align": self.align,
            "header": self.header,
            "bar": self.bar,
        }


def _ms(key: str, label: str) -> TableColumn:
    return TableColumn(key, label, "ms", fmt="{:.3f}")


# the numbers the table shows, in the schema's order; a column shows when some row has a value
_NUMBERS = {
    "calls": TableColumn("calls", "calls", fmt="{:,d}"),
    "total_ms": _ms("total_ms", "total"),
    "self_ms": _ms("self_ms", "self"),
    "mean_ms": _ms("mean_ms", "mean"),
    "median_ms": _ms("median_ms", "median"),
    "max_ms": _ms("max_ms", "max"),
    "gflops": TableColumn("gflops", "GFLOP/s", fmt="{:.2f}"),
    "device_ms": _ms("device_ms", "device"),
    "mem_bytes": TableColumn("mem_bytes", "allocated", fmt="bytes"),  # profile_memory only
}
_NUMBER_ORDER = tuple(k for k in schema.COLUMN_ORDER if k in _NUMBERS)
SHARE = TableColumn("share", "share", align="left", fmt="{:.1%}", bar=True)
"""The last column: inclusive time over wall time, as a percentage and a bar."""
_GROUP_HEADER = schema.GROUP_HEADERS


def display_label(name: str, path: str) -> str:
    """A group's name with its module path as a qualifier: ``"Conv2d [features.3]"``.

    Just the name when the path is empty (an outermost module, a region) or is the name itself;
    :func:`everyo.profiler.analysis.names.matches` accepts this text back.

    >>> display_label("Conv2d", "features.3"), display_label("Sequential", "")
    ('Conv2d [features.3]', 'Sequential')
    """
    return names.label(name, path)


def event_label(kind: str, name: str, path: str) -> str:
    """:func:`display_label`, with a module's backward work (``"Conv2d.backward"``) read as
    ``"Conv2d [features.3] (backward)"``: the class first, as for its forward call."""
    return names.event_label(kind, name, path)


def group_label(row: dict, group_by: str) -> str:
    """The text of a row's first column: its input shapes by shape, else its label
    (``"Conv2d [features.3]"``; the name for rows without one)."""
    if group_by == "shape":
        value = row.get("shapes")
        return str(value) if value not in (None, "") else "(no tensors)"
    return str(row.get("label") or row.get("name", ""))


def columns_for(rows: list[dict], group_by: str) -> list[TableColumn]:
    """The columns of the summary table, in every renderer: the group (``label``, or ``shapes``
    by shape), the kind when rows of one name differ in it, the numbers some row has a value
    for (a live run's rows have no median: no median column), and the share."""
    first = "shapes" if group_by == "shape" else "label"
    cols = [TableColumn(first, _GROUP_HEADER.get(group_by, group_by), align="left")]
    if group_by == "shape" and any("name" in r for r in rows):
        cols.append(TableColumn("label", "name", align="left"))
    if len({r.get("kind") for r in rows}) > 1:  # same name, different kinds: tell them apart
        cols.append(TableColumn("kind", "kind", align="left"))
    cols += [_NUMBERS[k] for k in _NUMBER_ORDER if any(r.get(k) is not None for r in rows)]
    return [*cols, SHARE] if rows else cols


def format_cell(row: dict, column: TableColumn, group_by: str) -> str:
    """One cell as text; a missing value reads as :data:`NO_VALUE`. The group column reads as
    :func:`group_label`."""
    key = column.key
    if key == ("shapes" if group_by == "shape" else "label"):
        return group_label(row, group_by)
    if key == "label":
        return str(row.get("label") or row.get("name", ""))
    value = row.get(key)
    if value is None:
        return NO_VALUE
    if column.fmt == "bytes":
        return spelling.format_bytes(value)
    try:
        return column.fmt.format(value)
    except (ValueError, TypeError):
        return str(value)


def wall_ns(run_or_batch) -> int:
    """The run's wall time, or for a bare batch the span from its first start to its last end."""
    run = as_run(run_or_batch)
    if run is not None:
        return int(run.wall_ns)
    start = np.asarray(run_or_batch.start_ns, dtype=np.int64)
    if len(start) == 0:
        return 0
    end = start + np.asarray(run_or_batch.dur_ns, dtype=np.int64)
    return int(end.max() - start.min())


def table_rows(
    run_or_batch,
    *,
    group_by: str = "name",
    sort_by: str = "total_ms",
    descending: bool = True,
    top: int | None = None,
) -> list[dict]:
    """Summary rows of a run or batch, as the dashboard table shows them.

    Rows come from :func:`everyo.profiler.analysis.run_analysis.summarize`; each gets ``share``, its
    inclusive time as a fraction of the run's wall time (in [0, 1]), for the share bar, and
    ``label``, its class name qualified by its module path (``"Conv2d [features.3]"``).

    Parameters
    ----------
    group_by
        ``"name"``, ``"path"`` or ``"shape"``.
    sort_by
        Any column of the rows (``total_ms``, ``self_ms``, ``calls``, ``name``, ``share``, ...).
        Missing values sort last either way.
    descending
        Largest first (the default).
    top
        Keep only the first ``top`` rows after sorting.

    Raises
    ------
    EveryOProfilerError
        For an unknown ``group_by`` or ``sort_by`` column (a ``ValueError``; the check is
        :func:`everyo.profiler.analysis.schema.check_group_by`, shared with the profiler and the
        CLI).
    """
    check_group_by(group_by)
    from everyo.profiler.analysis import (
        run_analysis as analysis,  # lazily: views import fast and stay pure
    )

    rows = [dict(r) for r in analysis.summarize(run_or_batch, group_by=group_by)]
    return finish_rows(rows, sort_by=sort_by, descending=descending, top=top)


def finish_rows(rows: list[dict], *, sort_by: str, descending: bool, top: int | None) -> list[dict]:
    """Give each summary row its ``label``, then sort and cut to ``top``: the last steps of the
    exact and the live table alike (in place; the rows' ``share`` is the summary's,
    :func:`everyo.profiler.analysis.aggregates.share`)."""
    add_labels(rows)
    rows = sort_rows(rows, sort_by, descending=descending)
    return rows if top is None else rows[: max(0, int(top))]


def add_labels(rows: list[dict]) -> None:
    """Give each row its ``label``: class name and module path, ``"Conv2d [features.3]"``
    (see :func:`~everyo_lab.views.table.table_rows.event_label`; in place). Grouped by path, a row's
    name is its path and its class is in ``module``."""
    for row in rows:
        name = row.get("module") or row["name"]
        row["label"] = event_label(row.get("kind", ""), name, row.get("path", ""))


def sort_rows(rows: list[dict], sort_by: str, *, descending: bool = True) -> list[dict]:
    """Sort rows by one column; ``None``/NaN sort last, numbers before text, ties in label
    order (:func:`sort_order`)."""
    if rows and not any(sort_by in r for r in rows):
        columns = ", ".join(sorted({k for r in rows for k in r}))
        raise EveryOProfilerError(f"cannot sort by {sort_by!r}; columns are: {columns}")
    return [rows[i] for i in sort_order(rows, sort_by, descending=descending)]


def sort_order(rows: list[dict], sort_by: str, *, descending: bool = True) -> list[int]:
    """The indices of ``rows`` sorted by ``sort_by``: missing values (``None``, NaN) last either
    way, numbers before text, ties in label order (not in the order events arrived: the live
    and the exact table agree). The one sort rule of every table, the widget's included."""

    def missing(v) -> bool:
        return v is None or (isinstance(v, float) and math.isnan(v))

    by_tie = sorted(range(len(rows)), key=lambda i: _tie_key(rows[i]))
    present = [i for i in by_tie if not missing(rows[i].get(sort_by))]
    absent = [i for i in by_tie if missing(rows[i].get(sort_by))]
    present.sort(key=lambda i: _sort_key(rows[i][sort_by]), reverse=descending)
    return present + absent


def _tie_key(row: dict) -> tuple:
    return (
        str(row.get("label") or row.get("name", "")),
        str(row.get("kind", "")),
        str(row.get("shapes", "")),
    )


def _sort_key(value):
    if isinstance(value, (int, float, np.integer, np.floating)):
        return (0, float(value), "")
    return (1, 0.0, str(value).lower())


def table_dict(rows: list[dict], group_by: str, sort: tuple[str, bool]) -> dict:
    """The table as the widget lays it out, every figure spelt here: ``columns``
    (:meth:`TableColumn.to_dict`), ``rows`` (per row its cell ``texts`` and the share bar's
    width in percent) in the order of ``sort`` (``(column, descending)``, what the rows are
    sorted by), and ``order``: for each column, the row indices sorted by it ascending and
    descending (:func:`sort_rows`' rules), so a header click re-sorts at once while the
    kernel is busy, without rules of the browser's own."""
    columns = columns_for(rows, group_by)
    body = [
        {
            "texts": [format_cell(r, c, group_by) for c in columns],
            "bar": round(100 * min(1.0, max(0.0, float(r.get("share") or 0.0))), 2),
        }
        for r in rows
    ]
    order = {}
    for c in columns:
        up, down = sort_order(rows, c.key, descending=False), sort_order(rows, c.key)
        order[c.key] = {"ascending": up, "descending": down}
    return {
        "columns": [c.to_dict() for c in columns],
        "rows": body,
        "order": order,
        "sort_by": sort[0],
        "descending": bool(sort[1]),
    }
