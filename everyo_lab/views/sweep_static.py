"""The static rendering of a sweep report: the three charts as inline SVG, the recommendation and
the table, as HTML with no JavaScript and inline styles only (it survives JupyterLab's sanitiser,
nbconvert and GitHub's viewer), and as text.

A saved notebook keeps this; it shows without a kernel, in the theme the notebook is opened in
(JupyterLab's CSS variables, with fallbacks).
"""

from __future__ import annotations

import html
import math

from everyo.spelling import NO_VALUE
from everyo_lab.views.sweep_report import SweepReport

__all__ = ["render_sweep_html", "render_sweep_text", "chart_svg", "STATIC_CLASS"]

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
        f'sans-serif);font-size:13px;color:{_FG};line-height:1.4;max-width:100%">',
        f'<div style="margin-bottom:4px"><span style="font-weight:600;font-size:14px">'
        f'{html.escape(r["title"])}</span> <span style="color:{_MUTED}">· {facts}</span></div>',
    ]
    if r.get("error"):
        parts.append(f'<div style="color:{_FAILED}">error: {html.escape(r["error"])}</div>')
    if rec["text"]:
        parts.append(
            f'<div style="border-left:3px solid {_RECOMMENDED};padding:2px 8px;margin:6px 0">'
            f"{html.escape(rec['text'])}</div>"
        )
    if r["points"]["batch_size"] or r["marks"]:
        charts = "".join(chart_svg(r, key) for key in ("throughput", "latency", "memory"))
        parts.append(f'<div style="display:flex;flex-wrap:wrap;gap:8px">{charts}</div>')
    if r["rows"]:
        parts.append(_table_html(r))
    parts.extend(f'<p style="color:{_MUTED};margin:4px 0">{html.escape(n)}</p>' for n in r["notes"])
    parts.append("</div>")
    return "".join(parts)


def render_sweep_text(report: SweepReport | dict) -> str:
    """The sweep as an aligned text table with the recommendation (for a terminal)."""
    r = _as_dict(report)
    lines = [f"{r['title']} ({r['mode']}, {r['status']}): {_line(r)}"]
    head = f"{'batch':>7} {'status':>8} {'median ms':>10} {'p95 ms':>10} {'samples/s':>12} "
    lines.append(head + f"{'peak MiB':>9}  note")
    for row in r["rows"]:
        note = row["message"] if row["status"] != "ok" else _row_note(row, r)
        lines.append(
            f"{row['batch_size']:>7} {row['status']:>8} {_num(row['median_ms'], 4):>10} "
            f"{_num(row['p95_ms'], 4):>10} {_num(row['throughput'], 1):>12} "
            f"{_num(_memory(row), 2, _MIB):>9}  {note}"
        )
    lines.extend(r["notes"])
    if r["recommendation"]["text"]:
        lines.append(r["recommendation"]["text"])
    return "\n".join(lines)


# -- charts --------------------------------------------------------------------------------------
def chart_svg(report: SweepReport | dict, key: str) -> str:
    """One chart (``throughput``, ``latency`` or ``memory``) against batch size (log2 x axis) as
    an inline ``<svg>``: the line with its points (each with a ``<title>``), the p5–p95 band for
    latency, failed points as red crosses on the x axis with their message, and the recommended
    and largest-fitting batch sizes as vertical lines."""
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
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" role="img" aria-label="{html.escape(title)}" '
        f'style="font-size:10px;font-family:inherit">',
        f'<text x="{_L}" y="14" fill="{_FG}" style="font-size:12px">{html.escape(title)}</text>',
        *scale.axes(unit),
    ]
    out += _verticals(r["recommendation"], scale)
    if key == "memory" and r.get("memory_limit"):
        y = scale.y(r["memory_limit"] / _MIB)
        out.append(
            f'<line x1="{_L}" x2="{_W - _R}" y1="{y:.1f}" y2="{y:.1f}" stroke="{_FAILED}" '
            f'stroke-dasharray="4 3"><title>memory limit</title></line>'
        )
    color = _COLORS[key]
    if key == "latency" and xs:
        upper = [(scale.x(x), scale.y(v)) for x, v in zip(xs, pts["p95_ms"])]
        lower = [(scale.x(x), scale.y(v)) for x, v in zip(xs, pts["p5_ms"])]
        ring = " ".join(f"{a:.1f},{b:.1f}" for a, b in upper + lower[::-1])
        out.append(f'<polygon points="{ring}" fill="{color}" fill-opacity="0.2" stroke="none"/>')
    pairs = [(x, v) for x, v in zip(xs, ys) if v is not None]
    if len(pairs) > 1:
        line = " ".join(f"{scale.x(x):.1f},{scale.y(v):.1f}" for x, v in pairs)
        out.append(f'<polyline points="{line}" fill="none" stroke="{color}" stroke-width="2"/>')
    rec = r["recommendation"]["recommended"]
    flags = dict(zip(xs, pts.get("flag") or [None] * len(xs)))
    for x, v in pairs:
        big = x == rec and key == "throughput"
        fill = _RECOMMENDED if big else color
        out.append(
            f'<circle cx="{scale.x(x):.1f}" cy="{scale.y(v):.1f}" r="{5 if big else 3}" '
            f'fill="{fill}"><title>batch {x}: {_fmt(v)} {unit}</title></circle>'
        )
        if flags.get(x):  # a point that is not trusted: a ring, and why on hover
            out.append(
                f'<circle cx="{scale.x(x):.1f}" cy="{scale.y(v):.1f}" r="7" fill="none" '
                f'stroke="{_FAILED}" stroke-width="2"><title>batch {x}: {flags[x]}</title>'
                "</circle>"
            )
    for mark in r["marks"]:
        cx, cy = scale.x(mark["batch_size"]), scale.y(0)
        out.append(
            f'<g stroke="{_FAILED}" stroke-width="2"><title>batch {mark["batch_size"]}: '
            f"{html.escape(mark['message'][:200])}</title>"
            f'<line x1="{cx - 4:.1f}" y1="{cy - 4:.1f}" x2="{cx + 4:.1f}" y2="{cy + 4:.1f}"/>'
            f'<line x1="{cx - 4:.1f}" y1="{cy + 4:.1f}" x2="{cx + 4:.1f}" y2="{cy - 4:.1f}"/></g>'
            f'<text x="{cx:.1f}" y="{cy - 7:.1f}" fill="{_FAILED}" '
            f'text-anchor="{"end" if cx > _W - _R - 20 else "middle"}">'
            f"{html.escape(mark['label'])}</text>"
        )
    out.append("</svg>")
    return "".join(out)


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
        out = [
            f'<line x1="{_L}" x2="{_W - _R}" y1="{base}" y2="{base}" stroke="{_BORDER}"/>',
            f'<text x="{(_L + _W - _R) / 2:.0f}" y="{_H - 4}" fill="{_MUTED}" '
            f'text-anchor="middle">batch size</text>',
            f'<text x="10" y="{(_T + base) / 2:.0f}" fill="{_MUTED}" text-anchor="middle" '
            f'transform="rotate(-90 10 {(_T + base) / 2:.0f})">{html.escape(unit)}</text>',
        ]
        first, last = math.ceil(self.lo), math.floor(self.hi)
        every = max(1, math.ceil((last - first + 1) / 7))
        for k in range(first, last + 1):
            if (k - first) % every:
                continue
            x = self.x(2**k)
            out.append(
                f'<text x="{x:.1f}" y="{base + 13}" fill="{_MUTED}" text-anchor="middle">'
                f"{_size(2**k)}</text>"
            )
        for frac in (0.0, 0.5, 1.0):
            value = self.top / 1.1 * frac
            y = self.y(value)
            out.append(
                f'<line x1="{_L}" x2="{_W - _R}" y1="{y:.1f}" y2="{y:.1f}" stroke="{_GRID}"/>'
                f'<text x="{_L - 4}" y="{y + 3:.1f}" fill="{_MUTED}" text-anchor="end">'
                f"{_fmt(value)}</text>"
            )
        return out


def _verticals(rec: dict, scale: _Scale) -> list[str]:
    out = []
    lines = [("recommended", rec["recommended"], _RECOMMENDED, "5 3")]
    if rec["largest_fit"] != rec["recommended"]:
        lines.append(("largest fit", rec["largest_fit"], _LARGEST, "2 3"))
    for name, size, color, dash in lines:
        if size is None:
            continue
        x = scale.x(size)
        out.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_T}" y2="{_H - _B}" stroke="{color}" '
            f'stroke-dasharray="{dash}"><title>{name}: {size}</title></line>'
        )
    return out


# -- table ---------------------------------------------------------------------------------------
_COLUMNS = (
    ("batch_size", "batch"),
    ("status", "status"),
    ("throughput", "samples/s"),
    ("median_ms", "median ms"),
    ("p5_ms", "p5 ms"),
    ("p95_ms", "p95 ms"),
    ("memory", "peak MiB"),
    ("note", "note"),
)


def _table_html(r: dict) -> str:
    cell = f"padding:2px 8px;border-bottom:1px solid {_BORDER};"
    head = "".join(
        f'<th style="{cell}text-align:{"left" if k in ("status", "note") else "right"}">{h}</th>'
        for k, h in _COLUMNS
    )
    body = []
    rec = r["recommendation"]["recommended"]
    for row in r["rows"]:
        values = {
            "batch_size": str(row["batch_size"]),
            "status": row["status"],
            "throughput": _num(row["throughput"], 1),
            "median_ms": _num(row["median_ms"], 4),
            "p5_ms": _num(row["p5_ms"], 4),
            "p95_ms": _num(row["p95_ms"], 4),
            "memory": _num(_memory(row), 2, _MIB),
            "note": row["message"] if row["status"] != "ok" else _row_note(row, r),
        }
        color = f"color:{_FAILED};" if row["status"] != "ok" or row.get("flag") else ""
        weight = "font-weight:600;" if row["batch_size"] == rec else ""
        tds = "".join(
            f'<td style="{cell}{color}{weight}text-align:'
            f"{'left' if k in ('status', 'note') else 'right'};"
            f'font-variant-numeric:tabular-nums">{html.escape(values[k])}</td>'
            for k, _ in _COLUMNS
        )
        body.append(f"<tr>{tds}</tr>")
    return (
        f'<table style="border-collapse:collapse;margin:6px 0;color:{_FG};font-size:13px">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _row_note(row: dict, r: dict) -> str:
    flag = f"! {row['flag']}" if row.get("flag") else ""
    parts = (flag, _pick_note(row["batch_size"], r), row.get("note") or "")
    return ", ".join(p for p in parts if p)


def _pick_note(size: int, r: dict) -> str:
    rec = r["recommendation"]
    names = (("best", "best"), ("recommended", "recommended"), ("largest_fit", "largest fit"))
    return ", ".join(label for key, label in names if rec[key] == size)


def _memory(row: dict):
    return row["gpu_memory"] if row.get("gpu_memory") is not None else row.get("peak_memory")


def _num(value, digits: int, divide: float = 1.0) -> str:
    return NO_VALUE if value is None else f"{value / divide:,.{digits}f}"


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
    return SweepReport(**r).progress_line


def _as_dict(report) -> dict:
    return report if isinstance(report, dict) else report.to_dict()
