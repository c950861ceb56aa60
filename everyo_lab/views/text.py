"""The ``text/plain`` rendering: a header line and an aligned table, for terminals."""

from __future__ import annotations

from everyo_lab.views._batch import as_run
from everyo_lab.views.columns import OVERLAP_WARNING, TEXT_COLUMNS, columns_for, format_cell
from everyo_lab.views.header import header_info
from everyo_lab.views.table import table_rows

__all__ = ["header_line", "render_text"]

_MAX_LABEL = 48


def header_line(info: dict) -> str:
    """``everyo profile 'label' · completed · 1.234 ms wall · 84 events``."""
    return (
        f"everyo profile {info['label']!r} · {info['status']} · "
        f"{info['wall_ms']:.3f} ms wall · {info['events']:,} events"
    )


def render_text(run, *, top: int = 20, group_by: str = "name", sort_by: str = "total_ms") -> str:
    """Render a run as plain text: header, hot spots, the summary table and the overlap warning.

    Columns are aligned: the group column left, numbers right.
    """
    lines = []
    if as_run(run) is not None:
        info = header_info(run)
        lines.append(header_line(info))
        if info["error"]:
            lines.append(f"error: {info['error']}")
        if info["hot_spots"]:
            spots = ", ".join(
                f"{h['name']}{' (' + h['path'] + ')' if h['path'] else ''} {h['pct']:.1f}%"
                for h in info["hot_spots"]
            )
            lines.append(f"hot spots (self time): {spots}")
    rows = table_rows(run, group_by=group_by, sort_by=sort_by, top=top)
    if not rows:
        lines.append("no events recorded")
        return "\n".join(lines)
    lines.append("")
    lines += _table(rows, group_by)
    lines.append("")
    lines.append(OVERLAP_WARNING)
    return "\n".join(lines)


def _table(rows: list[dict], group_by: str) -> list[str]:
    cols = columns_for(rows, group_by) + [("share", "share", "{:.1%}")]
    cells = [[format_cell(r, key, fmt, group_by) for key, _, fmt in cols] for r in rows]
    for line in cells:  # long module paths would push every number off screen
        line[0] = line[0] if len(line[0]) <= _MAX_LABEL else line[0][: _MAX_LABEL - 1] + "…"
    headers = [h for _, h, _ in cols]
    widths = [max(len(headers[j]), *(len(c[j]) for c in cells)) for j in range(len(cols))]
    text_cols = {0} | {j for j, (k, _, _) in enumerate(cols) if k in TEXT_COLUMNS}

    def fmt_line(values) -> str:
        return "  ".join(
            v.ljust(widths[j]) if j in text_cols else v.rjust(widths[j])
            for j, v in enumerate(values)
        ).rstrip()

    return [fmt_line(headers)] + [fmt_line(c) for c in cells]
