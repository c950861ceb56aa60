"""The flame chart as sanitiser-proof HTML: absolutely placed ``<div>`` bars, no SVG, no script
(the memory chart, :func:`~everyo_lab.views.memory.memory_view.memory_html`, and the sweep's charts,
:mod:`~everyo_lab.views.sweep.sweep_static`, are built the same way).

What a notebook keeps for readers without the kernel must survive JupyterLab's and Notebook 7's
sanitiser, which renders the ``text/html`` of a notebook the user's Jupyter did not execute
("Not Trusted"). That sanitiser drops ``<svg>`` but keeps the text inside it, so an inline SVG
chart read as run-together text ("Sequential: 1.177 msSequentialRowScale (1): ..."); ``<img>``
may not use ``data:`` URLs either. It keeps ``<div>`` with ``title`` and the inline styles used
here (position, left, top, width, height, background-color with a plain colour, opacity,
overflow, white-space, font-size, line-height, color), so the same chart shows trusted or not.

Bars come from the same level-of-detail merge as the interactive chart, with a small budget
(each bar is a ``<div>`` of about 200 bytes). Positions are percentages of the chart's width, so
it scales with the output area.
"""

from __future__ import annotations

import html
import math
import re

import numpy as np

from everyo.spelling import count_text, duration_text
from everyo_lab.views.colors import MERGED_COLOR, color_for
from everyo_lab.views.flame.flame_figure import flame_bars
from everyo_lab.views.flame.flame_traces import calls_text
from everyo_lab.views.table.table_rows import event_label

__all__ = [
    "MAX_BARS",
    "WIDTH_PX",
    "css",
    "flame_html",
    "nice_step",
    "time_axis_html",
    "tree_flame_html",
]

MAX_BARS = 600
"""Bars drawn at most (merged beyond): about 120 kB of HTML for a run of any size."""

WIDTH_PX = 960
"""The pixel grid the static charts are laid out on (they scale with their container)."""
_LANE = 16
_LABEL_PX = 36  # bars narrower than this (at 960 px) carry no text, only their tooltip


def flame_html(
    batch,
    *,
    max_bars: int = MAX_BARS,
    text_color: str = "#555",
    span_ns: float | None = None,
    marks=None,
) -> str:
    """The whole run's flame chart as an HTML fragment ("" for no events).

    Each bar's tooltip (``title``) names it as the table does (``"Linear [0]: 1.234 ms"``); a
    bar standing for one call path's calls says so (``"Linear [0] ×412: 412 calls · total
    ..."``). ``marks``: the run's step marks, for the cells of that merge (``flame_bars``).
    ``span_ns`` widens the time axis to at least that many ns from the run's start (charts
    stacked with the same span share one time scale: a comparison, the memory chart).
    ``text_color`` colours the axis and legend (a CSS colour; the sanitiser keeps plain ones).
    """
    if len(batch) == 0:
        return ""
    bars, _, keys = flame_bars(batch, width_px=WIDTH_PX, max_shapes=max_bars, marks=marks)
    lo = min(0.0, float(bars.start.min()))  # times count from the run start
    span = max(float(bars.end.max()) - lo, float(span_ns or 0) - lo, 1.0)
    left = (bars.start - lo) / span * 100
    width = np.maximum((bars.end - bars.start) / span * 100, 0.05)
    lanes = int(bars.lane.max()) + 1
    out = [
        f'<div class="everyo-static-flame" style="position:relative;width:100%;'
        f'max-width:{WIDTH_PX}px;height:{lanes * _LANE}px;overflow:hidden">',
        *_bars(batch, bars, keys, left, width),
        "</div>",
        time_axis_html(span, text_color),
        _legend(bars, keys, text_color),
    ]
    return "".join(out)


def tree_flame_html(expand: dict, *, text_color: str = "#555") -> str:
    """The sampled call tree of a run without events as an HTML fragment ("" for no bars):
    ``expand`` is its bars as :func:`everyo_lab.views.why.why_panel.tree_bars` gives them (positions
    and tooltips written by the kernel, as the dashboard draws them), over the run's time axis."""
    from everyo_lab.views.colors import THEMES

    bars = expand.get("bars") or []
    if not bars:
        return ""
    fill = THEMES["light"]["frame_bar"]
    out = [
        f'<div class="everyo-static-tree-flame" style="position:relative;width:100%;'
        f'max-width:{WIDTH_PX}px;height:{int(expand["rows"]) * _LANE}px;overflow:hidden">'
    ]
    for bar in bars:
        left, width = 100 * float(bar["left"]), max(100 * float(bar["width"]), 0.05)
        shown = html.escape(bar["text"]) if width / 100 * WIDTH_PX >= _LABEL_PX else ""
        out.append(
            f'<div title="{html.escape(bar["title"])}" style="position:absolute;'
            f"left:{left:.3f}%;top:{int(bar['row']) * _LANE}px;width:{width:.3f}%;"
            f"height:{_LANE - 2}px;background-color:{fill};overflow:hidden;white-space:nowrap;"
            f'font-size:10px;line-height:{_LANE - 2}px;color:#111">{shown}</div>'
        )
    out.append("</div>")
    span_ns = (float(expand["end_ms"]) - float(expand["start_ms"])) * 1e6
    out.append(time_axis_html(max(span_ns, 1.0), text_color))
    return "".join(out)


def css(prop: str, value: str) -> str:
    """``prop:value;`` for a value the sanitiser keeps: one that uses a theme variable
    (``var(--x, #abc)``) is preceded by its plain fallback, which the sanitiser keeps when it
    drops the ``var()`` (a trusted page uses the variable, declared last)."""
    plain = re.sub(r"var\(--[\w-]+,\s*([^()]+?)\s*\)", r"\1", value)
    return f"{prop}:{plain};{prop}:{value};" if plain != value else f"{prop}:{value};"


def _bars(batch, bars, keys, left, width) -> list[str]:
    colour = [color_for(k) for k in keys] + [MERGED_COLOR]
    main = bars.dom if bars.dom is not None else np.full(len(bars), len(keys))
    names = np.asarray(batch.name, dtype=object)
    paths = np.asarray(batch.path, dtype=object)
    kinds = np.asarray(batch.kind, dtype=object)
    grouped = bars.group if bars.group is not None else np.zeros(len(bars), dtype=bool)
    out = []
    for i in range(len(bars)):
        count, row = int(bars.count[i]), int(bars.row[i])
        span = duration_text(int(bars.end[i]) - int(bars.start[i]))
        if grouped[i]:  # one call path's calls, as wide as their total time
            text = f"{names[row]} ×{count_text(count)}"
            label = event_label(kinds[row], names[row], paths[row])
            title = (
                f"{label} ×{count_text(count)}: {calls_text(count)} · total {span} (merged by "
                "call path: zoom in on the dashboard to see each call)"
            )
        elif count == 1:
            text = str(names[row])
            title = f"{event_label(kinds[row], names[row], paths[row])}: {span}"
        else:
            text = f"{count_text(count)} events"
            title = f"merged: {text} · {span}"  # the widget's hover says the same
        uniform = bool(bars.uniform[i])
        fill = colour[int(bars.code[i]) if uniform else int(main[i])]
        pale = "" if uniform else "opacity:0.45;"
        shown = html.escape(text) if width[i] / 100 * WIDTH_PX >= _LABEL_PX else ""
        out.append(
            f'<div title="{html.escape(title)}" style="position:absolute;left:{left[i]:.3f}%;'
            f"top:{int(bars.lane[i]) * _LANE}px;width:{width[i]:.3f}%;height:{_LANE - 2}px;"
            f"background-color:{fill};{pale}overflow:hidden;white-space:nowrap;font-size:10px;"
            f'line-height:{_LANE - 2}px;color:#111">{shown}</div>'
        )
    return out


def time_axis_html(span_ns: float, text_color: str) -> str:
    """A time axis from 0 to ``span_ns``, as wide as the flame chart: the memory chart under it
    uses the same one, so the two line up."""
    span_ms = span_ns / 1e6
    step = nice_step(span_ms / 6)
    ticks, tick = [], 0.0
    while tick <= span_ms * 1.0001:
        pct = tick / span_ms * 100 if span_ms > 0 else 0.0
        shift = "0" if pct < 3 else ("-100%" if pct > 94 else "-50%")
        ticks.append(
            f'<div style="position:absolute;left:{pct:.3f}%;top:0;margin-left:0;'
            f'white-space:nowrap"><span style="position:relative;left:{shift}">'
            f"{tick:g} ms</span></div>"
        )
        tick = round(tick + step, 12)
    return (
        f'<div class="everyo-static-flame-axis" style="position:relative;width:100%;'
        f"max-width:{WIDTH_PX}px;height:14px;{css('border-top', f'1px solid {text_color}')}"
        f'{css("color", text_color)}font-size:10px">{"".join(ticks)}</div>'
    )


def nice_step(raw: float) -> float:
    """The tick spacing at or above ``raw``: 1, 2 or 5 times a power of ten."""
    if raw <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power


def _legend(bars, keys, text_color: str) -> str:
    """One swatch per colour drawn, in order of first appearance."""
    shown = bars.code if bars.dom is None else np.where(bars.uniform, bars.code, bars.dom)
    used = [keys[c] for c in np.unique(shown[bars.uniform | (bars.dom is not None)])]
    if bars.dom is None and not bars.uniform.all():
        used.append("merged (mixed)")
    items = []
    for key in used[:24]:
        colour = MERGED_COLOR if key == "merged (mixed)" else color_for(key)
        items.append(
            f'<span style="display:inline-block;margin-right:10px;white-space:nowrap">'
            f'<span style="display:inline-block;width:10px;height:10px;background-color:'
            f'{colour};margin-right:4px"></span>{html.escape(key)}</span>'
        )
    style = f"font-size:10px;{css('color', text_color)}margin-top:2px"
    return f'<div style="{style}">{"".join(items)}</div>'
