"""The memory view of a run recorded with ``profile_memory``: live bytes over time (on the flame
chart's time axis), the peak with the module running at that moment, and the top allocators.

The profiler's :class:`~everyo.profiler.recording.tensor_memory.MemoryTracker` leaves counter tracks
on the run (``run.counters``: ``"host tensor bytes"``, and ``"cuda pool bytes"`` on CUDA), times in
ns from the run's start like the events'. A run without them has no memory view (``None``).

>>> import everyo as eo
>>> from everyo.profiler import profile
>>> with profile(label="memory_doc", profile_memory=True) as p:
...     _ = eo.Linear(4, 8, seed=0)(eo.zeros(16, 4))
>>> view = memory_view(p.run)
>>> view["peak"]["bytes"] > 0, view["peak"]["label"]
(True, 'Linear')
"""

from __future__ import annotations

import html

import numpy as np

from everyo.spelling import format_bytes
from everyo_lab.views._batch import as_batch
from everyo_lab.views.table.table_rows import display_label

__all__ = [
    "MAX_POINTS",
    "TOP_ALLOCATORS",
    "format_bytes",
    "memory_figure",
    "memory_html",
    "peak_text",
    "memory_text",
    "memory_view",
    "peak_owner",
    "top_allocators",
]

MAX_POINTS = 800
"""Points of the memory chart at most (the widget state and the static SVG stay small)."""

TOP_ALLOCATORS = 3

_PREFERRED = ("host tensor bytes", "cuda pool bytes")


def memory_view(run, *, max_points: int = MAX_POINTS):
    """The memory chart's data, or ``None`` for a run recorded without ``profile_memory``.

    Returns ``track`` (the counter shown), ``tracks`` (all of them), ``t_ms`` and ``bytes``
    (at most ``max_points``, the minimum and maximum of each stretch kept, so the peak is
    always a point), ``peak`` (``t_ms``, ``bytes``, and the innermost module running then:
    ``label``, ``name``, ``path``, ``kind``; ``None`` for those when no event spans it), and
    ``top`` (:func:`top_allocators`).
    """
    counters = getattr(run, "counters", None) or {}
    if not counters:
        return None
    track = next((name for name in _PREFERRED if name in counters), next(iter(counters)))
    t, v = (np.asarray(x, np.int64) for x in counters[track])
    if not len(t):
        return None
    i = int(np.argmax(v))
    batch = as_batch(run)
    owner = peak_owner(batch, int(t[i]))
    keep = _envelope(v, max_points)
    peak = {"t_ms": int(t[i]) / 1e6, "bytes": int(v[i]), **owner}
    return {
        "track": track,
        "tracks": list(counters),
        "t_ms": np.round(t[keep] / 1e6, 4).tolist(),  # 0.1 µs: a third less widget state
        "bytes": v[keep].tolist(),
        "peak": peak,
        "peak_text": peak_text(peak),  # the widget shows it as it is
        "hovertemplate": HOVER,  # plotly spells a point's bytes and time by it, in every view
        "top": top_allocators(batch),
    }


HOVER = "%{y:.4s}B at %{x:.3f} ms<extra></extra>"
"""The memory line's hover: a point's live bytes and time (plotly's template syntax)."""


def peak_text(peak: dict) -> str:
    """``"peak 8.3 kB at 1.366 ms · Linear [2]"``: the one spelling of the peak, in every view
    of the memory chart."""
    where = f" · {peak['label']}" if peak.get("label") else ""
    return f"peak {format_bytes(peak['bytes'])} at {peak['t_ms']:.3f} ms{where}"


def peak_owner(batch, t_ns: int) -> dict:
    """The innermost module event running at ``t_ns`` (ns from the run's start), else the
    innermost event of any kind: ``label``, ``name``, ``path``, ``kind`` (all ``None`` when
    no event spans that moment). An allocation is counted when the event that made it ends, so
    an event ending exactly at ``t_ns`` counts as running."""
    none = {"label": None, "name": None, "path": None, "kind": None}
    if len(batch) == 0:
        return none
    start = np.asarray(batch.start_ns, np.int64)
    spans = (start <= t_ns) & (t_ns <= start + np.asarray(batch.dur_ns, np.int64))
    if not spans.any():
        return none
    keys = batch.keys
    key = np.asarray(batch.key, np.int64)
    is_module = np.array([k[0] == "module" for k in keys] or [False], bool)[key]
    pick = spans & is_module if (spans & is_module).any() else spans
    rows = np.nonzero(pick)[0]
    row = int(rows[np.argmax(np.asarray(batch.depth)[rows])])
    kind, name, path = keys[int(key[row])]
    return {"label": display_label(name, path), "name": name, "path": path, "kind": kind}


def top_allocators(batch, k: int = TOP_ALLOCATORS) -> list[dict]:
    """The ``k`` modules (by class and path) whose own calls allocated the most bytes (an
    array counts for the innermost event that returned it, not for its parents): ``label``,
    ``bytes``, ``calls``. Empty when the batch has no ``mem_bytes`` column."""
    mem = getattr(batch, "mem_bytes", None)
    if mem is None or len(batch) == 0:
        return []
    key = np.asarray(batch.key, np.int64)
    own = np.bincount(
        key, weights=np.maximum(np.asarray(mem, np.int64), 0), minlength=len(batch.keys)
    )
    calls = np.bincount(key, minlength=len(batch.keys))
    totals: dict[str, list[int]] = {}
    for k, (kind, name, path) in enumerate(batch.keys):
        if kind == "module" and own[k] > 0:
            entry = totals.setdefault(display_label(name, path), [0, 0])
            entry[0] += int(own[k])
            entry[1] += int(calls[k])
    ranked = sorted(totals.items(), key=lambda item: -item[1][0])[:k]
    return [{"label": label, "bytes": b, "calls": c} for label, (b, c) in ranked]


def memory_text(memory: dict | None) -> str:
    """``"memory (host tensor bytes): peak 8.3 kB at 1.208 ms · Linear [2]; most allocated by:
    Linear [0] 12.3 kB, ..."`` ("" without a memory view); the peak as :func:`peak_text`."""
    if not memory:
        return ""
    text = f"memory ({memory['track']}): {peak_text(memory['peak'])}"
    if memory.get("top"):
        top = ", ".join(f"{t['label']} {format_bytes(t['bytes'])}" for t in memory["top"])
        text += f"; most allocated by: {top}"
    return text


def memory_figure(memory: dict, *, x_range: tuple[float, float] | None = None) -> dict:
    """The memory chart as a plotly figure dict (``to_html``'s page), with the flame chart's
    margins so the two time axes line up; ``x_range`` in ms (default: the whole track)."""
    peak = memory["peak"]
    label = peak_text(peak)
    end = x_range[1] if x_range else max(memory["t_ms"][-1], 1e-9)
    right = peak["t_ms"] > 0.6 * end
    xaxis = {"title": {"text": "time (ms)"}, "showgrid": False, "zeroline": False}
    if x_range is not None:
        xaxis.update(range=[float(x_range[0]), float(x_range[1])], autorange=False)
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines",
                "x": memory["t_ms"],
                "y": memory["bytes"],
                "name": memory["track"],
                "line": {"shape": "hv", "width": 1.5, "color": "#4c78a8"},
                "fill": "tozeroy",
                "fillcolor": "rgba(76,120,168,0.2)",
                "hovertemplate": HOVER,
            },
            {
                "type": "scatter",
                "mode": "markers",
                "x": [peak["t_ms"]],
                "y": [peak["bytes"]],
                "name": "peak",
                "marker": {"color": "#e45756", "size": 9},
                "hovertemplate": f"{html.escape(label)}<extra></extra>",
            },
        ],
        "layout": {
            "height": 220,
            "showlegend": False,
            "margin": {"l": 60, "r": 20, "t": 24, "b": 45},  # the flame chart's left and right
            "xaxis": xaxis,
            "yaxis": {"title": {"text": "live bytes"}, "tickformat": "~s", "ticksuffix": "B"},
            "annotations": [
                {
                    "x": peak["t_ms"],
                    "y": peak["bytes"],
                    "text": html.escape(label),
                    "showarrow": False,
                    "xanchor": "right" if right else "left",
                    "xshift": -8 if right else 8,
                    "yanchor": "bottom",
                }
            ],
        },
    }


def memory_html(
    memory: dict | None, *, span_ns: float, text_color: str = "#555", columns: int = 240
) -> str:
    """The memory chart as sanitiser-proof HTML (``<div>`` columns, as the static flame chart:
    an untrusted notebook's sanitiser drops inline SVG), on the flame chart's time scale (the
    same width and ``span_ns``), the peak marked and named. Empty without a memory view.

    Each of ``columns`` columns is as high as the most bytes live during its stretch of time
    (so the peak shows however short), runs of equal columns drawn as one ``<div>``.
    """
    from everyo_lab.views.flame.flame_html import WIDTH_PX, css, time_axis_html

    if not memory or not memory["t_ms"]:
        return ""
    height, top = 90, 14
    span = max(float(span_ns), memory["t_ms"][-1] * 1e6, 1.0)
    heights = _column_peaks(memory, span, columns)
    most = max(float(heights.max()), 1.0)
    out = [
        f'<div class="everyo-static-memory" style="position:relative;width:100%;'
        f'max-width:{WIDTH_PX}px;height:{top + height}px;overflow:hidden">'
    ]
    start = 0
    for i in range(1, columns + 1):  # one <div> per run of equal columns
        if i < columns and heights[i] == heights[start]:
            continue
        if heights[start] > 0:
            px = max(1, round(heights[start] / most * height))
            at = start * span / columns / 1e6
            out.append(
                f'<div title="{format_bytes(heights[start])} live from {at:.3f} ms" '
                f'style="position:absolute;left:{start / columns * 100:.3f}%;'
                f"top:{top + height - px}px;width:{(i - start) / columns * 100:.3f}%;"
                f'height:{px}px;background-color:#4c78a8;opacity:0.45"></div>'
            )
        start = i
    peak = memory["peak"]
    pct = min(100.0, peak["t_ms"] * 1e6 / span * 100)
    label = peak_text(peak)
    side = "right:0;text-align:right" if pct > 70 else "left:0"
    out.append(
        f'<div title="{html.escape(label)}" style="position:absolute;'
        f"left:{pct:.3f}%;top:{top - 4}px;width:7px;height:7px;margin-left:-3px;"
        f'border-radius:4px;background-color:#e45756"></div>'
        f'<div style="position:absolute;{side};top:0;font-size:11px;white-space:nowrap;'
        f'{css("color", text_color)}">{html.escape(label)}</div>'
    )
    out.append("</div>")
    out.append(time_axis_html(span, text_color))
    return "".join(out)


def _column_peaks(memory: dict, span_ns: float, columns: int) -> np.ndarray:
    """Per column of ``span_ns / columns``, the most bytes live in it: the samples inside it
    and the level held from the sample before it (live bytes hold until the next change)."""
    t = np.asarray(memory["t_ms"], np.float64) * 1e6
    b = np.asarray(memory["bytes"], np.float64)
    edges = np.arange(columns) * (span_ns / columns)
    before = np.searchsorted(t, edges, side="right") - 1  # the level a column starts at
    peaks = np.where(before >= 0, b[np.maximum(before, 0)], 0.0)
    col = np.minimum((t / span_ns * columns).astype(np.int64), columns - 1)
    np.maximum.at(peaks, col, b)
    return peaks


def _envelope(values: np.ndarray, max_points: int) -> np.ndarray:
    """Indices to draw: all of them when few, else per stretch its minimum and maximum (in
    time order), so the chart keeps every peak and trough the full track has."""
    n = len(values)
    if n <= max_points:
        return np.arange(n)
    buckets = max(1, max_points // 2)
    edges = np.linspace(0, n, buckets + 1).astype(np.int64)
    keep = [0, n - 1]
    for lo, hi in zip(edges[:-1], edges[1:]):
        if hi > lo:
            part = values[lo:hi]
            keep += [lo + int(np.argmin(part)), lo + int(np.argmax(part))]
    return np.unique(np.asarray(keep, np.int64))
