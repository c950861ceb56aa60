"""The flame chart as a small static SVG (no JavaScript), for saved notebooks and reports.

Bars come from the same level-of-detail merge as the interactive chart, with a smaller budget so
the SVG stays a few tens of kilobytes. Bars of one colour share one ``<path>``; wide bars get a
name label and a ``<title>`` tooltip.
"""

from __future__ import annotations

import html
import math

import numpy as np

from everyo_lab.views.colors import MERGED_COLOR, color_for
from everyo_lab.views.columns import event_label
from everyo_lab.views.flame import flame_bars

__all__ = ["flame_svg"]

_WIDTH = 960
_LANE = 16
_AXIS = 22
_LABEL_PX = 36
_MAX_TITLES = 300
_LEGEND = 18


def flame_svg(
    batch, *, max_shapes: int = 2500, text_color: str = "#555", span_ns: float | None = None
) -> str:
    """Render the whole run's flame chart as an inline ``<svg>`` string (empty for no events).

    ``text_color`` may be any CSS colour, including ``var(--name, fallback)``. ``span_ns``
    widens the time axis to at least that many ns from the run's start (two charts stacked
    with the same span share one time scale: a comparison, the memory chart).
    """
    if len(batch) == 0:
        return ""
    bars, _, keys = flame_bars(batch, width_px=_WIDTH, max_shapes=max_shapes)
    lo = min(0.0, float(bars.start.min()))  # times count from the run start
    span = max(float(bars.end.max()) - lo, float(span_ns or 0) - lo, 1.0)
    scale = _WIDTH / span
    x = (bars.start - lo) * scale
    w = np.maximum((bars.end - bars.start) * scale, 0.5)
    y = bars.lane * _LANE
    n_lanes = int(bars.lane.max()) + 1
    height = n_lanes * _LANE + _AXIS + _LEGEND
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {height}" '
        f'width="{_WIDTH}" height="{height}" role="img" aria-label="flame chart" '
        f'style="max-width:100%;height:auto;font-family:sans-serif">'
    ]
    parts += _paths(bars, keys, x, w, y)
    parts += _labels(batch, bars, x, w, y)
    parts += _axis(span, n_lanes * _LANE, text_color)
    parts += _legend(bars, keys, n_lanes * _LANE + _AXIS, text_color)
    parts.append("</svg>")
    return "".join(parts)


def _paths(bars, keys, x, w, y) -> list[str]:
    """One path per colour: events and uniform merged bars in their colour, merged bars of
    several colours paler in the colour with the most time in them (grey when unknown)."""
    colour = np.array([color_for(k) for k in keys] + [MERGED_COLOR], dtype=object)
    mixed = ~bars.uniform
    main = bars.dom if bars.dom is not None else np.full(len(bars), len(keys))
    code = np.where(mixed, main, bars.code)
    out = []
    for c, pale in sorted({(int(c), bool(m)) for c, m in zip(code.tolist(), mixed.tolist())}):
        sel = np.flatnonzero((code == c) & (mixed == pale))
        d = "".join(
            f"M{a:.1f} {b}h{c_:.1f}v{_LANE - 2}h-{c_:.1f}z"
            for a, b, c_ in zip(x[sel].tolist(), y[sel].tolist(), w[sel].tolist())
        )
        opacity = ' fill-opacity="0.45"' if pale else ""
        out.append(f'<path fill="{colour[c]}"{opacity} d="{d}"/>')
    return out


def _labels(batch, bars, x, w, y) -> list[str]:
    wide = np.flatnonzero(w >= _LABEL_PX)
    wide = wide[np.argsort(-w[wide], kind="stable")][:_MAX_TITLES]
    names = np.asarray(batch.name, dtype=object)
    paths = np.asarray(batch.path, dtype=object)
    kinds = np.asarray(batch.kind, dtype=object)
    out = []
    for i in wide.tolist():
        row = int(bars.row[i])
        count = int(bars.count[i])
        ms = (int(bars.end[i]) - int(bars.start[i])) / 1e6
        if count == 1:
            label = str(names[row])
            title = f"{event_label(kinds[row], names[row], paths[row])}: {ms:.3f} ms"
        else:
            label = f"{count} events"
            title = f"merged: {count} events, {ms:.3f} ms span"
        fit = max(0, int((w[i] - 6) / 6.2))
        text = label if len(label) <= fit else label[: max(0, fit - 1)] + "…"
        out.append(
            f"<g><title>{html.escape(title)}</title>"
            f'<rect x="{x[i]:.1f}" y="{y[i]}" width="{w[i]:.1f}" height="{_LANE - 2}" '
            f'fill-opacity="0"/>'
            f'<text x="{x[i] + 3:.1f}" y="{y[i] + 11}" font-size="10" fill="#111">'
            f"{html.escape(text)}</text></g>"
        )
    return out


def _legend(bars, keys, top: int, text_color: str) -> list[str]:
    """One swatch per colour drawn, in order of first appearance."""
    shown = bars.code if bars.dom is None else np.where(bars.uniform, bars.code, bars.dom)
    used = [keys[c] for c in np.unique(shown[bars.uniform | (bars.dom is not None)])]
    if bars.dom is None and not bars.uniform.all():
        used.append("merged (mixed)")
    out, x = [f'<g font-size="10" style="fill:{text_color}">'], 0.0
    for key in used:
        if x > _WIDTH - 60:
            break
        colour = MERGED_COLOR if key == "merged (mixed)" else color_for(key)
        out.append(
            f'<rect x="{x:.0f}" y="{top + 4}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{x + 14:.0f}" y="{top + 13}">{html.escape(key)}</text>'
        )
        x += 24 + 6.2 * len(key)
    out.append("</g>")
    return out


def _axis(span_ns: float, top: int, text_color: str) -> list[str]:
    span_ms = span_ns / 1e6
    step = _nice_step(span_ms / 6)
    # style, not presentation attributes: only style may use the theme's CSS variables
    out = [f'<g font-size="10" style="fill:{text_color};stroke:none">']
    out.append(
        f'<line x1="0" x2="{_WIDTH}" y1="{top + 1}" y2="{top + 1}" style="stroke:{text_color}"/>'
    )
    tick = 0.0
    while tick <= span_ms * 1.0001:
        px = tick / span_ms * _WIDTH if span_ms > 0 else 0.0
        anchor = "start" if px < 20 else ("end" if px > _WIDTH - 40 else "middle")
        out.append(f'<text x="{px:.1f}" y="{top + 14}" text-anchor="{anchor}">{tick:g} ms</text>')
        tick = round(tick + step, 12)
    out.append("</g>")
    return out


def _nice_step(raw: float) -> float:
    if raw <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power
