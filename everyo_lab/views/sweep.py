"""The batch-size sweep chart: throughput and latency against batch size."""

from __future__ import annotations

from everyo_lab.views.colors import theme_colors

__all__ = ["sweep_figure"]

_THROUGHPUT = "#1f77b4"
_LATENCY = "#ff7f0e"
_FAILED = "#d62728"


def sweep_figure(result, *, theme: str = "light") -> dict:
    """Plot a :class:`everyo.bench.SweepResult` as a plotly figure dict.

    Throughput (samples/s, left axis) and mean latency (ms, right axis) per batch size on a
    log2 x axis; the recommended size is starred, and points that ran out of memory or failed
    are marked on the x axis with their status.
    """
    colors = theme_colors(theme)
    ok = [r for r in result.rows if r.status == "ok"]
    bad = [r for r in result.rows if r.status != "ok"]
    sizes = [r.batch_size for r in ok]
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "throughput (samples/s)",
            "x": sizes,
            "y": [r.throughput for r in ok],
            "marker": {"color": _THROUGHPUT},
            "hovertemplate": "batch %{x}<br>%{y:.4s} samples/s<extra></extra>",
        },
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": "mean latency (ms)",
            "x": sizes,
            "y": [r.mean_ms for r in ok],
            "yaxis": "y2",
            "line": {"dash": "dot"},
            "marker": {"color": _LATENCY},
            "hovertemplate": "batch %{x}<br>%{y:.4g} ms per call<extra></extra>",
        },
    ]
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
