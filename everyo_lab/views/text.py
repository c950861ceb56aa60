"""The ``text/plain`` rendering of a :class:`~everyo_lab.views.report.Report`: a header, hot
spots, steps, an aligned table and the notes, for terminals."""

from __future__ import annotations

from everyo_lab.views.memory.memory_view import memory_text
from everyo_lab.views.report import Report, as_report, hot_spot_text, steps_text
from everyo_lab.views.table.table_rows import format_cell
from everyo_lab.views.why.why_static import hot_lines_text, top_rows_hot_lines

__all__ = ["header_line", "render_text"]

_MAX_LABEL = 48


def header_line(info) -> str:
    """``everyo profile 'label' · completed · 1.234 ms wall · 84 events``, of a
    :class:`Report` (or a dict with ``label``, ``status``, ``wall_ms`` and ``events``)."""
    if isinstance(info, Report):
        info = info.to_dict()
    return (
        f"everyo profile {info['label']!r} · {info['status']} · "
        f"{info['wall_ms']:.3f} ms wall · {info['events']:,} events"
    )


def render_text(
    run=None,
    *,
    top: int = 20,
    group_by: str = "name",
    sort_by: str = "total_ms",
    report: Report | None = None,
) -> str:
    """Render a run as plain text: header, hot spots, steps, the summary table, the hot lines of
    its top rows (a run with stack samples) and the notes.

    ``run`` may be a run, an event batch or a :class:`Report`; with ``report=`` (or a Report)
    the report's own rows and options are shown and ``top``/``group_by``/``sort_by`` are unused.
    Columns are aligned: the label column left, numbers right.
    """
    report = as_report(run, report, top=top, group_by=group_by, sort_by=sort_by)
    lines = []
    if report.run_id:
        lines.append(header_line(report))
        if report.error:
            lines.append(f"error: {report.error}")
    if report.hot_spots:
        spots = ", ".join(hot_spot_text(h) for h in report.hot_spots)
        lines.append(f"hot spots (self time): {spots}")
    if report.steps:
        lines.append(f"steps: {steps_text(report.steps)}")
    if report.memory:
        lines.append(memory_text(report.memory))
    if report.rows:
        lines += [""] + _table(report) + [""]
    if run is not None and not isinstance(run, Report):  # (no rows: the samples may say)
        hot = hot_lines_text(top_rows_hot_lines(run, report))
        lines += [hot, ""] if hot else []
    lines += report.notes
    return "\n".join(lines)


def _table(report: Report) -> list[str]:
    rows, group_by = report.rows, report.group_by
    cols = report.columns
    cells = [[format_cell(r, col, group_by) for col in cols] for r in rows]
    for line in cells:  # long labels would push every number off screen
        line[0] = line[0] if len(line[0]) <= _MAX_LABEL else line[0][: _MAX_LABEL - 1] + "…"
    headers = [col.header for col in cols]
    widths = [max(len(headers[j]), *(len(c[j]) for c in cells)) for j in range(len(cols))]
    text_cols = {j for j, col in enumerate(cols) if col.align == "left"}

    def fmt_line(values) -> str:
        return "  ".join(
            v.ljust(widths[j]) if j in text_cols else v.rjust(widths[j])
            for j, v in enumerate(values)
        ).rstrip()

    return [fmt_line(headers)] + [fmt_line(c) for c in cells]
