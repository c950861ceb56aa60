"""The hot lines of a report's top rows in the static outputs (no kernel needed).

What the dashboard's "why" panel shows of a selected row, for the first rows of the table that
hold stack samples: in the static ``text/html`` (tables and text only, no SVG, no script, each
colour with a plain fallback: it survives the sanitiser of an untrusted notebook) and in the
text rendering (:func:`everyo.profiler.sampling.sampled_lines_text.render`, as the CLI prints it).
"""

from __future__ import annotations

import html

from everyo.errors import EveryOError
from everyo_lab.views.flame.flame_html import css
from everyo_lab.views.why.why_panel import (
    PANEL_LINES,
    Selection,
    exact_hot_lines,
    outside_selection,
    panel,
    row_selection,
)

TOP_ROWS = 3
"""Rows of the table whose hot lines the static outputs keep."""
LINES = 5


def top_rows_hot_lines(run, report, rows: int = TOP_ROWS) -> list[tuple[Selection, object]]:
    """``(selection, HotLines)`` of the report's first ``rows`` rows that hold samples (in the
    table's order), after the time outside every event where it is worth showing
    (:func:`everyo.profiler.sampling.sampled_lines.outside_events`; all of a run without events);
    empty for a run without samples or still recording."""
    if getattr(run, "samples", None) is None or getattr(run, "status", "") == "running":
        return []
    # the static HTML and the text of one output ask for the same: computed once
    key = (run.id, len(run.samples), report.group_by, tuple(r["label"] for r in report.rows[:20]))
    if _last[0] == key:
        return _last[1]
    _last[:] = [key, _find(run, report, rows)]
    return _last[1]


_last: list = [None, []]  # (key, answer) of the last call


def _find(run, report, rows: int) -> list:
    from everyo.profiler.sampling.sampled_lines import outside_events

    outside = outside_events(run, top=PANEL_LINES)
    out = [(outside_selection(run), outside)] if outside is not None else []
    rows += len(out)
    for row in report.rows:
        sel = row_selection(row, report.group_by)
        try:
            hot = exact_hot_lines(run, sel, "everyo")
        except EveryOError:
            continue
        if hot.samples:
            out.append((sel, hot))
            if len(out) == rows:
                break
    return out


def hot_lines_text(found: list) -> str:
    """The text of :func:`top_rows_hot_lines` ("" for none)."""
    from everyo.profiler.sampling.sampled_lines_text import outside_text, render

    return "\n\n".join(
        outside_text(hot) if sel.is_outside else render(hot, lines=LINES, tree=False)
        for sel, hot in found
    )


def tree_text(tree: dict) -> str:
    """The call tree as indented text lines (as the CLI prints it)."""
    from everyo.profiler.sampling.sampled_lines_text import tree_lines

    return "\n".join(["call tree:", *tree_lines(tree)])


def hot_lines_html(found: list, colors: dict) -> str:
    """The static HTML of :func:`top_rows_hot_lines` ("" for none); ``colors`` as the static
    renderer's palette (``fg``, ``muted``, ``border``, ``bar``, ``track``)."""
    if not found:
        return ""
    c = colors
    cell = f"padding:2px 8px;border-bottom:1px solid {c['border']};"
    parts = [
        f'<div class="everyo-static-why" style="margin-top:8px">'
        f'<div style="{css("color", c["muted"])}">why: the hot '
        "lines from the stack samples (everyo's own frames folded)</div>"
    ]
    for sel, hot in found:
        p = panel(hot, sel)
        parts.append(
            f'<div style="margin-top:4px"><b>{html.escape(p["title"])}</b> '
            f'<span style="{css("color", c["muted"])}">{html.escape(p["summary"])}</span></div>'
        )
        head = "".join(
            f'<th style="{cell}text-align:{"right" if i < 2 else "left"}">{html.escape(h)}</th>'
            for i, h in enumerate(p["headers"])
        )
        body = []
        for line in p["lines"][:LINES]:
            width = f"{100 * line['bar']:.1f}%"
            bar = (
                f'<div class="everyo-share" style="display:inline-block;width:60px;height:9px;'
                f"vertical-align:middle;"
                f'{css("background-color", c["track"])}"><div style="width:{width};'
                f'height:9px;{css("background-color", c["bar"])}"></div></div> '
            )
            where = f"{line['where']}  {line['function']}"
            body.append(
                f'<tr><td style="{cell}text-align:right;white-space:nowrap">{bar}'
                f"{html.escape(line['self'])}</td>"
                f'<td style="{cell}text-align:right">{html.escape(line["total"])}</td>'
                f'<td style="{cell}white-space:nowrap" title="{html.escape(line["file"])}">'
                f"{html.escape(where)}</td>"
                f'<td style="{cell}"><code>{html.escape(line["source"])}</code></td></tr>'
            )
        parts.append(
            f'<table style="border-collapse:collapse;margin:2px 0;color:{c["fg"]};'
            f'font-size:13px"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        )
        if sel.is_outside and hot.tree is not None:  # its call tree: no event holds its time
            parts.append(
                f'<pre class="everyo-static-tree" style="margin:2px 0;font-size:12px">'
                f"{html.escape(tree_text(hot.tree))}</pre>"
            )
    parts.append("</div>")
    return "".join(parts)
