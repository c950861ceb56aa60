"""``to_html(run, path)``: a self-contained, offline HTML report of one run.

The page holds the header, the summary table and the notes of one
:class:`~everyo_lab.views.report.Report` (the same static HTML as a notebook's saved output), then
the interactive flame chart and icicle with plotly.js inlined, so it opens anywhere, without a
network or a kernel.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from everyo.fileio import write_text
from everyo_lab.html_page import link_script, page
from everyo_lab.views import flame_figure, icicle_figure
from everyo_lab.views._batch import as_batch
from everyo_lab.views.report import Report, as_report
from everyo_lab.views.static import render_header_html, render_notes_html, render_table_html

__all__ = ["to_html", "report_html"]


def to_html(
    run,
    path: str | os.PathLike,
    *,
    top: int = 50,
    group_by: str = "name",
    report: Report | None = None,
) -> Path:
    """Write a self-contained HTML report of ``run`` to ``path`` and return the path.

    The file works offline: plotly.js is embedded (about 4.5 MB). It is written atomically
    (a temporary file in the same folder, then renamed), so a reader never sees half a report.

    Parameters
    ----------
    run
        A profiler ``Run`` (e.g. ``everyo.profiler.runs.latest``), or a comparison
        (``everyo_lab.compare(a, b)`` or its ``comparison_view``): then the page shows both
        flame charts on one time axis, zooming together, and the diff table.
    path
        Where to write, e.g. ``"profiles/report.html"``; the folder must exist.
    top, group_by
        Rows and grouping of the summary table (unused with ``report``).
    report
        A prebuilt :class:`~everyo_lab.views.report.Report` of ``run`` to show (the same numbers
        as the notebook's outputs); built from ``run`` when omitted.

    Raises
    ------
    EveryOExportError
        When the file cannot be written; the message names the path.

    Examples
    --------
    >>> import everyo_lab  # doctest: +SKIP
    >>> everyo_lab.to_html(everyo.profiler.runs.latest, "profiles/report.html")  # doctest: +SKIP
    """
    target = Path(path)
    document = report_html(run, top=top, group_by=group_by, report=report)
    write_text(target, _LONE_SURROGATE.sub("\ufffd", document))
    return target


def report_html(run, *, top: int = 50, group_by: str = "name", report: Report | None = None) -> str:
    """The report document as a string (what :func:`to_html` writes)."""
    from everyo_lab.compare_html import comparison_html, comparison_of

    comparison = comparison_of(run)  # everyo_lab.compare(a, b), or its Comparison
    if comparison is not None:
        return comparison_html(comparison)
    report = as_report(run, report, top=top, group_by=group_by)
    title = f"everyo profile · {report.label or 'run'}"
    body = [render_header_html(report=report)]
    if report.rows:
        body.append(render_table_html(report))
    body.append(render_notes_html(report))
    figures = {}
    if report.rows and not isinstance(run, Report):
        batch = as_batch(run)
        body.append('<h2>Flame chart</h2><div id="flame" class="chart"></div>')
        if not report.memory:
            figures = {"flame": flame_figure(batch, marks=run.step_ns)}
        else:  # profile_memory: live bytes on the flame chart's time axis, zooming with it
            from everyo_lab.views.memory.memory_view import memory_figure

            span = (0.0, max(report.wall_ms, report.memory["t_ms"][-1]))
            figures = {"flame": flame_figure(batch, x_range=span, marks=run.step_ns)}
            figures["memory"] = memory_figure(report.memory, x_range=span)
            body.append('<h2>Memory</h2><div id="memory" class="chart"></div>')
            body.append(link_script(["flame", "memory"]))
        body.append('<h2>Call tree by module path</h2><div id="icicle" class="chart"></div>')
        figures["icicle"] = icicle_figure(batch)
    return page(title, body, figures)


# halves of a surrogate pair alone (from a name decoded with errors="surrogateescape", say):
# UTF-8 cannot hold them, so the page shows U+FFFD, as a browser does for bad bytes
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
