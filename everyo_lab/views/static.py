"""The static ``text/html`` rendering of a :class:`~everyo_lab.views.report.Report`: header,
summary table, notes (the overlap warning among them) and the flame chart (``<div>`` bars).

No JavaScript, no ``<style>`` block and no SVG for the flame chart: inline styles only, each
colour with a plain fallback before its theme variable, so the output survives JupyterLab's and
Notebook 7's sanitiser for untrusted notebooks (see :mod:`~everyo_lab.views.flame.flame_html`),
nbconvert and GitHub's viewer. Colours use JupyterLab's CSS
variables with fallbacks, so a saved notebook follows the light or dark theme it is opened in.
"""

from __future__ import annotations

import html

from everyo_lab.views._batch import as_batch
from everyo_lab.views.flame.flame_html import css, flame_html, tree_flame_html
from everyo_lab.views.memory.memory_view import memory_html, memory_text
from everyo_lab.views.report import Report, as_report, hot_spot_figures, steps_text
from everyo_lab.views.table.table_rows import OVERLAP_WARNING, columns_for, format_cell
from everyo_lab.views.why.why_static import hot_lines_html, top_rows_hot_lines

__all__ = ["render_html", "render_header_html", "render_notes_html", "render_table_html"]

_PALETTES = {
    "light": {
        "fg": "#1f2328",
        "muted": "#59636e",
        "border": "#d0d7de",
        "bar": "#4c78a8",
        "track": "#e8edf3",
        "warn": "#d4a72c",
        "err": "#cf222e",
    },
    "dark": {
        "fg": "#e6edf3",
        "muted": "#9198a1",
        "border": "#3d444d",
        "bar": "#5b9bd5",
        "track": "#262c36",
        "warn": "#d29922",
        "err": "#ff7b72",
    },
}


def _colors(theme: str) -> dict:
    if theme not in _PALETTES:
        raise ValueError(f"theme must be 'light' or 'dark', not {theme!r}")
    p = _PALETTES[theme]
    return {
        "fg": f"var(--jp-ui-font-color1, {p['fg']})",
        "muted": f"var(--jp-ui-font-color2, {p['muted']})",
        "border": f"var(--jp-border-color2, {p['border']})",
        "bar": f"var(--jp-brand-color1, {p['bar']})",
        "track": f"var(--jp-layout-color2, {p['track']})",
        "warn": f"var(--jp-warn-color1, {p['warn']})",
        "err": f"var(--jp-error-color1, {p['err']})",
    }


def render_html(
    run=None,
    *,
    top: int = 20,
    group_by: str = "name",
    sort_by: str = "total_ms",
    theme: str = "light",
    report: Report | None = None,
) -> str:
    """Render a run as a self-contained HTML fragment with no JavaScript.

    Holds the header (label, status, error, wall time, events, hot spots, steps), the summary
    table with share bars, the hot lines of its top rows (a run with stack samples), the notes
    (among them the guide's warning about nested inclusive times), and the final flame chart as
    ``<div>`` bars (level-of-detail merged, a few hundred bars at most). All text is escaped.

    ``run`` may be a run, an event batch or a :class:`Report`; with ``report=`` (or a Report)
    the report's rows and options are shown (``top``/``group_by``/``sort_by`` are unused). The
    flame chart needs the events: it is drawn when ``run`` is a run or a batch.
    """
    c = _colors(theme)
    report = as_report(run, report, top=top, group_by=group_by, sort_by=sort_by)
    parts = [
        f'<div class="everyo-static" style="font-family:var(--jp-ui-font-family, system-ui, '
        f'sans-serif);font-size:13px;color:{c["fg"]};line-height:1.4;max-width:100%">',
        render_header_html(report=report, theme=theme),
    ]
    if report.rows:
        parts.append(render_table_html(report, theme=theme))
    if run is not None and not isinstance(run, Report):  # (no rows: the samples may say)
        found = top_rows_hot_lines(run, report)
        parts.append(hot_lines_html(found, c))
        parts.append(_tree_flame(run, found, c))
    parts.append(render_notes_html(report, theme=theme))
    if report.rows and run is not None and not isinstance(run, Report):
        batch = as_batch(run)
        span = _span_ns(batch, report.memory)
        chart = flame_html(batch, text_color=c["muted"], span_ns=span, marks=run.step_ns)
        parts.append(
            f'<div style="margin-top:6px"><div style="{css("color", c["muted"])}">flame chart '
            f"(time →, depth ↓)</div>{chart}</div>"
        )
        if report.memory:  # on the flame chart's time scale, right under it
            chart = memory_html(report.memory, span_ns=span, text_color=c["muted"])
            parts.append(
                f'<div><div style="{css("color", c["muted"])}">live tensor bytes over time</div>'
                f"{chart}</div>"
            )
    parts.append("</div>")
    return "".join(parts)


def render_header_html(run=None, *, theme: str = "light", report: Report | None = None) -> str:
    """The header block: label, status, wall time, events, start time, error, hot spots (by
    class, with their module path) and the step summary. Empty for a bare event batch."""
    c = _colors(theme)
    r = as_report(run, report)
    out = []
    if r.run_id:
        status_color = c["err"] if r.status == "failed" else c["muted"]
        out.append(
            f'<div style="margin-bottom:6px"><span style="font-weight:600;font-size:14px">'
            f"everyo profile · {html.escape(r.label)}</span> "
            f'<span style="color:{status_color}">{html.escape(r.status)}</span>'
            f' <span style="color:{c["muted"]}">· {r.wall_ms:.3f} ms wall · '
            f"{r.events:,} events · started {html.escape(r.start_iso)}</span></div>"
        )
    if r.error:
        out.append(
            f'<div style="color:{c["err"]};margin-bottom:4px">error: '
            f"{html.escape(str(r.error))}</div>"
        )
    if r.hot_spots:
        spots = " · ".join(
            f"<b>{html.escape(h['label'])}</b> {hot_spot_figures(h)}" for h in r.hot_spots
        )
        out.append(f'<div style="margin-bottom:4px">hot spots by self time: {spots}</div>')
    if r.steps:
        out.append(
            f'<div style="margin-bottom:6px">steps: {html.escape(steps_text(r.steps))}</div>'
        )
    if r.memory:
        out.append(f'<div style="margin-bottom:6px">{html.escape(memory_text(r.memory))}</div>')
    return "".join(out)


def _tree_flame(run, found: list, c: dict) -> str:
    """A run without events: its sampled call tree as a flame chart (the dashboard's, drawn
    from the same bars), "" for any other run."""
    from everyo_lab.views.why.why_panel import tree_bars

    if getattr(run, "num_events", 1) or not found or not found[0][0].is_outside:
        return ""
    hot = found[0][1]
    if hot.tree is None:
        return ""
    chart = tree_flame_html(tree_bars(hot.tree, run.wall_ns), text_color=c["muted"])
    if not chart:
        return ""
    return (
        f'<div style="margin-top:6px"><div style="{css("color", c["muted"])}">sampled call '
        "tree (each function as wide as its share of the samples, callers above)</div>"
        f"{chart}</div>"
    )


def _span_ns(batch, memory) -> float:
    """The time axis of a run's static charts: to its last event end or memory sample."""
    end = float((batch.start_ns + batch.dur_ns).max()) if len(batch) else 0.0
    last = memory["t_ms"][-1] * 1e6 if memory and memory["t_ms"] else 0.0
    return max(end, last)


def render_table_html(rows, *, group_by: str = "name", theme: str = "light") -> str:
    """The summary table with a share bar (inclusive time / wall time) per row.

    ``rows`` is a :class:`Report` (its rows and grouping) or a list of rows as
    :func:`~everyo_lab.views.table_rows` gives them.
    """
    if isinstance(rows, Report):
        rows, group_by = rows.rows, rows.group_by
    c = _colors(theme)
    cols = columns_for(rows, group_by)
    cell = f"padding:2px 8px;border-bottom:1px solid {c['border']};"
    head = "".join(
        f'<th style="{cell}text-align:{col.align}">{html.escape(col.header)}</th>' for col in cols
    )
    body = []
    for row in rows:
        tds = "".join(
            _share_td(cell, c, row, format_cell(row, col, group_by))
            if col.bar
            else f'<td style="{cell}text-align:{col.align}'
            f'{";font-variant-numeric:tabular-nums" if col.align == "right" else ""}">'
            f"{html.escape(format_cell(row, col, group_by))}</td>"
            for col in cols
        )
        body.append(f"<tr>{tds}</tr>")
    return (
        # colour and size set here too: tables do not inherit them in quirks-mode pages
        f'<table style="border-collapse:collapse;margin:4px 0;color:{c["fg"]};font-size:13px">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _share_td(cell: str, c: dict, row: dict, text: str) -> str:
    """The share cell: a bar (inclusive time / wall time) and its percentage."""
    share = min(1.0, max(0.0, float(row.get("share") or 0.0)))
    # background-color with a plain colour first: the sanitiser of an untrusted notebook
    # drops a var() (and "background" with it), and the bars vanished
    return (
        f'<td style="{cell}min-width:130px"><div class="everyo-share" style="display:'
        f"inline-block;width:90px;height:9px;{css('background-color', c['track'])}"
        f'vertical-align:middle"><div style="width:{100 * share:.1f}%;height:9px;'
        f'{css("background-color", c["bar"])}"></div>'
        f'</div> <span style="{css("color", c["muted"])}">{html.escape(text)}</span></td>'
    )


def render_notes_html(report: Report, *, theme: str = "light") -> str:
    """The report's notes: the overlap warning and a busy or contended machine with a warning
    border (a figure measured so is to be read with care), the others muted."""
    c = _colors(theme)
    out = []
    for note in report.notes:
        warn = note == OVERLAP_WARNING or note.startswith(("Machine: busy", "Machine: contended"))
        if warn:  # a border, not a fill: readable on any theme's background
            out.append(
                f'<p style="border-left:3px solid {c["warn"]};padding:2px 8px;margin:6px 0">'
                f"&#9888; {html.escape(note)}</p>"
            )
        else:
            out.append(f'<p style="color:{c["muted"]};margin:6px 0">{html.escape(note)}</p>')
    return "".join(out)
