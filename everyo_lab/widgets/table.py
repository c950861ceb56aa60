"""``SummaryTable``: the sortable per-module summary (front end: js/src/table_widget.js)."""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

STATIC = Path(__file__).parent.parent / "static"
GROUPS = ("name", "path", "shape")


class SummaryTable(anywidget.AnyWidget):
    """Summary rows with clickable column headers, a group-by select and share bars.

    The rows come from :func:`everyo_lab.views.table_rows`; the owner recomputes them when
    ``group_by``, ``sort_by`` or ``descending`` change (the front end sorts immediately too).
    ``theme`` is reported by the front end ("light" or "dark", from JupyterLab's theme).
    """

    _esm = STATIC / "table.js"
    rows = traitlets.List(traitlets.Dict()).tag(sync=True)
    sort_by = traitlets.Unicode("total_ms").tag(sync=True)
    descending = traitlets.Bool(True).tag(sync=True)
    group_by = traitlets.Enum(GROUPS, default_value="name").tag(sync=True)
    theme = traitlets.Unicode("light").tag(sync=True)

    def __repr__(self) -> str:
        return (
            f"SummaryTable(rows={len(self.rows)}, group_by={self.group_by!r}, "
            f"sort_by={self.sort_by!r}, descending={self.descending})"
        )
