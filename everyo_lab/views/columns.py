"""The summary table's columns and cell formats, shared by the HTML and text renderings."""

from __future__ import annotations

import dataclasses

from everyo import spelling
from everyo.profiler import names, schema

__all__ = [
    "NO_VALUE",
    "OVERLAP_WARNING",
    "SHARE",
    "TableColumn",
    "TEXT_COLUMNS",
    "columns_for",
    "display_label",
    "event_label",
    "format_cell",
    "group_label",
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
    :func:`everyo.profiler.names.matches` accepts this text back.

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
