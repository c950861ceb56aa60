"""The static charts' SVG time axis, shared by the memory chart (``memory.memory_svg``).

The flame chart itself is HTML (:mod:`~everyo_lab.views.flame_html`): an untrusted notebook's
sanitiser drops inline SVG and leaves its text behind.
"""

from __future__ import annotations

import math

__all__ = ["axis_svg", "nice_step"]

_WIDTH = 960


def axis_svg(span_ns: float, top: int, text_color: str) -> list[str]:
    """A time axis from 0 to ``span_ns`` at ``top``, ``_WIDTH`` wide, as SVG elements."""
    span_ms = span_ns / 1e6
    step = nice_step(span_ms / 6)
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


def nice_step(raw: float) -> float:
    """The tick spacing at or above ``raw``: 1, 2 or 5 times a power of ten."""
    if raw <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power
