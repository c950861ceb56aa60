"""Static flame charts (the HTML a saved notebook keeps, ``to_html``, the plotly figure) read as
the dashboard's does zoomed out: calls too narrow to name merge by call path, one bar per path
and cell, labelled with their count (issue 43, item 12: a long run was a wash of thin bars)."""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest
from test_lod_js import JS, NODE, needs_node

import everyo.profiler as ep
from everyo.profiler import record_function
from everyo_lab.views.flame import flame_figure as flame_module
from everyo_lab.views.flame.flame_figure import flame_bars, flame_figure
from everyo_lab.views.flame.flame_html import MAX_BARS, flame_html
from everyo_lab.views.flame.lod import call_paths, cell_edges


def _long_run(steps: int = 600):
    """A training loop of regions: per step, forward > 3 Linear, backward > grad, a step mark."""
    with ep.profile(registry=ep.RunRegistry(), clock=_Clock()) as p:
        for _ in range(steps):
            with record_function("forward"):
                for _ in range(3):
                    with record_function("Linear"):
                        pass
            with record_function("backward"):
                with record_function("grad"):
                    pass
            p.step()
    return p.run


class _Clock:
    def __init__(self):
        self.t = 0

    def __call__(self) -> int:
        self.t += 1000
        return self.t


def test_a_long_run_reads_as_one_bar_per_call_path_in_the_static_chart():
    run = _long_run()
    batch = run.snapshot()
    page = flame_html(batch, marks=run.step_ns)
    titles = re.findall(r'title="([^"]*)"', page)
    # 3,600 events: by pixel they were hundreds of thin merged bars ("N events")
    assert len(batch) == 3600 and 0 < len(titles) <= 20
    assert any(t.startswith("forward ×") and "calls · total" in t for t in titles), titles
    assert not any("events ·" in t for t in titles)  # no pixel-merged wash left
    bars, _, _ = flame_bars(batch, width_px=960, max_shapes=MAX_BARS, marks=run.step_ns)
    assert bars.group.all() and int(bars.count.sum()) == len(batch)  # each call in one bar
    names = {str(batch.name[r]) for r in bars.row}
    assert names == {"forward", "Linear", "backward", "grad"}
    # a call path's bar sits under its parent's bar
    for i in np.flatnonzero(bars.lane == 1):
        above = np.flatnonzero(
            (bars.lane == 0) & (bars.start <= bars.start[i]) & (bars.end >= bars.end[i])
        )
        assert len(above) == 1


def test_the_plotly_figure_labels_call_path_bars_with_their_count():
    run = _long_run(300)
    fig = flame_figure(run)  # a Run: its own step marks
    labels = [row[0] for trace in fig["data"] for row in trace.get("customdata", [])]
    counts = {"forward": 0, "Linear": 0}
    for label in labels:  # a bar per call path and cell of whole steps ("forward ×64")
        name, _, count = label.partition(" ×")
        if name in counts:
            counts[name] += int(count.replace(",", ""))
    assert counts == {"forward": 300, "Linear": 900}, labels
    hover = " ".join(t["hovertemplate"] for t in fig["data"])
    assert "merged by call path" in hover


def test_zoomed_in_each_call_is_its_own_bar_again():
    run = _long_run(300)
    batch = run.snapshot()
    first_step = (0.0, run.step_ns[0] / 1e6)  # one step across 1,600 px: every call is wide
    bars, _, _ = flame_bars(batch, x_range=first_step, marks=run.step_ns)
    inside = bars.start < run.step_ns[0]
    assert inside.sum() == 6
    assert not bars.group[inside].any() and (bars.count[inside] == 1).all()


def test_past_the_limit_the_static_chart_keeps_the_pixel_merge(monkeypatch):
    run = _long_run(200)
    monkeypatch.setattr(flame_module, "READABLE_LIMIT", 100)
    bars, _, _ = flame_bars(run.snapshot(), width_px=960, max_shapes=MAX_BARS)
    assert bars.group is None


def test_call_paths_are_keys_under_their_parents_paths():
    # rows: a(0) > b(1) > c(2); a(3) > b(4); d(5) > b(6); an orphan b at depth 1 (7)
    key = np.array([0, 1, 2, 0, 1, 3, 1, 1])
    depth = np.array([0, 1, 2, 0, 1, 0, 1, 1])
    parent = np.array([-1, 0, 1, -1, 3, -1, 5, -1])
    path, parent_of = call_paths(key, depth, parent, parent >= 0)
    assert path[0] == path[3] and path[1] == path[4] and path[1] != path[6]
    assert path[7] == -1  # its parent is not among the events: never merged
    assert parent_of[path[2]] == path[1] and parent_of[path[1]] == path[0]
    assert parent_of[path[0]] == -1 and parent_of[path[6]] == path[5]


CELLS = """
import { cellEdges } from "%(js)s/src/lod.js";
const cases = JSON.parse(process.argv[2]);
console.log(JSON.stringify(cases.map(([x0, x1, px, ends]) =>
  Array.from(cellEdges(x0, x1, px, ends ? Float64Array.from(ends) : null)).map(String))));
"""


@needs_node
def test_the_cells_are_the_browsers(tmp_path):
    ends = [float(t) for t in np.cumsum(np.random.default_rng(0).integers(50, 150, 400))]
    cases = [
        (0.0, ends[-1], ends[-1] / 960, ends),  # zoomed out: many steps a cell
        (ends[100], ends[140], (ends[140] - ends[100]) / 1600, ends),  # a window of steps
        (ends[10], ends[11], 0.01, ends),  # inside one step
        (0.0, 5000.0, 5000.0 / 960, None),  # no steps: slices of time
        (1234.5, 4321.0, 0.7, [100.0]),  # one step end: slices of time too
    ]
    script = tmp_path / "cells.mjs"
    script.write_text(CELLS % {"js": JS.as_posix()})
    result = subprocess.run(
        [NODE, str(script), json.dumps(cases)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    browser = json.loads(result.stdout)
    for (x0, x1, px, step_ends), theirs in zip(cases, browser, strict=True):
        ours = [str(e) if np.isfinite(e) else ("Infinity" if e > 0 else "-Infinity") for e in
                cell_edges(x0, x1, px, step_ends)]  # fmt: skip
        assert [float(x) for x in ours] == pytest.approx([float(x) for x in theirs])
