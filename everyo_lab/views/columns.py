"""The summary table's columns and cell formats, shared by the HTML and text renderings."""

from __future__ import annotations

__all__ = ["OVERLAP_WARNING", "TEXT_COLUMNS", "columns_for", "format_cell", "group_label"]

OVERLAP_WARNING = (
    "Nested module timing intervals overlap: do not add parent and child totals together "
    "and read the sum as wall-clock time."
)

TEXT_COLUMNS = ("name", "module", "kind")
"""Columns aligned left like the group column; every other column is a number."""

_BASE = (
    ("calls", "calls", "{:,d}"),
    ("total_ms", "total ms", "{:.3f}"),
    ("self_ms", "self ms", "{:.3f}"),
    ("mean_ms", "mean ms", "{:.3f}"),
    ("max_ms", "max ms", "{:.3f}"),
)
_OPTIONAL = (("gflops", "GFLOP/s", "{:.2f}"), ("device_ms", "device ms", "{:.3f}"))
_GROUP_HEADER = {"name": "name", "path": "module path", "shape": "input shapes"}


def group_label(row: dict, group_by: str) -> str:
    """The text of a row's first column: its name, module path or input shapes.

    By path, the summary puts the group's path (the root's class) in ``name`` too."""
    if group_by == "shape":
        value = row.get("shapes")
        return str(value) if value not in (None, "") else "(no tensors)"
    return str(row.get("name", ""))


def columns_for(rows: list[dict], group_by: str) -> list[tuple[str, str, str]]:
    """``(key, header, format)`` of the columns to show: the group, the timings, and the optional
    columns some row has a value for. The group column's key is ``""``."""
    cols = [("", _GROUP_HEADER.get(group_by, group_by), "{}")]
    if group_by == "path" and any(r.get("module") for r in rows):
        cols.append(("module", "module", "{}"))
    elif group_by == "shape" and any("name" in r for r in rows):
        cols.append(("name", "name", "{}"))
    if len({r.get("kind") for r in rows}) > 1:  # same name, different kinds: tell them apart
        cols.append(("kind", "kind", "{}"))
    cols += [c for c in _BASE if any(c[0] in r for r in rows)]
    cols += [c for c in _OPTIONAL if any(r.get(c[0]) is not None for r in rows)]
    return cols


def format_cell(row: dict, key: str, fmt: str, group_by: str) -> str:
    """One cell as text; missing values read as an en dash."""
    if key == "":
        return group_label(row, group_by)
    value = row.get(key)
    if value is None:
        return "–"
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return str(value)
