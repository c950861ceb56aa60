"""The static rendering of a sweep report: the three charts as ``<div>``s (no SVG), the
recommendation and the table, as HTML with no JavaScript and inline styles only, each theme
colour after a plain fallback (it survives the sanitiser of an untrusted notebook in JupyterLab
and Notebook 7, nbconvert and GitHub's viewer), and as text.

A saved notebook keeps this; it shows without a kernel, in the theme the notebook is opened in
(JupyterLab's CSS variables, with fallbacks).
"""

from __future__ import annotations

import dataclasses
import html
import math

from everyo_lab.views.flame.flame_html import css
from everyo_lab.views.sweep.sweep_report import TABLE_COLUMNS, SweepReport, table_cells

__all__ = ["render_sweep_html", "render_sweep_text", "chart_html", "STATIC_CLASS"]

STATIC_CLASS = "everyo-sweep-static"
_W, _H = 300, 190
_L, _R, _T, _B = 52, 12, 24, 34
_FG = "var(--jp-ui-font-color1, #1f2328)"
_MUTED = "var(--jp-ui-font-color2, #59636e)"
_BORDER = "var(--jp-border-color2, #d0d7de)"
_GRID = "var(--jp-border-color3, #eef1f5)"
_COLORS = {"throughput": "#1f77b4", "latency": "#ff7f0e", "memory": "#9467bd"}
_FAILED = "#d62728"
_RECOMMENDED = "#2ca02c"
_LARGEST = "#7f7f7f"
_MIB = 2**20


def render_sweep_html(report: SweepReport | dict) -> str:
    """The whole sweep as one self-contained HTML fragment (no script, no ``<style>``)."""
    r = _as_dict(report)
    rec = r["recommendation"]
    facts = " · ".join(html.escape(t) for t in (r["mode"], r["status"], _line(r)))
    parts = [
        f'<div class="{STATIC_CLASS}" style="font-family:var(--jp-ui-font-family, system-ui, '
        f'sans-serif);font-size:13px;{css("color", _FG)}line-height:1.4;max-width:100%">',
        f'<div style="margin-bottom:4px"><span style="font-weight:600;font-size:14px">'
        f"{html.escape(r['title'])}</span> "
        f'<span style="{css("color", _MUTED)}">· {facts}</span></div>',
    ]
    if r.get("error"):
        parts.append(f'<div style="color:{_FAILED}">error: {html.escape(r["error"])}</div>')
    if rec["text"]:
        parts.append(
            f'<div style="border-left:3px solid {_RECOMMENDED};padding:2px 8px;margin:6px 0">'
            f"{html.escape(rec['text'])}</div>"
        )
    if r["points"]["batch_size"] or r["marks"]:
        charts = "".join(chart_html(r, key) for key in ("throughput", "latency", "memory"))
        parts.append(f'<div style="display:flex;flex-wrap:wrap;gap:8px">{charts}</div>')
    if r["rows"]:
        parts.append(_table_html(r))
    parts.extend(
        f'<p style="{css("color", _MUTED)}margin:4px 0">{html.escape(n)}</p>' for n in r["notes"]
    )
    parts.append("</div>")
    return "".join(parts)


def render_sweep_text(report: SweepReport | dict) -> str:
    """The sweep as an aligned text table with the recommendation (for a terminal)."""
    r = _as_dict(report)
    lines = [f"{r['title']} ({r['mode']}, {r['status']}): {_line(r)}"]
    head = f"{'batch':>7} {'status':>8} {'median ms':>10} {'p95 ms':>10} {'samples/s':>12} "
    lines.append(f"peak memory: {r.get('memory_kind', 'host')}")
    lines.append(head + f"{'peak MiB':>9}  note")
    for row in r["rows"]:
        batch, status, rate, median, _, p95, memory, note = table_cells(row, r["recommendation"])
        lines.append(
            f"{batch:>7} {status:>8} {median:>10} {p95:>10} {rate:>12} {memory:>9}  {note}"
        )
    lines.extend(r["notes"])
    if r["recommendation"]["text"]:
        lines.append(r["recommendation"]["text"])
    return "\n".join(lines)


# -- charts --------------------------------------------------------------------------------------
def chart_html(report: SweepReport | dict, key: str) -> str:
    """One chart (``throughput``, ``latency`` or ``memory``) against batch size (log2 x axis) as
    sanitiser-proof HTML (absolutely placed ``<div>``s, as the static flame chart: an untrusted
    notebook's sanitiser drops inline SVG and runs its texts together): each point a dot on a
    stem from the axis (its ``title`` names it), the p5–p95 range for latency, failed points as
    red crosses on the x axis with their message, and the recommended and largest-fitting batch
    sizes as dashed vertical lines."""
    r = _as_dict(report)
    pts = r["points"]
    xs = pts["batch_size"]
    if key == "throughput":
        ys, title, unit = pts["throughput"], "throughput", "samples/s"
    elif key == "latency":
        ys, title, unit = pts["median_ms"], "latency (median, p5–p95)", "ms"
    elif key == "memory":
        ys = [None if m is None else m / _MIB for m in pts["memory"]]
        title, unit = f"peak memory ({r.get('memory_kind', 'host')})", "MiB"
    else:
        raise ValueError(f"key is 'throughput', 'latency' or 'memory', not {key!r}")
    sizes = xs + [m["batch_size"] for m in r["marks"]]
    top = [v for v in ys if v is not None]
    if key == "latency":
        top += [v for v in pts["p95_ms"] if v is not None]
    if key == "memory" and r.get("memory_limit"):
        top.append(r["memory_limit"] / _MIB)
    scale = _Scale(sizes, max(top, default=1.0) or 1.0)
    out = [
        f'<div class="everyo-sweep-chart" title="{html.escape(title)}" style="position:relative;'
        f'width:{_W}px;height:{_H}px;font-size:10px;overflow:hidden">',
        _at(_L, 2, f"font-size:12px;{css('color', _FG)}", html.escape(title)),
        *scale.axes(unit),
    ]
    out += _verticals(r["recommendation"], scale)
    if key == "memory" and r.get("memory_limit"):
        y = scale.y(r["memory_limit"] / _MIB)
        out.append(
            f'<div title="memory limit" style="position:absolute;left:{_L}px;top:{y:.0f}px;'
            f'width:{_W - _L - _R}px;height:0;border-top:1px dashed {_FAILED}"></div>'
        )
    color = _COLORS[key]
    base = scale.y(0)
    if key == "latency":
        for x, lo, hi in zip(xs, pts["p5_ms"], pts["p95_ms"]):
            if lo is None or hi is None:
                continue
            y0, y1 = scale.y(hi), scale.y(lo)
            out.append(
                f'<div title="batch {x}: p5 {_fmt(lo)} ms, p95 {_fmt(hi)} ms" style="position:'
                f"absolute;left:{scale.x(x) - 4:.0f}px;top:{y0:.0f}px;width:8px;"
                f'height:{max(1.0, y1 - y0):.0f}px;background-color:{color};opacity:0.25"></div>'
            )
    rec = r["recommendation"]["recommended"]
    flags = dict(zip(xs, pts.get("flag") or [None] * len(xs)))
    for x, v in ((x, v) for x, v in zip(xs, ys) if v is not None):
        cx, cy = scale.x(x), scale.y(v)
        big = x == rec and key == "throughput"
        radius = 5 if big else 3
        out.append(
            f'<div style="position:absolute;left:{cx - 1:.0f}px;top:{cy:.0f}px;width:2px;'
            f'height:{max(0.0, base - cy):.0f}px;background-color:{color};opacity:0.35"></div>'
            f'<div class="everyo-sweep-point" title="batch {x}: {_fmt(v)} {unit}" '
            f'style="position:absolute;left:{cx - radius:.0f}px;top:{cy - radius:.0f}px;'
            f"width:{2 * radius}px;height:{2 * radius}px;border-radius:{radius}px;"
            f'background-color:{_RECOMMENDED if big else color}"></div>'
        )
        if flags.get(x):  # a point that is not trusted: a ring, and why on hover
            out.append(
                f'<div title="batch {x}: {html.escape(str(flags[x]))}" style="position:absolute;'
                f"left:{cx - 7:.0f}px;top:{cy - 7:.0f}px;width:10px;height:10px;"
                f'border-radius:7px;border:2px solid {_FAILED}"></div>'
            )
    for mark in r["marks"]:
        cx = scale.x(mark["batch_size"])
        out.append(
            f'<div title="batch {mark["batch_size"]}: {html.escape(mark["message"][:200])}" '
            f'style="position:absolute;left:{cx - 30:.0f}px;top:{base - 22:.0f}px;width:60px;'
            f'text-align:center;line-height:11px;color:{_FAILED}">'
            f"{html.escape(mark['label'])}<br>✕</div>"
        )
    out.append("</div>")
    return "".join(out)


def _at(x: float, y: float, style: str, text: str, width: int | None = None) -> str:
    """A text at (``x``, ``y``) px of a chart (``width``: centred on ``x`` in that width)."""
    if width is not None:
        x -= width / 2
        style += f"width:{width}px;text-align:center;"
    return (
        f'<div style="position:absolute;left:{x:.0f}px;top:{y:.0f}px;white-space:nowrap;'
        f'{style}">{text}</div>'
    )


class _Scale:
    """Batch size on a log2 axis, values on a linear one from 0."""

    def __init__(self, sizes, top: float):
        lo = math.log2(min(sizes)) if sizes else 0.0
        hi = math.log2(max(sizes)) if sizes else 1.0
        pad = max((hi - lo) * 0.06, 0.3)
        self.lo, self.hi = lo - pad, hi + pad
        self.sizes = sizes
        self.top = top * 1.1

    def x(self, size: float) -> float:
        span = self.hi - self.lo
        return _L + (math.log2(size) - self.lo) / span * (_W - _L - _R)

    def y(self, value: float) -> float:
        return _T + (1 - value / self.top) * (_H - _T - _B)

    def axes(self, unit: str) -> list[str]:
        base = _H - _B
        muted = css("color", _MUTED)
        out = [
            f'<div style="position:absolute;left:{_L}px;top:{base}px;width:{_W - _L - _R}px;'
            f'height:0;{css("border-top", f"1px solid {_BORDER}")}"></div>',
            _at((_L + _W - _R) / 2, _H - 14, muted, "batch size", width=120),
            _at(2, _T - 12, muted, html.escape(unit)),
        ]
        first, last = math.ceil(self.lo), math.floor(self.hi)
        every = max(1, math.ceil((last - first + 1) / 7))
        for k in range(first, last + 1):
            if (k - first) % every:
                continue
            out.append(_at(self.x(2**k), base + 3, muted, _size(2**k), width=40))
        for frac in (0.0, 0.5, 1.0):
            value = self.top / 1.1 * frac
            y = self.y(value)
            out.append(
                f'<div style="position:absolute;left:{_L}px;top:{y:.0f}px;'
                f'width:{_W - _L - _R}px;height:0;{css("border-top", f"1px solid {_GRID}")}">'
                f"</div>"
                f'<div style="position:absolute;left:0;top:{y - 6:.0f}px;width:{_L - 4}px;'
                f'text-align:right;{muted}">{_fmt(value)}</div>'
            )
        return out


def _verticals(rec: dict, scale: _Scale) -> list[str]:
    out = []
    lines = [("recommended", rec["recommended"], _RECOMMENDED, "dashed")]
    if rec["largest_fit"] != rec["recommended"]:
        lines.append(("largest fit", rec["largest_fit"], _LARGEST, "dotted"))
    for name, size, color, dash in lines:
        if size is None:
            continue
        out.append(
            f'<div title="{name}: {size}" style="position:absolute;left:{scale.x(size):.0f}px;'
            f'top:{_T}px;width:0;height:{_H - _B - _T}px;border-left:1px {dash} {color}"></div>'
        )
    return out


# -- table ---------------------------------------------------------------------------------------
def _table_html(r: dict) -> str:
    cell = f"padding:2px 8px;{css('border-bottom', f'1px solid {_BORDER}')}"
    head = "".join(
        f'<th style="{cell}text-align:{"left" if k in ("status", "note") else "right"}">{h}</th>'
        for k, h in TABLE_COLUMNS
    )
    body = []
    rec = r["recommendation"]["recommended"]
    for row in r["rows"]:
        values = dict(zip((k for k, _ in TABLE_COLUMNS), table_cells(row, r["recommendation"])))
        color = f"color:{_FAILED};" if row["status"] != "ok" or row.get("flag") else ""
        weight = "font-weight:600;" if row["batch_size"] == rec else ""
        tds = "".join(
            f'<td style="{cell}{color}{weight}text-align:'
            f"{'left' if k in ('status', 'note') else 'right'};"
            f'font-variant-numeric:tabular-nums">{html.escape(values[k])}</td>'
            for k, _ in TABLE_COLUMNS
        )
        body.append(f"<tr>{tds}</tr>")
    return (
        f'<table style="border-collapse:collapse;margin:6px 0;{css("color", _FG)}font-size:13px">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _fmt(value: float) -> str:
    """Compact: 403347.8 -> "403k", 0.0397 -> "0.0397"."""
    if value == 0:
        return "0"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def _size(n: int) -> str:
    return f"{n // 1024}k" if n >= 1024 and n % 1024 == 0 else str(n)


def _line(r: dict) -> str:
    fields = {f.name for f in dataclasses.fields(SweepReport)}  # not to_dict's table
    return SweepReport(**{k: v for k, v in r.items() if k in fields}).progress_line


def _as_dict(report) -> dict:
    return report if isinstance(report, dict) else report.to_dict()
