"""The icicle chart: the call tree aggregated by module path, root at the top."""

from __future__ import annotations

from everyo_lab.views._batch import as_batch, as_run
from everyo_lab.views.colors import centred_note, color_for, color_key, theme_colors
from everyo_lab.views.table.table_rows import event_label

__all__ = ["icicle_figure", "node_label"]


def icicle_figure(run_or_batch, *, theme: str = "light") -> dict:
    """Build the icicle of the aggregated call tree as a plotly figure dict.

    Nodes come from :func:`everyo.profiler.analysis.run_analysis.call_tree` (``by="path"``); a
    node's value is its inclusive time in ms (``branchvalues="total"``), its colour its class name's
    colour, its label its class name with the path as qualifier (:func:`node_label`).

    Returns
    -------
    dict
        ``{"data": [icicle trace], "layout": {...}}``, or no trace and a "no events" note.
    """
    from everyo.profiler.analysis import (
        run_analysis as analysis,  # lazily: views import fast and stay pure
    )

    colors = theme_colors(theme)
    nodes = list(analysis.call_tree(_source(run_or_batch), by="path"))
    layout = {
        "paper_bgcolor": colors["paper_bgcolor"],
        "plot_bgcolor": colors["plot_bgcolor"],
        "font": {"color": colors["font_color"]},
        "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
        "height": 360,
        "uirevision": "icicle",
    }
    if not nodes:
        layout["annotations"] = [centred_note("no events", colors)]
        return {"data": [], "layout": layout}
    ids = [str(n["id"]) for n in nodes]
    parents = [_parent_id(n.get("parent")) for n in nodes]
    values = _consistent_totals(ids, parents, [n["total_ns"] / 1e6 for n in nodes])
    trace = {
        "type": "icicle",
        "ids": ids,
        "parents": parents,
        "labels": [node_label(n) for n in nodes],
        "values": [round(v, 6) for v in values],
        "branchvalues": "total",
        "tiling": {"orientation": "v"},
        "marker": {
            "colors": [
                color_for(color_key(n.get("kind", "module"), n.get("name", ""))) for n in nodes
            ]
        },
        "customdata": [
            [
                str(n.get("path") or "—"),
                round(n["total_ns"] / 1e6, 6),
                round(n.get("self_ns", 0) / 1e6, 6),
                int(n.get("calls", 0)),
            ]
            for n in nodes
        ],
        "hovertemplate": (
            "<b>%{label}</b><br>path: %{customdata[0]}<br>total: %{customdata[1]:.3f} ms"
            "<br>self: %{customdata[2]:.3f} ms<br>calls: %{customdata[3]}"
            "<br>%{percentRoot:.1%} of the root<extra></extra>"
        ),
    }
    return {"data": [trace], "layout": layout}


def node_label(node: dict) -> str:
    """A call-tree node's label: class name and path, ``"Conv2d [features.3]"``; a module's
    backward work ``"Conv2d [features.3] (backward)"``; a region or op its name."""
    name = str(node.get("name") or node.get("label") or node["id"])
    return event_label(str(node.get("kind", "")), name, node.get("path", ""))


def _source(run_or_batch):
    run = as_run(run_or_batch)
    return run if run is not None else as_batch(run_or_batch)


def _parent_id(parent) -> str:
    return "" if parent is None or parent == "" or parent == -1 else str(parent)


def _consistent_totals(ids: list[str], parents: list[str], values: list[float]) -> list[float]:
    """Raise each parent to at least the sum of its children.

    With ``branchvalues="total"`` plotly draws nothing when children exceed their parent; timer
    jitter, and backward work attributed to a module outside its forward interval, can do that.
    """
    index = {i: k for k, i in enumerate(ids)}
    depth = [0] * len(ids)
    for k in range(len(ids)):
        p, d, seen = parents[k], 0, set()
        while p in index and p not in seen:  # walk up; `seen` guards against a malformed cycle
            seen.add(p)
            d += 1
            p = parents[index[p]]
        depth[k] = d
    out = list(values)
    child_sum = [0.0] * len(ids)
    for k in sorted(range(len(ids)), key=lambda k: -depth[k]):
        out[k] = max(out[k], child_sum[k])
        p = index.get(parents[k])
        if p is not None:
            child_sum[p] += out[k]
    return out
