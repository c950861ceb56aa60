"""The batch-size sweep charts: throughput, latency and peak memory against batch size.

:func:`sweep_charts` draws the three charts of a sweep report (what the sweep widget shows);
:func:`sweep_figure` one combined figure of a finished result, for ``go.Figure(...)``.
"""

from __future__ import annotations

import math

from everyo_lab.views.colors import theme_colors

__all__ = ["sweep_charts", "sweep_figure"]

_THROUGHPUT = "#1f77b4"
_LATENCY = "#ff7f0e"
_FAILED = "#d62728"


def sweep_figure(result, *, theme: str = "light") -> dict:
    """Plot a :class:`everyo.bench.SweepResult` as a plotly figure dict.

    Throughput (samples/s, left axis) and median latency (ms, right axis: the latency every
    view shows, with its statistic named; see docs/glossary.md) per batch size on a
    log2 x axis; the recommended size is starred, points that cannot be trusted (unreliable,
    off-trend, or measured on a contended machine) are ringed with the reason on hover, and
    points that ran out of memory or failed are marked on the x axis with their status.
    """
    from everyo_lab.views.sweep.sweep_report import (
        sweep_points,  # (lazily: it imports everyo.bench)
    )

    colors = theme_colors(theme)
    bad = [r for r in result.rows if r.status != "ok"]
    pts = sweep_points(result)
    sizes = pts["batch_size"]
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "throughput (samples/s)",
            "x": sizes,
            "y": pts["throughput"],
            "text": _point_hovers(pts),
            "marker": {"color": _THROUGHPUT},
            "hovertemplate": "batch %{x}<br>%{y:.4s} samples/s%{text}<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "median latency (ms)",
            "x": sizes,
            "y": pts["median_ms"],
            "yaxis": "y2",
            "line": {"dash": "dot"},
            "marker": {"color": _LATENCY},
            "hovertemplate": "batch %{x}<br>median %{y:.4g} ms per call<extra></extra>",
        },
    ]
    flagged = [i for i, flag in enumerate(pts["flag"]) if flag]
    if flagged:  # never an unexplained point: why it was not recommended, on the chart itself
        data.append(_flagged(pts, flagged))
    best = getattr(result, "recommended", None)
    if best is not None:
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"recommended: {best.batch_size}",
                "x": [best.batch_size],
                "y": [best.throughput],
                "marker": {"symbol": "star", "size": 16, "color": "#2ca02c"},
                "hovertemplate": "recommended batch %{x}<extra></extra>",
            }
        )
    if bad:
        data.append(
            {
                "type": "scatter",
                "mode": "markers+text",
                "name": "not measured",
                "x": [r.batch_size for r in bad],
                "y": [0] * len(bad),
                "text": [r.status for r in bad],
                "textposition": "top center",
                "marker": {"symbol": "x", "size": 11, "color": _FAILED},
                "hovertemplate": "batch %{x}: %{text}<extra></extra>",
            }
        )
    axis = {"gridcolor": colors["grid_color"], "zeroline": False}
    layout = {
        "paper_bgcolor": colors["paper_bgcolor"],
        "plot_bgcolor": colors["plot_bgcolor"],
        "font": {"color": colors["font_color"]},
        "title": {"text": f"Batch-size sweep ({getattr(result, 'mode', 'inference')})"},
        "xaxis": {**axis, "title": {"text": "batch size"}, "type": "log", "dtick": 0.30102999566},
        "yaxis": {**axis, "title": {"text": "samples/s"}, "rangemode": "tozero"},
        "yaxis2": {
            **axis,
            "title": {"text": "ms per call"},
            "overlaying": "y",
            "side": "right",
            "rangemode": "tozero",
            "showgrid": False,
        },
        "legend": {"orientation": "h", "y": -0.25},
        "hovermode": "closest",
        "height": 380,
        "margin": {"l": 60, "r": 60, "t": 50, "b": 60},
    }
    return {"data": data, "layout": layout}


_RECOMMENDED = "#2ca02c"
_LARGEST = "#7f7f7f"
_MEMORY = "#9467bd"
_LOG2 = 0.30102999566  # log10(2): one tick per power of two on a log axis
_MIB = 2**20


def _point_hovers(pts: dict) -> list[str]:
    """Each point's addition to its throughput hover: a flagged point's reason (on the point
    itself, not only over its ring), else the machine's verdict when it was not quiet."""
    n = len(pts["batch_size"])
    flags = pts.get("flag") or [None] * n
    verdicts = pts.get("verdict") or [None] * n
    return [
        f"<br>{flag}: {hover_text(pts['note'][i] or '')}"
        if flag
        else f"<br>machine: {verdicts[i]}"
        if verdicts[i] not in (None, "quiet")
        else ""
        for i, flag in enumerate(flags)
    ]


def sweep_charts(report, *, theme: str = "light") -> dict:
    """The three charts of a sweep report as plotly figure dicts, keyed ``throughput``,
    ``latency`` and ``memory``: each against batch size on a log2 x axis, with the points that
    did not run marked on the axis (hover: their message) and the recommended batch and the
    largest that fits as vertical lines.

    ``report`` is a :class:`~everyo_lab.views.sweep.sweep_report.SweepReport` or its ``to_dict()``.
    """
    r = report if isinstance(report, dict) else report.to_dict()
    colors = theme_colors(theme)
    pts, marks, rec = r["points"], r["marks"], r["recommendation"]
    x = pts["batch_size"]
    throughput = [
        _line(x, pts["throughput"], "throughput", _THROUGHPUT, "%{y:,.4~s} samples/s%{text}"),
    ]
    throughput[0]["text"] = _point_hovers(pts)
    flagged = [i for i, flag in enumerate(pts.get("flag") or []) if flag]
    if flagged:
        throughput.append(_flagged(pts, flagged))
    if rec["recommended"] is not None:
        at = x.index(rec["recommended"])
        throughput.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"recommended: {rec['recommended']}",
                "x": [x[at]],
                "y": [pts["throughput"][at]],
                "marker": {"symbol": "star", "size": 16, "color": _RECOMMENDED},
                "hovertemplate": "recommended batch %{x}<extra></extra>",
            }
        )
    latency = [
        _band_edge(x, pts["p95_ms"], None),
        _band_edge(x, pts["p5_ms"], "tonexty"),
        _line(x, pts["median_ms"], "median latency", _LATENCY, "median %{y:.4g} ms"),
    ]
    memory = [
        _line(
            x,
            [m / _MIB if m is not None else None for m in pts["memory"]],
            "peak memory",
            _MEMORY,
            "%{y:.4g} MiB",
        ),
    ]
    figures = {}
    titles = {
        "throughput": ("throughput", "samples/s", throughput),
        "latency": ("latency per call (median, p5–p95 band)", "ms", latency),
        "memory": (f"peak memory ({r.get('memory_kind', 'host')})", "MiB", memory),
    }
    for key, (title, unit, data) in titles.items():
        if marks:
            data.append(_marks(marks))
        layout = _chart_layout(title, unit, colors)
        layout["shapes"], layout["annotations"] = _verticals(rec, colors)
        if key == "memory" and r.get("memory_limit"):
            limit = r["memory_limit"] / _MIB
            layout["shapes"].append(_hline(limit, colors))
            layout["annotations"].append(_hlabel(limit, colors))
        figures[key] = {"data": data, "layout": layout}
    return figures


def _line(x, y, name, color, hover):
    return {
        "type": "scatter",
        "mode": "lines+markers",
        "name": name,
        "x": list(x),
        "y": list(y),
        "line": {"color": color},
        "marker": {"color": color, "size": 7},
        "hovertemplate": f"batch %{{x}}<br>{hover}<extra></extra>",
    }


def _band_edge(x, y, fill):
    edge = {
        "type": "scatter",
        "mode": "lines",
        "name": "p5–p95" if fill else "p95",
        "x": list(x),
        "y": list(y),
        "line": {"width": 0, "color": _LATENCY},
        "hoverinfo": "skip",
        "showlegend": False,
    }
    if fill:
        edge.update(fill=fill, fillcolor="rgba(255,127,14,0.2)")
    return edge


def _flagged(pts, at):
    """Rings around the points that are not trusted (unreliable, off-trend, or measured on a
    contended machine); hover says why."""
    return {
        "type": "scatter",
        "mode": "markers+text",
        "name": "not trusted",
        "x": [pts["batch_size"][i] for i in at],
        "y": [pts["throughput"][i] for i in at],
        "text": [pts["flag"][i] for i in at],
        "customdata": [hover_text(pts["note"][i] or pts["flag"][i]) for i in at],
        "textposition": "top center",  # a collapsed point sits on the axis: label it above
        "cliponaxis": False,
        "textfont": {"color": _FAILED, "size": 10},
        "marker": {
            "symbol": "circle-open",
            "size": 16,
            "color": _FAILED,
            "line": {"width": 2, "color": _FAILED},
        },
        "hovertemplate": "batch %{x}: %{customdata}<extra></extra>",
    }


def hover_text(text: str, width: int = 60, limit: int = 320) -> str:
    """``text`` for a hover box: cut at a word within ``limit`` characters and wrapped with
    ``<br>`` at about ``width`` (a one-line reason ran 1,300 px wide, past the chart)."""
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + " …"
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "<br>".join([*lines, line] if line else lines)


def _marks(marks):
    return {
        "type": "scatter",
        "mode": "markers+text",
        "name": "not measured",
        "x": [m["batch_size"] for m in marks],
        "y": [0] * len(marks),
        "text": [m["label"] for m in marks],
        "customdata": [m["message"][:200] for m in marks],
        "textposition": "top center",
        "textfont": {"color": _FAILED, "size": 10},
        "marker": {"symbol": "x", "size": 11, "color": _FAILED},
        "cliponaxis": False,
        "hovertemplate": "batch %{x}: %{customdata}<extra></extra>",
    }


def _chart_layout(title, unit, colors):
    # autorange, not a computed range: Plotly.react of a live chart then follows new points
    axis = {"gridcolor": colors["grid_color"], "zeroline": False}
    xaxis = {**axis, "title": {"text": "batch size"}, "type": "log", "dtick": _LOG2}
    return {
        "paper_bgcolor": colors["paper_bgcolor"],
        "plot_bgcolor": colors["plot_bgcolor"],
        "font": {"color": colors["font_color"], "size": 11},
        "title": {"text": title, "font": {"size": 13}, "x": 0.02},
        "xaxis": xaxis,
        "yaxis": {**axis, "title": {"text": unit}, "rangemode": "tozero"},
        "showlegend": False,
        "hovermode": "closest",
        "height": 260,
        "margin": {"l": 60, "r": 16, "t": 36, "b": 44},
    }


def _verticals(rec, colors):
    shapes, notes = [], []
    lines = [("recommended", rec["recommended"], _RECOMMENDED, "dash")]
    if rec["largest_fit"] != rec["recommended"]:
        lines.append(("largest fit", rec["largest_fit"], _LARGEST, "dot"))
    for n, (name, size, color, dash) in enumerate(lines):
        if size is None:
            continue
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": size,
                "x1": size,
                "y0": 0,
                "y1": 1,
                "line": {"color": color, "dash": dash, "width": 1.5},
            }
        )
        notes.append(
            {
                "x": math.log10(size),
                "xref": "x",
                "yref": "paper",
                "y": 1,
                "yanchor": "bottom",
                # two labels side by side overlapped: one to each side of its line
                "xanchor": "right" if n == 0 and len(lines) > 1 else "left" if n else "center",
                "text": f"{name} {size}",
                "showarrow": False,
                "font": {"color": color, "size": 10},
            }
        )
    return shapes, notes


def _hline(y, colors):
    return {
        "type": "line",
        "xref": "paper",
        "yref": "y",
        "x0": 0,
        "x1": 1,
        "y0": y,
        "y1": y,
        "line": {"color": _FAILED, "dash": "dash", "width": 1},
    }


def _hlabel(y, colors):
    return {
        "x": 0,
        "xref": "paper",
        "xanchor": "left",
        "y": y,
        "yref": "y",
        "yanchor": "bottom",
        "text": "memory limit",
        "showarrow": False,
        "font": {"color": _FAILED, "size": 10},
    }
