"""The offline HTML page of a comparison (what ``to_html`` writes for one): the header, both
flame charts on one time axis that zoom together, the diff table with verdicts, the notes.

The same page as a run's report (:mod:`everyo_lab.html_page`: plotly.js inlined, no
network needed); the header and table are the comparison's static HTML.
"""

from __future__ import annotations

import html

from everyo_lab.html_page import link_script, page
from everyo_lab.views._batch import as_batch
from everyo_lab.views.compare.compare_static import (
    render_compare_header_html,
    render_diff_table_html,
)
from everyo_lab.views.compare.compare_view import Comparison

__all__ = ["comparison_html", "comparison_of"]


def comparison_of(value) -> Comparison | None:
    """The comparison ``value`` is or shows (a :class:`Comparison`, or a dashboard comparing
    two runs, e.g. what ``everyo_lab.compare`` returns); ``None`` for anything else."""
    if isinstance(value, Comparison):
        return value
    view = getattr(value, "comparison_view", None)
    return view if isinstance(view, Comparison) else None


def comparison_html(c: Comparison) -> str:
    """The page as a string (see the module)."""
    from everyo_lab.views.flame.flame_figure import flame_figure

    body = [render_compare_header_html(c)]
    figures = {}
    span = max(c.a["wall_ms"], c.b["wall_ms"])
    for name, side, run in (("a", c.a, c.run_a), ("b", c.b, c.run_b)):
        if run is None or not side["events"]:
            continue
        body.append(
            f"<h2>{name.upper()} · {html.escape(side['label'])} · {side['wall_ms']:.3f} ms</h2>"
            f'<div id="flame_{name}" class="chart"></div>'
        )
        figure = flame_figure(as_batch(run), x_range=(0.0, span), marks=run.step_ns)
        figure["layout"]["xaxis"]["autorange"] = False
        figures[f"flame_{name}"] = figure
    if c.rows:
        body.append("<h2>Per-group change, biggest first</h2>")
        body.append(render_diff_table_html(c, top=None))
    body += [f'<p style="color:#59636e">{html.escape(n)}</p>' for n in c.notes]
    body.append(link_script(["flame_a", "flame_b"]))
    return page(f"everyo comparison · {c.a['label']} → {c.b['label']}", body, figures)
