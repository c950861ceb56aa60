"""Flame chart view: level of detail, colours, hover text, themes, empty input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from views_fakes import make_batch, mlp_batch

from everyo_lab.views import color_for, flame_figure
from everyo_lab.views.flame.lod import merge_bars


def bars_of(fig):
    """(base, end, lane, events per bar) of every bar in a flame figure."""
    base, end, lane, count = [], [], [], []
    for t in fig["data"]:
        base += t["base"]
        end += [b + x for b, x in zip(t["base"], t["x"])]
        lane += t["y"]
        merged = t["hovertemplate"].startswith("<b>merged")
        count += [row[0] for row in t["customdata"]] if merged else [1] * len(t["base"])
    return np.array(base), np.array(end), np.array(lane), np.array(count)


def assert_covered(batch, fig, lo=None, hi=None):
    """Every (visible) event lies inside a bar on its lane, and bars account for every event."""
    start = batch.start_ns / 1e6
    end = (batch.start_ns + batch.dur_ns) / 1e6
    visible = np.ones(len(start), bool) if lo is None else (end >= lo) & (start <= hi)
    base, bend, lane, count = bars_of(fig)
    assert count.sum() == visible.sum()
    for d in np.unique(batch.depth[visible]):
        on = lane == d
        order = np.argsort(base[on], kind="stable")
        b, e = base[on][order], bend[on][order]
        ev = visible & (batch.depth == d)
        k = np.searchsorted(b, start[ev] + 1e-9, side="right") - 1
        assert (k >= 0).all()
        assert (e[k] >= end[ev] - 1e-6).all(), f"an event at depth {d} is not covered"


SMALL = [
    (0, 1_000_000, 0, "Sequential", "module", ""),
    (10_000, 400_000, 1, "Linear", "module", "0"),
    (420_000, 100_000, 1, "ReLU", "module", "1"),
    (530_000, 400_000, 1, "Linear", "module", "2"),
    (1_100_000, 200_000, 0, "SGD.step", "optimizer", ""),
]


def test_one_bar_per_event_when_all_are_wide():
    batch = make_batch(SMALL)
    fig = flame_figure(batch)
    base, end, lane, count = bars_of(fig)
    assert len(base) == 5 and (count == 1).all()
    assert fig["layout"]["meta"] == {"events": 5, "bars": 5, "merged_events": 0}
    assert_covered(batch, fig)
    linear = next(t for t in fig["data"] if t["name"] == "Linear")
    assert linear["base"] == [0.01, 0.53] and linear["x"] == [0.4, 0.4] and linear["y"] == [1, 1]


def test_layout_zoom_reversed_depth_time_axis():
    layout = flame_figure(make_batch(SMALL))["layout"]
    assert layout["dragmode"] == "zoom"
    assert layout["yaxis"]["autorange"] == "reversed"
    assert layout["xaxis"]["title"]["text"] == "time (ms)"
    assert layout["barmode"] == "overlay"


def test_million_events_are_merged_to_at_most_max_shapes():
    batch = mlp_batch(250_000)  # 1,000,000 events
    fig = flame_figure(batch)
    base, _, _, count = bars_of(fig)
    assert len(base) <= 20_000
    assert fig["layout"]["meta"]["events"] == 1_000_000
    assert count.sum() == 1_000_000
    assert_covered(batch, fig)
    json.dumps(fig)  # plain JSON-ready data


def test_million_events_under_a_tight_budget_and_many_lanes():
    # 64 lanes of events, each a bit wider than a pixel: the budget, not the pixel, decides.
    n = 1_000_000
    depth = np.arange(n) % 64
    start = (np.arange(n) // 64) * 1000
    batch = make_batch([])
    batch.start_ns, batch.dur_ns, batch.depth = start, np.full(n, 900), depth
    batch.tid = np.zeros(n, np.int64)
    batch.kind = np.full(n, "module", dtype=object)
    batch.name = np.where(depth % 2 == 0, "Linear", "ReLU").astype(object)
    batch.path = np.full(n, "", dtype=object)
    batch.self_ns = np.full(n, 900)
    fig = flame_figure(batch, width_px=1600, max_shapes=500)
    base, _, _, count = bars_of(fig)
    assert len(base) <= 500 and count.sum() == n
    assert_covered(batch, fig)


def test_zooming_in_gives_finer_bars():
    batch = mlp_batch(250_000)
    full = flame_figure(batch)
    lo, hi = 1000.0, 1001.0  # one millisecond: 100 forward passes
    zoomed = flame_figure(batch, x_range=(lo, hi))
    base, end, _, count = bars_of(zoomed)
    assert (count == 1).all(), "at this zoom every event is wider than a pixel"
    assert (bars_of(full)[3] > 1).any(), "the whole run merges sub-pixel events"
    assert (end >= lo).all() and (base <= hi).all()
    assert zoomed["layout"]["xaxis"]["range"] == [lo, hi]
    assert_covered(batch, zoomed, lo, hi)


def test_merged_bars_cover_exactly_their_events():
    # 1000 events of 1 us in a row, then a gap, then 1000 more, at 1 px = 10 us: each block
    # becomes one merged bar per pixel column (10 events each), edge to edge.
    events = [(i * 1000, 1000, 0, "ReLU", "module", "1") for i in range(1000)]
    events += [(2_000_000 + i * 1000, 1000, 0, "ReLU", "module", "1") for i in range(1000)]
    start = np.array([e[0] for e in events])
    bars = merge_bars(start, np.full(2000, 1000), np.zeros(2000), np.zeros(2000), width_px=300)
    assert len(bars) == 200 and (bars.count == 10).all() and bars.uniform.all()
    assert (bars.end[:-1] <= bars.start[1:]).all()  # no event in two bars
    assert bars.start[0] == 0 and bars.end[99] == 1_000_000
    assert bars.start[100] == 2_000_000 and bars.end[-1] == 3_000_000
    assert int(bars.busy.sum()) == 2_000_000


def test_merged_bar_hover_says_how_many_events():
    events = [(i * 1000, 500, 0, "Linear" if i % 2 else "ReLU", "module", "") for i in range(1000)]
    fig = flame_figure(make_batch(events), width_px=10)
    (trace,) = fig["data"]
    assert trace["name"] == "merged" and trace["marker"]["color"] == "#9e9e9e"
    assert trace["customdata"][0][:2] == [100, "mixed"]  # 1 ms over 10 px: 100 per column
    assert sum(row[0] for row in trace["customdata"]) == 1000
    assert "merged: %{customdata[0]} events" in trace["hovertemplate"]


def test_colours_stable_per_name_and_distinct_per_class():
    fig = flame_figure(make_batch(SMALL))
    by_name = {t["name"]: t["marker"]["color"] for t in fig["data"]}
    assert by_name["Linear"] == color_for("Linear") and by_name["ReLU"] == color_for("ReLU")
    assert by_name["optimizer"] == color_for("optimizer")  # non-modules: coloured by kind
    classes = [
        "Sequential",
        "Linear",
        "ReLU",
        "Conv2d",
        "LayerNorm",
        "Dropout",
        "Embedding",
        "MultiheadAttention",
        "GELU",
        "Softmax",
        "CrossEntropyLoss",
        "MSELoss",
    ]
    assert len({color_for(c) for c in classes}) == len(classes)
    assert color_for("MyBlock") == color_for("MyBlock") != color_for("MyOtherBlock")


def test_hashed_colours_do_not_depend_on_the_process():
    code = "from everyo_lab.views import color_for; print(color_for('ResidualBlock42'))"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert outs == {color_for("ResidualBlock42") + "\n"}


def test_hover_shows_name_path_duration_self_and_optional_columns():
    batch = make_batch(
        SMALL,
        shapes=["[(32, 4)] -> (32, 16)"] * 5,
        flops=np.array([0, 4096, 512, 2048, 0]),
        mem_bytes=np.array([0, 2048, 0, 256, 0]),
    )
    fig = flame_figure(batch)
    linear = next(t for t in fig["data"] if t["name"] == "Linear")
    tpl = linear["hovertemplate"]
    for word in ("path:", "duration:", "self:", "shapes:", "FLOPs:", "memory:"):
        assert word in tpl
    name, path, start, dur, own, shapes, flops, mem = linear["customdata"][0]
    assert (name, path, shapes) == ("Linear", "0", "[(32, 4)] -> (32, 16)")
    assert (flops, mem) == ("4.1k", "2.05kB")
    assert (start, dur, own) == (0.01, 0.4, 0.4)
    seq = next(t for t in fig["data"] if t["name"] == "Sequential")
    assert seq["customdata"][0][1] == "—" and seq["customdata"][0][4] == pytest.approx(0.1)


def test_hover_omits_columns_that_were_not_recorded():
    tpl = flame_figure(make_batch(SMALL))["data"][0]["hovertemplate"]
    assert "FLOPs" not in tpl and "shapes" not in tpl and "memory" not in tpl


def test_empty_batch_says_no_events():
    fig = flame_figure(make_batch([]))
    assert fig["data"] == []
    assert fig["layout"]["annotations"][0]["text"] == "no events"


def test_zoom_window_without_events_is_empty_but_valid():
    fig = flame_figure(make_batch(SMALL), x_range=(50.0, 60.0))
    assert fig["data"] == [] and fig["layout"]["meta"]["bars"] == 0


def test_threads_get_their_own_bands():
    events = SMALL + [(0, 500_000, 0, "DataLoader.next", "data", "", 7)]
    fig = flame_figure(make_batch(events, thread_names={0: "MainThread", 7: "loader"}))
    assert fig["layout"]["yaxis"]["ticktext"] == ["MainThread", "loader"]
    data = next(t for t in fig["data"] if t["name"] == "data")
    assert data["y"] == [fig["layout"]["yaxis"]["tickvals"][1]]


def test_dark_theme_and_bad_theme():
    fig = flame_figure(make_batch(SMALL), theme="dark")
    assert fig["layout"]["paper_bgcolor"] == "rgb(17,17,17)"
    with pytest.raises(ValueError, match="theme"):
        flame_figure(make_batch(SMALL), theme="pink")


def test_figure_is_valid_plotly():
    go = pytest.importorskip("plotly.graph_objects")
    go.Figure(flame_figure(make_batch(SMALL, flops=np.arange(5))))
    go.Figure(flame_figure(mlp_batch(2000), theme="dark"))


def test_million_events_of_a_real_run():
    from views_runs import synthetic_run

    run = synthetic_run(250_000)  # a profiler Run holding 1,000,000 events
    fig = flame_figure(run)
    base, _, _, count = bars_of(fig)
    assert len(base) <= 20_000 and count.sum() == 1_000_000
    assert_covered(run.snapshot(), fig)
    zoomed = flame_figure(run, x_range=(10.0, 10.2))
    assert (bars_of(zoomed)[3] == 1).all()
    assert_covered(run.snapshot(), zoomed, 10.0, 10.2)


def test_hover_of_a_profiled_model_with_ops():
    from views_runs import model_run

    run = model_run(record_ops=True)
    fig = flame_figure(run)
    linear = next(t for t in fig["data"] if t["name"] == "Linear")
    assert "FLOPs:" in linear["hovertemplate"] and "shapes:" in linear["hovertemplate"]
    first = linear["customdata"][0]
    assert first[:2] == ["Linear", "0"] and "(32, 4)" in first[5]
    # a module's FLOPs are its ops' (32x4 @ 4x16 matmul + bias: about 4k)
    assert first[6].endswith("k") and float(first[6][:-1]) > 1
    assert {"Sequential", "Linear", "ReLU", "user"} <= {t["name"] for t in fig["data"]}
    go = pytest.importorskip("plotly.graph_objects")
    go.Figure(fig)


def test_merged_bars_stay_within_a_pixel_column_and_name_their_main_colour():
    # 1,000 events of 3 colours, each 2 or 4 us, back to back: one long run before
    n = 1000
    start = np.arange(n, dtype=np.int64) * 10_000
    code = np.arange(n) % 3
    dur = np.where(code == 1, 4_000, 2_000).astype(np.int64)
    bars = merge_bars(start, dur, np.zeros(n, np.int64), code, width_px=100, max_shapes=20000)
    pixel = bars.pixel_ns
    assert 50 <= len(bars) <= 100  # about one bar per pixel column, not one for everything
    assert int(bars.count.sum()) == n
    assert ((bars.end - bars.start) <= 2 * pixel).all()
    assert not bars.uniform.any() and (bars.dom == 1).all()  # code 1 has the most time
