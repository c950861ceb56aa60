"""The summary table's columns and cell formats, shared by the HTML and text renderings."""

from __future__ import annotations

from everyo.profiler import names, schema

__all__ = [
    "OVERLAP_WARNING",
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

# the numbers the rendered tables show, and how; order and headers come from the schema
_BASE_FORMATS = {
    "calls": "{:,d}",
    "total_ms": "{:.3f}",
    "self_ms": "{:.3f}",
    "mean_ms": "{:.3f}",
    "max_ms": "{:.3f}",
}
_OPTIONAL_FORMATS = {
    "gflops": "{:.2f}",
    "device_ms": "{:.3f}",
    "mem_bytes": "bytes",  # profile_memory only: bytes of the arrays returned
}
_BASE = tuple(
    (c.key, c.header, _BASE_FORMATS[c.key]) for c in schema.COLUMNS if c.key in _BASE_FORMATS
)
_OPTIONAL = tuple(
    (c.key, c.header, _OPTIONAL_FORMATS[c.key])
    for c in schema.COLUMNS
    if c.key in _OPTIONAL_FORMATS
)
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


def columns_for(rows: list[dict], group_by: str) -> list[tuple[str, str, str]]:
    """``(key, header, format)`` of the columns to show: the group (``label``, or ``shapes`` by
    shape), the timings, and the optional columns some row has a value for."""
    first = "shapes" if group_by == "shape" else "label"
    cols = [(first, _GROUP_HEADER.get(group_by, group_by), "{}")]
    if group_by == "shape" and any("name" in r for r in rows):
        cols.append(("label", "name", "{}"))
    if len({r.get("kind") for r in rows}) > 1:  # same name, different kinds: tell them apart
        cols.append(("kind", "kind", "{}"))
    cols += [c for c in _BASE if any(c[0] in r for r in rows)]
    cols += [c for c in _OPTIONAL if any(r.get(c[0]) is not None for r in rows)]
    return cols


def format_cell(row: dict, key: str, fmt: str, group_by: str) -> str:
    """One cell as text; missing values read as an en dash. The group column (its key, or
    ``""``) reads as :func:`group_label`."""
    if key in ("", "shapes" if group_by == "shape" else "label"):
        return group_label(row, group_by)
    if key == "label":
        return str(row.get("label") or row.get("name", ""))
    value = row.get(key)
    if value is None:
        return "–"
    if fmt == "bytes":
        from everyo_lab.views.memory import format_bytes

        return format_bytes(value)
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return str(value)
