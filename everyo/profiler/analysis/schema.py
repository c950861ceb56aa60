"""The summary's vocabulary, in one place: how rows group, what they sort by, their columns.

Read by :mod:`everyo.profiler.analysis.run_analysis` (the rows),
:mod:`everyo.profiler.analysis.summary_table` (their
text), ``everyo_lab.views`` (the dashboard's table), the CLI and the ``%%everyo_profile`` magic;
the front end's copy (``js/src/schema.js``) is generated from here by :func:`js_module` and a test
checks it is current (``python -m everyo.profiler.analysis.schema > js/src/schema.js``).

>>> from everyo.profiler import schema
>>> schema.GROUP_BY
('name', 'path', 'shape')
>>> schema.check_group_by("colour")
Traceback (most recent call last):
...
everyo.errors.EveryOProfilerError: group_by 'colour': use one of name, path, shape
"""

from __future__ import annotations

import json
from typing import NamedTuple

from everyo.errors import EveryOProfilerError
from everyo.spelling import NO_VALUE

__all__ = [
    "COLUMNS",
    "COLUMN_ORDER",
    "Column",
    "GROUP_BY",
    "GROUP_HEADERS",
    "SORT_KEYS",
    "TEXT_COLUMNS",
    "TREE_BY",
    "check_choice",
    "check_group_by",
    "check_sort_by",
    "js_module",
]


class Column(NamedTuple):
    """One column of the summary rows: its ``key``, short ``header`` and what it means."""

    key: str
    header: str
    meaning: str


GROUP_HEADERS = {"name": "name", "path": "module [path]", "shape": "input shapes"}
"""``group_by`` values and the header of the first column for each."""

GROUP_BY = tuple(GROUP_HEADERS)
"""One summary row per (kind, name), per (kind, module path) or per (kind, name, input shapes)."""

SHAPES_NOT_RECORDED = (
    "shapes were not recorded: profile with record_shapes=True (the default; --no-shapes "
    "turns it off) to group by input shapes"
)
"""What a view grouping by shape says of a run without shapes (instead of other rows)."""

TREE_BY = ("path", "name")
"""How :func:`~everyo.profiler.analysis.run_analysis.call_tree` labels its nodes."""

COLUMNS = (
    Column("label", "name", "class name qualified by module path: 'Conv2d [features.3]' (views)"),
    Column("name", "name", "the event's name: module class, region or op name"),
    Column("kind", "kind", "module, backward, op, optimizer, data, user or gpu"),
    Column("calls", "calls", "number of events in the group"),
    Column("total_ms", "total ms", "inclusive time: events' durations, children included"),
    Column("self_ms", "self ms", "exclusive time: durations minus the children's"),
    Column("share", "share", "total_ms / the run's wall time, in [0, 1]"),
    Column("mean_ms", "mean ms", "total_ms / calls"),
    Column("median_ms", "median ms", "median duration of one event"),
    Column("min_ms", "min ms", "shortest event"),
    Column("max_ms", "max ms", "longest event"),
    Column("std_ms", "std ms", "standard deviation of the durations"),
    Column("flops", "FLOPs", "floating-point operations, inclusive (record_ops)"),
    Column("gflops", "GFLOP/s", "flops / total time (record_ops)"),
    Column("device_ms", "device ms", "CUDA-event time on the GPU (cuda runs)"),
    Column("mem_bytes", "allocated", "bytes of the arrays the events returned (profile_memory)"),
    Column("shapes", "input shapes", "input shapes of the group (group_by='shape')"),
    Column("path", "path", "module path, when the group has one"),
)
"""The summary columns in the order every table shows them (absent columns are skipped)."""

COLUMN_ORDER = tuple(c.key for c in COLUMNS)

TEXT_COLUMNS = ("label", "name", "kind", "shapes", "path", "module")
"""Columns that hold text (aligned left); every other column is a number."""

SORT_KEYS = (
    "total_ms",
    "self_ms",
    "mean_ms",
    "max_ms",
    "min_ms",
    "median_ms",
    "std_ms",
    "calls",
    "share",
    "name",
    "kind",
    "flops",
    "gflops",
    "device_ms",
    "mem_bytes",
)
"""Columns ``summary(sort_by=...)``, ``--sort`` and the magic's ``--sort`` accept."""


def check_choice(value, valid, what: str) -> None:
    """Raise :class:`~everyo.errors.EveryOProfilerError` (a ``ValueError``) naming the valid
    values unless ``value`` is one of them; ``what`` names the option (``"group_by"``,
    ``"--group-by"``)."""
    if value not in valid:
        raise EveryOProfilerError(f"{what} {value!r}: use one of {', '.join(valid)}")


def check_group_by(value, what: str = "group_by") -> None:
    """:func:`check_choice` against :data:`GROUP_BY`."""
    check_choice(value, GROUP_BY, what)


def check_sort_by(value, what: str = "sort_by") -> None:
    """:func:`check_choice` against :data:`SORT_KEYS`."""
    check_choice(value, SORT_KEYS, what)


def js_module() -> str:
    """The text of ``js/src/schema.js``: what the front end needs of this vocabulary (the
    group-by select's options and the spelling of no value; columns, their order and sorting
    reach it in each report)."""
    constants = {
        "GROUP_HEADERS": GROUP_HEADERS,
        "NO_VALUE": NO_VALUE,
    }
    lines = [
        "// Generated from everyo/profiler/analysis/schema.py",
        "// by `python -m everyo.profiler.analysis.schema`;",
        "// do not edit (tests/profiler/test_schema.py checks it is current).",
    ]
    lines += [
        f"export const {name} = {json.dumps(value, ensure_ascii=False)};"
        for name, value in constants.items()
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(js_module(), end="")
