"""The flame chart: time on x, depth on y, one bar per event (or per merged run of tiny events).

The figure is a plain plotly dict, so it can be given to plotly.js (``to_html`` reports do) or
to ``plotly.graph_objects.Figure`` without importing plotly here. Bars are horizontal ``bar``
traces (one per colour key, ``base`` = start, ``x`` = duration). The live dashboard does not use
it: its browser front end draws the flame chart from the events themselves.
"""

from __future__ import annotations

import numpy as np

from everyo_lab.views._batch import as_batch, color_codes, lanes
from everyo_lab.views.colors import theme_colors
from everyo_lab.views.flame_traces import (
    event_traces,
    flame_layout,
    merged_traces,
    one_legend_entry_per_key,
)
from everyo_lab.views.lod import merge_bars

__all__ = ["flame_figure", "flame_bars"]

_NS_PER_MS = 1e6


def flame_bars(batch, *, x_range=None, width_px: int = 1600, max_shapes: int = 20000):
    """Return the level-of-detail :class:`~everyo_lab.views.lod.Bars` of a batch, its lane bands
    (first lane, thread name) and its colour keys."""
    start = np.asarray(batch.start_ns, dtype=np.int64)
    dur = np.asarray(batch.dur_ns, dtype=np.int64)
    lane, bands = lanes(batch)
    codes, keys = color_codes(batch)
    x_range_ns = None if x_range is None else (x_range[0] * _NS_PER_MS, x_range[1] * _NS_PER_MS)
    bars = merge_bars(
        start, dur, lane, codes, x_range_ns=x_range_ns, width_px=width_px, max_shapes=max_shapes
    )
    return bars, bands, keys


def flame_figure(
    batch,
    *,
    x_range: tuple[float, float] | None = None,
    width_px: int = 1600,
    max_shapes: int = 20000,
    theme: str = "light",
) -> dict:
    """Build the flame chart of a run or event batch as a plotly figure dict.

    Parameters
    ----------
    batch
        An ``EventBatch`` or a ``Run`` (its snapshot is used).
    x_range
        Visible window in ms from the run start, or ``None`` for the whole run. Events narrower
        than one pixel (span / ``width_px``) in that window are merged per depth.
    width_px
        Plot width in pixels, for the level of detail.
    max_shapes
        At most this many bars are emitted, whatever the number of events.
    theme
        ``"light"`` or ``"dark"`` (plotly_dark colours).

    Returns
    -------
    dict
        ``{"data": [...], "layout": {...}}``; ``layout["meta"]`` holds ``events``, ``bars`` and
        ``merged_events`` counts.

    Examples
    --------
    >>> fig = flame_figure(run.snapshot())  # doctest: +SKIP
    >>> sum(len(t["base"]) for t in fig["data"]) <= 20000  # doctest: +SKIP
    True
    """
    colors = theme_colors(theme)
    batch = as_batch(batch)
    if len(batch) == 0:
        return {"data": [], "layout": flame_layout(colors, x_range, [], 1, message="no events")}
    bars, bands, keys = flame_bars(batch, x_range=x_range, width_px=width_px, max_shapes=max_shapes)
    data = event_traces(batch, bars, keys) + merged_traces(bars, keys)
    one_legend_entry_per_key(data)
    n_lanes = int(bars.lane.max()) + 1 if len(bars) else 1
    layout = flame_layout(colors, x_range, bands, n_lanes)
    layout["meta"] = {
        "events": len(batch),
        "bars": len(bars),
        "merged_events": int(bars.count[bars.count > 1].sum()),
    }
    return {"data": data, "layout": layout}
