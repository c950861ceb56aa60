"""The flame chart's plotly pieces: bar traces for single and merged events, their hover text,
and the layout. Shared by the exact chart (:mod:`.flame_figure`) and the live one
(:mod:`..live_session`).
"""

from __future__ import annotations

import numpy as np

from everyo.spelling import count_text
from everyo_lab.views._batch import optional_column, self_ns
from everyo_lab.views.colors import MERGED_COLOR, centred_note, color_for
from everyo_lab.views.flame.lod import Bars

__all__ = [
    "event_traces",
    "flame_layout",
    "group_traces",
    "merged_traces",
    "one_legend_entry_per_key",
]

_NS_PER_MS = 1e6
_LABEL_MIN_PX = 40  # bars narrower than this get no text label (it would not fit)


def one_legend_entry_per_key(traces: list[dict]) -> None:
    # A key's merged bars toggle with its own bars (same legendgroup): list the key once.
    shown = set()
    for trace in traces:
        group = trace["legendgroup"]
        trace["showlegend"] = group not in shown
        shown.add(group)


def _drawn_width_ms(bars: Bars, sel: np.ndarray) -> np.ndarray:
    # Draw sub-pixel bars one pixel wide, or plotly would not draw them at all.
    width = np.maximum(bars.end[sel] - bars.start[sel], bars.pixel_ns)
    return np.round(width / _NS_PER_MS, 6)


def _bar_trace(bars: Bars, sel: np.ndarray, key: str, color: str) -> dict:
    return {
        "type": "bar",
        "orientation": "h",
        "name": key,
        "legendgroup": key,
        "base": np.round(bars.start[sel] / _NS_PER_MS, 6).tolist(),
        "x": _drawn_width_ms(bars, sel).tolist(),
        "y": bars.lane[sel].tolist(),
        "width": 0.9,
        "marker": {"color": color, "line": {"width": 0}},
    }


def _grouped(bars: Bars) -> np.ndarray:
    """Whether each bar stands for one call path's calls (the readable merge)."""
    return bars.group if bars.group is not None else np.zeros(len(bars), dtype=bool)


def event_traces(batch, bars: Bars, keys: list[str]) -> list[dict]:
    single = (bars.count == 1) & ~_grouped(bars)
    hover, columns = _hover_columns(batch)
    traces = []
    for code in np.unique(bars.code[single]):
        sel = np.flatnonzero(single & (bars.code == code))
        rows = bars.row[sel]
        trace = _bar_trace(bars, sel, keys[code], color_for(keys[code]))
        trace["customdata"] = np.column_stack([col(rows) for col in columns]).tolist()
        trace["hovertemplate"] = hover
        _label(trace, bars, sel, np.asarray(batch.name, dtype=object)[rows])
        traces.append(trace)
    return traces


def _label(trace: dict, bars: Bars, sel: np.ndarray, text: np.ndarray) -> None:
    """Write ``text`` inside the bars wide enough to hold it."""
    wide = (bars.end[sel] - bars.start[sel]) >= _LABEL_MIN_PX * bars.pixel_ns
    trace["text"] = np.where(wide, text, "").tolist()
    trace["textposition"] = "inside"
    trace["insidetextanchor"] = "start"


def _hover_columns(batch):
    """The hover template and, per customdata column, a function of the batch rows shown."""
    start = np.asarray(batch.start_ns, dtype=np.int64)
    dur = np.asarray(batch.dur_ns, dtype=np.int64)
    own = self_ns(batch)
    names = np.asarray(batch.name, dtype=object)
    paths = np.asarray(batch.path, dtype=object)
    columns = [
        lambda r: names[r],
        lambda r: np.where(paths[r] == "", "—", paths[r]),
        lambda r: np.round(start[r] / _NS_PER_MS, 6),
        lambda r: np.round(dur[r] / _NS_PER_MS, 6),
        lambda r: np.round(own[r] / _NS_PER_MS, 6),
    ]
    lines = [
        "<b>%{customdata[0]}</b>",
        "path: %{customdata[1]}",
        "start: %{customdata[2]:.4~r} ms",
        "duration: %{customdata[3]:.4~r} ms",
        "self: %{customdata[4]:.4~r} ms",
    ]
    for label, column, unit in (
        ("shapes", "shapes", None),
        ("FLOPs", "flops", ""),
        ("bytes", "bytes", "B"),
        ("memory", "mem_bytes", "B"),
    ):
        values = optional_column(batch, column)
        if values is None:
            continue
        if unit is not None:  # a module's FLOPs and bytes are the sum of its ops'
            values = _si_text(_inclusive(batch, values), unit)
        lines.append(f"{label}: %{{customdata[{len(columns)}]}}")
        columns.append(lambda r, v=values: v[r])
    device = optional_column(batch, "device_ns")
    if device is not None:
        device_ms = np.asarray(device, dtype=np.int64) / _NS_PER_MS
        lines.append(f"device: %{{customdata[{len(columns)}]}}")
        columns.append(
            lambda r: np.where(device_ms[r] >= 0, np.char.mod("%.3f ms", device_ms[r]), "n/a")
        )
    return "<br>".join(lines) + "<extra></extra>", columns


def _inclusive(batch, values: np.ndarray) -> np.ndarray:
    from everyo.profiler.analysis import (
        run_analysis as analysis,  # lazily: views import fast and stay pure
    )

    if not hasattr(batch, "keys"):  # live rows carry no tree: their own values
        return np.asarray(values, dtype=np.float64)
    return np.asarray(analysis.inclusive(batch, np.asarray(values)), dtype=np.float64)


_PREFIXES = np.array(["", "k", "M", "G", "T", "P"], dtype=object)


def _si_text(values: np.ndarray, unit: str) -> np.ndarray:
    """``1.23M`` style text per value, vectorised; negative (not measured) reads ``n/a``."""
    v = np.asarray(values, dtype=np.float64)
    mag = np.abs(v)
    group = np.clip(np.floor(np.log10(np.where(mag > 0, mag, 1.0)) / 3), 0, 5).astype(np.int64)
    scaled = v / 1000.0**group
    carry = (np.abs(scaled) >= 999.5) & (group < 5)  # 999,999 reads 1M, not 1e+03k
    group = group + carry
    scaled = np.where(carry, scaled / 1000.0, scaled)
    text = np.char.add(np.char.mod("%.3g", scaled).astype(object), _PREFIXES[group] + unit)
    return np.where(v < 0, "n/a", text).astype(object)


def group_traces(batch, bars: Bars, keys: list[str]) -> list[dict]:
    """One call path's calls as one bar each (``Linear ×412``), as wide as their total time:
    the readable merge of a zoomed-out chart (``js/src/hover.js`` says the same)."""
    grouped = np.flatnonzero(_grouped(bars))
    names = np.asarray(batch.name, dtype=object)
    kinds = np.asarray(batch.kind, dtype=object)
    traces = []
    for code in np.unique(bars.code[grouped]):
        sel = grouped[bars.code[grouped] == code]
        rows, counts = bars.row[sel], bars.count[sel]
        trace = _bar_trace(bars, sel, keys[code], color_for(keys[code]))
        label = np.array(
            [f"{names[r]} ×{count_text(int(c))}" for r, c in zip(rows, counts, strict=True)],
            dtype=object,
        )
        calls = np.array([calls_text(int(c)) for c in counts], dtype=object)
        total_ms = np.round((bars.end[sel] - bars.start[sel]) / _NS_PER_MS, 6)
        trace["customdata"] = np.column_stack([label, calls, total_ms, kinds[rows]]).tolist()
        trace["hovertemplate"] = (
            "<b>%{customdata[0]}</b><br>%{customdata[1]} · total %{customdata[2]:.4~r} ms"
            "<br>%{customdata[3]}<br><i>merged by call path: zoom in to see each call</i>"
            "<extra></extra>"
        )
        _label(trace, bars, sel, label)
        traces.append(trace)
    return traces


def calls_text(count: int) -> str:
    """``1 call``, ``1,024 calls``."""
    return f"{count_text(count)} {'call' if count == 1 else 'calls'}"


def merged_traces(bars: Bars, keys: list[str]) -> list[dict]:
    merged = (bars.count > 1) & ~_grouped(bars)
    groups = [(keys[c], merged & bars.uniform & (bars.code == c)) for c in range(len(keys))]
    groups.append(("merged", merged & ~bars.uniform))
    traces = []
    for key, mask in groups:
        sel = np.flatnonzero(mask)
        if len(sel) == 0:
            continue
        color = MERGED_COLOR if key == "merged" else color_for(key)
        trace = _bar_trace(bars, sel, key, color)
        trace["name"] = f"{key} (merged)" if key != "merged" else "merged"
        trace["marker"]["opacity"] = 0.6
        span_ms = (bars.end[sel] - bars.start[sel]) / _NS_PER_MS
        label = np.full(len(sel), "mixed" if key == "merged" else key, dtype=object)
        trace["customdata"] = np.column_stack(
            [
                bars.count[sel],
                label,
                np.round(bars.start[sel] / _NS_PER_MS, 6),
                np.round(span_ms, 6),
                np.round(bars.busy[sel] / _NS_PER_MS, 6),
            ]
        ).tolist()
        trace["hovertemplate"] = (
            "<b>merged: %{customdata[0]} events</b><br>%{customdata[1]}"
            "<br>start: %{customdata[2]:.4~r} ms<br>span: %{customdata[3]:.4~r} ms"
            "<br>busy: %{customdata[4]:.4~r} ms<br><i>zoom in to see them</i><extra></extra>"
        )
        traces.append(trace)
    return traces


def flame_layout(colors: dict, x_range, bands, n_lanes: int, message: str | None = None) -> dict:
    yaxis = {
        "title": {"text": "depth"},
        "autorange": "reversed",
        "autorangeoptions": {"clipmin": -0.5, "clipmax": n_lanes - 0.5},  # no empty lanes
        "gridcolor": colors["grid_color"],
        "zeroline": False,
        "fixedrange": False,
    }
    if len(bands) > 1:  # several threads: label each band of lanes with its thread's name
        yaxis["tickmode"] = "array"
        yaxis["tickvals"] = [b[0] for b in bands]
        yaxis["ticktext"] = [b[1] for b in bands]
        yaxis["title"] = {"text": "thread / depth"}
    elif n_lanes <= 30:
        yaxis["dtick"] = 1
    xaxis = {
        "title": {"text": "time (ms)"},
        "gridcolor": colors["grid_color"],
        "linecolor": colors["line_color"],
        "zeroline": False,
    }
    if x_range is not None:
        xaxis["range"] = [float(x_range[0]), float(x_range[1])]
    layout = {
        "paper_bgcolor": colors["paper_bgcolor"],
        "plot_bgcolor": colors["plot_bgcolor"],
        "font": {"color": colors["font_color"]},
        "xaxis": xaxis,
        "yaxis": yaxis,
        "barmode": "overlay",
        "bargap": 0,
        "dragmode": "zoom",
        "hovermode": "closest",
        "uniformtext": {"mode": "hide", "minsize": 9},
        "uirevision": "flame",  # keep the user's zoom across live refreshes
        "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
        "margin": {"l": 60, "r": 20, "t": 40, "b": 45},
        "height": int(min(900, max(280, 140 + 24 * n_lanes))),
    }
    if message is not None:
        layout["annotations"] = [centred_note(message, colors)]
    return layout
