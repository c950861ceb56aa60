"""Putting a view's plotly figure dict into a live ``go.FigureWidget`` with few messages."""

from __future__ import annotations

import plotly.graph_objects as go


def new_figure_widget(fig: dict | None = None) -> go.FigureWidget:
    """A ``FigureWidget`` showing ``fig`` (a ``{"data", "layout"}`` dict from a view)."""
    widget = go.FigureWidget()
    if fig is not None:
        apply_figure(widget, fig)
    return widget


def apply_figure(widget: go.FigureWidget, fig: dict, *, keep_x_range: bool = False) -> None:
    """Replace the traces and update the layout of ``widget`` with ``fig``.

    Same trace types in the same order are restyled in place (one message per refresh);
    otherwise the traces are swapped. ``keep_x_range`` leaves the user's zoom alone.
    """
    data = list(fig.get("data", ()))
    layout = dict(fig.get("layout", {}))
    if keep_x_range and "xaxis" in layout:
        layout["xaxis"] = {
            k: v for k, v in layout["xaxis"].items() if k not in ("range", "autorange")
        }
    same_shape = len(widget.data) == len(data) and all(
        t.type == d.get("type", "scatter") for t, d in zip(widget.data, data)
    )
    if same_shape:
        with widget.batch_update():
            for trace, new in zip(widget.data, data):
                trace.update({k: v for k, v in new.items() if k != "type"}, overwrite=True)
            _update_layout(widget, layout)
        return
    with widget.batch_update():
        _update_layout(widget, layout)
    widget.data = ()
    if data:
        widget.add_traces(data)


def _update_layout(widget: go.FigureWidget, layout: dict) -> None:
    # Annotations are replaced, not merged: an "empty run" message must go once events arrive.
    widget.layout.annotations = layout.pop("annotations", ())
    widget.layout.update(layout)


def bar_count(widget: go.FigureWidget) -> int:
    """How many bars the flame chart draws (the ``base`` arrays of its bar traces)."""
    return sum(len(t.base) for t in widget.data if getattr(t, "base", None) is not None)
