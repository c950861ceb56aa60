"""Static renderings of a :class:`~everyo_lab.views.compare.compare_view.Comparison`: ``text/html``
(header, the two flame charts stacked on one time scale, the diff table with verdicts) and
``text/plain``.

As :mod:`.static`: no JavaScript, no ``<style>`` block, so a saved notebook, nbconvert HTML and
GitHub show it without a kernel.
"""

from __future__ import annotations

import html

from everyo_lab.views._batch import as_batch
from everyo_lab.views.compare.compare_view import DIFF_COLUMNS, Comparison, format_diff_cell
from everyo_lab.views.flame.flame_html import flame_html
from everyo_lab.views.static import _colors

__all__ = ["render_compare_html", "render_compare_text", "steps_verdict_text"]

_VERDICT_COLORS = {"faster": "#1a7f37", "slower": "#cf222e"}


def steps_verdict_text(c: Comparison) -> str:
    """:attr:`Comparison.steps_text`, ``"per step (median): faster (1.41×, ...)"``."""
    return c.steps_text


def render_compare_text(c: Comparison, *, top: int | None = 20) -> str:
    """The comparison as aligned plain text."""
    lines = [f"everyo comparison · {c.headline}"]
    if c.steps:
        lines.append(c.steps_text)
    rows = c.rows[:top] if top else c.rows
    if rows:
        cells = [[format_diff_cell(r, k) for k, _ in DIFF_COLUMNS] for r in rows]
        heads = [h for _, h in DIFF_COLUMNS]
        widths = [max(len(heads[j]), *(len(x[j]) for x in cells)) for j in range(len(heads))]

        def line(values):
            return "  ".join(
                v.ljust(widths[j]) if j in (0, len(values) - 1) else v.rjust(widths[j])
                for j, v in enumerate(values)
            ).rstrip()

        lines += ["", line(heads), *(line(x) for x in cells), ""]
    lines += c.notes
    return "\n".join(lines)


def render_compare_html(c: Comparison, *, top: int | None = 30, theme: str = "light") -> str:
    """The comparison as a self-contained HTML fragment (see the module)."""
    col = _colors(theme)
    parts = [
        f'<div class="everyo-static everyo-compare-static" style="font-family:var(--jp-ui-font-'
        f"family, system-ui, sans-serif);font-size:13px;color:{col['fg']};line-height:1.4;"
        f'max-width:100%">',
        render_compare_header_html(c, theme=theme),
    ]
    parts.append(render_compare_flames_html(c, theme=theme))
    if c.rows:
        parts.append(render_diff_table_html(c, top=top, theme=theme))
    parts += [f'<p style="color:{col["muted"]};margin:6px 0">{html.escape(n)}</p>' for n in c.notes]
    parts.append("</div>")
    return "".join(parts)


def render_compare_header_html(c: Comparison, *, theme: str = "light") -> str:
    """Both runs' labels and wall times, the speed-up, and the per-step verdict."""
    col = _colors(theme)
    a, b = c.a, c.b
    out = [
        f'<div style="margin-bottom:4px"><span style="font-weight:600;font-size:14px">'
        f"everyo comparison</span> "
        f'<span style="color:{col["muted"]}">A {html.escape(a["label"])} '
        f"{a['wall_ms']:.3f} ms ({html.escape(a['status'])}) → B {html.escape(b['label'])} "
        f"{b['wall_ms']:.3f} ms ({html.escape(b['status'])})</span> · "
        f"<b>{html.escape(c.verdict_text)}</b></div>"
    ]
    if c.steps:
        out.append(f'<div style="margin-bottom:4px">{html.escape(c.steps_text)}</div>')
    return "".join(out)


def render_compare_flames_html(c: Comparison, *, theme: str = "light") -> str:
    """The flame charts of A and B stacked, on one time scale (the longer run's)."""
    if c.run_a is None or c.run_b is None:
        return ""
    col = _colors(theme)
    span = max(c.a["wall_ms"], c.b["wall_ms"]) * 1e6
    out = []
    for name, side, run in (("A", c.a, c.run_a), ("B", c.b, c.run_b)):
        chart = flame_html(as_batch(run), text_color=col["muted"], span_ns=span, marks=run.step_ns)
        body = chart or f'<div style="color:{col["muted"]}">no events</div>'
        out.append(
            f'<div style="margin-top:6px"><div style="color:{col["muted"]}">{name} · '
            f"{html.escape(side['label'])} · {side['wall_ms']:.3f} ms</div>{body}</div>"
        )
    return "".join(out)


def render_diff_table_html(c: Comparison, *, top: int | None = 30, theme: str = "light") -> str:
    """The diff table, biggest change first, each row's verdict coloured (its reason as a
    tooltip)."""
    col = _colors(theme)
    cell = f"padding:2px 8px;border-bottom:1px solid {col['border']};"
    head = "".join(
        f'<th style="{cell}text-align:{"left" if k in ("label", "verdict") else "right"}">'
        f"{html.escape(h)}</th>"
        for k, h in DIFF_COLUMNS
    )
    body = []
    for row in c.rows[:top] if top else c.rows:
        tds = []
        for k, _ in DIFF_COLUMNS:
            text = html.escape(format_diff_cell(row, k))
            if k == "verdict":
                color = _VERDICT_COLORS.get(row["verdict"], col["muted"])
                tds.append(
                    f'<td style="{cell}color:{color}" title="{html.escape(row["why"])}">{text}</td>'
                )
            elif k == "label":
                tds.append(f'<td style="{cell}text-align:left">{text}</td>')
            else:
                tds.append(
                    f'<td style="{cell}text-align:right;font-variant-numeric:tabular-nums">'
                    f"{text}</td>"
                )
        body.append(f"<tr>{''.join(tds)}</tr>")
    return (
        f'<table class="everyo-diff" style="border-collapse:collapse;margin:4px 0;'
        f'color:{col["fg"]};font-size:13px"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )
