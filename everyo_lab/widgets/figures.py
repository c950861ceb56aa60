"""Putting a view's plotly figure dict into a live ``go.FigureWidget`` cheaply.

plotly's object model validates every value it is given (tens of milliseconds for a few
thousand bars), which a refresher running beside the user's code cannot afford. When the new
figure has the same traces as the shown one (the common case while a run grows), the update
goes through ``plotly_update`` instead: raw values, NumPy arrays compared in one call, and only
the properties that changed are sent. Otherwise the traces are replaced the validated way.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

# Per-point trace properties: sent as arrays (numeric ones travel as binary buffers).
_ARRAYS = ("base", "x", "y", "customdata", "text", "ids", "labels", "parents", "values")
_KEEP_ZOOM = ("xaxis.range", "xaxis.autorange")


def new_figure_widget(fig: dict | None = None) -> go.FigureWidget:
    """A ``FigureWidget`` showing ``fig`` (a ``{"data", "layout"}`` dict from a view)."""
    widget = go.FigureWidget()
    if fig is not None:
        apply_figure(widget, fig)
    return widget


def apply_figure(widget: go.FigureWidget, fig: dict, *, keep_x_range: bool = False) -> None:
    """Show ``fig`` in ``widget``; ``keep_x_range`` leaves the user's zoom alone."""
    data = [_as_arrays(t) for t in fig.get("data", ())]
    relayout = flatten(fig.get("layout", {}))
    if keep_x_range:
        relayout = {k: v for k, v in relayout.items() if not k.startswith(_KEEP_ZOOM)}
    relayout.setdefault("annotations", [])  # a "no events" message must go once events come
    # Send only layout keys that differ from what this function sent last time (the user's
    # zoom is never among them), so a refresh checks a handful of paths, not a hundred.
    sent = getattr(widget, "_everyo_layout_sent", {})
    changed = {k: v for k, v in relayout.items() if k not in sent or not _same(sent[k], v)}
    widget._everyo_layout_sent = {**sent, **relayout}
    types = [t.get("type", "scatter") for t in data]
    shown = [t.type for t in widget.data]
    if all(a == b for a, b in zip(types, shown)) and (types or not shown):
        # Same kinds of traces: grow with empty traces (cheap to validate) or blank the extra
        # ones, then one restyle carries every array.
        if len(types) > len(shown):
            widget.add_traces([{"type": t} for t in types[len(shown) :]])
        blanks = [_blank(t) for t in shown[len(types) :]]
        widget.plotly_update(restyle_data=_restyle(widget, data + blanks), relayout_data=changed)
        return
    if changed:
        widget.plotly_relayout(changed)
    widget.data = ()
    widget._everyo_static_sent = None
    if data:
        widget.add_traces(data)


def _blank(kind: str) -> dict:
    """An invisible trace of ``kind`` that keeps a slot for a later refresh."""
    if kind != "bar":
        return {"type": kind, "visible": False}
    empty = np.zeros(0)
    return {
        "type": kind,
        "base": empty,
        "x": empty,
        "y": empty,
        "customdata": empty,
        "text": empty,
        "name": "",
        "showlegend": False,
        "hoverinfo": "skip",
    }


def flatten(layout: dict, prefix: str = "") -> dict:
    """``{"xaxis": {"title": {"text": "t"}}}`` → ``{"xaxis.title.text": "t"}`` (lists kept)."""
    out = {}
    for key, value in layout.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and key != "meta":
            out.update(flatten(value, path + "."))
        else:
            out[path] = value
    return out


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (ValueError, TypeError):  # arrays: elementwise comparison has no single truth value
        return False


def _as_arrays(trace: dict) -> dict:
    out = dict(trace)
    for key in _ARRAYS:
        value = out.get(key)
        if isinstance(value, list):
            arr = np.asarray(value)
            out[key] = np.asarray(value, dtype=object) if arr.dtype.kind in "USV" else arr
    return out


def _restyle(widget, data: list[dict]) -> dict:
    """One restyle dict for all traces: ``{prop: [value of trace 0, value of trace 1, ...]}``.

    Arrays always go; other properties (name, colour, templates) only when one of them changed
    since the last refresh: each property costs plotly a path check per trace.
    """
    keys = []
    for trace in data:
        keys.extend(k for k in trace if k != "type" and k not in keys)
    static = [{k: v for k, v in t.items() if k not in _ARRAYS} for t in data]
    last = getattr(widget, "_everyo_static_sent", None)
    widget._everyo_static_sent = static
    out = {}
    for k in keys:
        values = [trace.get(k) for trace in data]
        if k in _ARRAYS or last is None or len(last) != len(static):
            out[k] = values
        elif any(not _same(old.get(k), new.get(k)) for old, new in zip(last, static)):
            out[k] = values
    return out


def bar_count(widget: go.FigureWidget) -> int:
    """How many bars the flame chart draws (the ``base`` arrays of its bar traces)."""
    return sum(len(t.base) for t in widget.data if getattr(t, "base", None) is not None)
