"""The flame chart: time on x, depth on y, one bar per event (or per merged run of tiny events).

The figure is a plain plotly dict, so it can be given to plotly.js (``to_html`` reports do) or
to ``plotly.graph_objects.Figure`` without importing plotly here. Bars are horizontal ``bar``
traces (one per colour key, ``base`` = start, ``x`` = duration). The live dashboard does not use
it: its browser front end draws the flame chart from the events themselves.
"""

from __future__ import annotations

import numpy as np

from everyo.profiler.analysis.step_stats import step_ends
from everyo_lab.views._batch import as_batch, color_codes, key_color_codes, lanes
from everyo_lab.views.colors import theme_colors
from everyo_lab.views.flame.flame_traces import (
    event_traces,
    flame_layout,
    group_traces,
    merged_traces,
    one_legend_entry_per_key,
)
from everyo_lab.views.flame.lod import READABLE_LIMIT, call_paths, merge_bars, readable_bars

__all__ = ["flame_figure", "flame_bars"]

_NS_PER_MS = 1e6


def flame_bars(
    batch,
    *,
    x_range=None,
    width_px: int = 1600,
    max_shapes: int = 20000,
    marks=None,
    by_call_path: bool = True,
):
    """Return the level-of-detail :class:`~everyo_lab.views.flame.lod.Bars` of a batch, its lane
    bands (first lane, thread name) and its colour keys.

    As the dashboard draws them: calls too narrow to name merge by call path, in cells of
    whole training steps (``marks``: the run's ``step_ns``; else its optimizer steps) or
    slices of time, then what is still under a pixel merges by pixel; a run of more than
    :data:`~everyo_lab.views.flame.lod.READABLE_LIMIT` events, or a batch without interned keys,
    by pixel alone; ``by_call_path=False``: by pixel alone always."""
    start = np.asarray(batch.start_ns, dtype=np.int64)
    dur = np.asarray(batch.dur_ns, dtype=np.int64)
    lane, bands = lanes(batch)
    x_range_ns = None if x_range is None else (x_range[0] * _NS_PER_MS, x_range[1] * _NS_PER_MS)
    key_ids, table = getattr(batch, "key", None), getattr(batch, "keys", None)
    readable = by_call_path and 0 < len(batch) <= READABLE_LIMIT
    if readable and isinstance(key_ids, np.ndarray) and isinstance(table, list | tuple) and table:
        end = start + dur
        window = x_range_ns or (float(min(0, start.min())), float(end.max()))
        parent, has_parent = batch.parent_index()
        path, path_parent = call_paths(key_ids, batch.depth, parent, has_parent)
        code_of_key, keys = key_color_codes(table)  # (color_codes' keys for such a batch)
        bars = readable_bars(
            start, end, lane, key_ids, code_of_key, path, path_parent, x_range_ns=window,
            width_px=width_px, step_ends=step_ends(batch, marks)[0], max_shapes=max_shapes,
        )  # fmt: skip
        return bars, bands, keys
    codes, keys = color_codes(batch)
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
    marks=None,
    by_call_path: bool = True,
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
    marks
        The run's step marks (``run.step_ns``; a ``Run``'s own by default): calls too narrow
        to name merge by call path in cells of whole steps (:func:`flame_bars`).
    by_call_path
        ``False``: merge by pixel alone (the live state's figure, from running aggregates
        without the events, can only do that).

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
    marks = getattr(batch, "step_ns", None) if marks is None else marks
    batch = as_batch(batch)
    if len(batch) == 0:
        return {"data": [], "layout": flame_layout(colors, x_range, [], 1, message="no events")}
    bars, bands, keys = flame_bars(
        batch,
        x_range=x_range,
        width_px=width_px,
        max_shapes=max_shapes,
        marks=marks,
        by_call_path=by_call_path,
    )
    data = event_traces(batch, bars, keys) + group_traces(batch, bars, keys)
    data += merged_traces(bars, keys)
    one_legend_entry_per_key(data)
    n_lanes = int(bars.lane.max()) + 1 if len(bars) else 1
    layout = flame_layout(colors, x_range, bands, n_lanes)
    layout["meta"] = {
        "events": len(batch),
        "bars": len(bars),
        "merged_events": int(bars.count[bars.count > 1].sum()),
    }
    return {"data": data, "layout": layout}
