"""The summary table: the profiler's summary rows, sorted, cut and given share-bar widths."""

from __future__ import annotations

import math

import numpy as np

from everyo.errors import EveryOProfilerError
from everyo.profiler.schema import GROUP_BY, check_group_by
from everyo_lab.views._batch import as_run
from everyo_lab.views.columns import columns_for, event_label, format_cell

__all__ = [
    "GROUP_BY",
    "add_labels",
    "check_group_by",
    "finish_rows",
    "sort_order",
    "sort_rows",
    "table_rows",
    "wall_ns",
    "table_dict",
]


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

    Rows come from :func:`everyo.profiler.analysis.summarize`; each gets ``share``, its
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
        :func:`everyo.profiler.schema.check_group_by`, shared with the profiler and the CLI).
    """
    check_group_by(group_by)
    from everyo.profiler import analysis  # lazily: views import fast and stay pure

    rows = [dict(r) for r in analysis.summarize(run_or_batch, group_by=group_by)]
    return finish_rows(rows, sort_by=sort_by, descending=descending, top=top)


def finish_rows(rows: list[dict], *, sort_by: str, descending: bool, top: int | None) -> list[dict]:
    """Give each summary row its ``label``, then sort and cut to ``top``: the last steps of the
    exact and the live table alike (in place; the rows' ``share`` is the summary's,
    :func:`everyo.profiler.aggregates.share`)."""
    add_labels(rows)
    rows = sort_rows(rows, sort_by, descending=descending)
    return rows if top is None else rows[: max(0, int(top))]


def add_labels(rows: list[dict]) -> None:
    """Give each row its ``label``: class name and module path, ``"Conv2d [features.3]"``
    (see :func:`~everyo_lab.views.columns.event_label`; in place). Grouped by path, a row's
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
