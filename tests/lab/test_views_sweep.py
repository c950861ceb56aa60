"""Batch-size sweep chart."""

from __future__ import annotations

import pytest

import everyo as eo
from everyo.bench import sweep_batch_sizes
from everyo_lab.views import sweep_figure


@pytest.fixture(scope="module")
def result():
    model = eo.Sequential(eo.Linear(8, 32, seed=0), eo.ReLU(), eo.Linear(32, 2, seed=1))
    return sweep_batch_sizes(
        model,
        lambda b: eo.zeros(b, 8),
        [2, 8, 32, 4096],
        warmup=0,
        repeat=2,
        memory_limit=200_000,  # the 4096 point needs more: it is "oom"
        progress=False,
        record_environment=False,
    )


def test_sweep_figure_plots_throughput_latency_and_the_recommendation(result):
    fig = sweep_figure(result)
    by_name = {t["name"].split(":")[0]: t for t in fig["data"]}
    ok = [r for r in result.rows if r.status == "ok"]
    assert by_name["throughput (samples/s)"]["x"] == [r.batch_size for r in ok]
    assert by_name["throughput (samples/s)"]["y"] == [r.throughput for r in ok]
    assert by_name["mean latency (ms)"]["yaxis"] == "y2"
    assert by_name["recommended"]["x"] == [result.recommended.batch_size]
    assert fig["layout"]["xaxis"]["type"] == "log"


def test_sweep_figure_marks_points_that_did_not_fit(result):
    bad = [r for r in result.rows if r.status != "ok"]
    assert [r.batch_size for r in bad] == [4096]
    marks = next(t for t in sweep_figure(result)["data"] if t["name"] == "not measured")
    assert marks["x"] == [4096] and marks["text"] == ["oom"]


def test_sweep_figure_is_valid_plotly(result):
    go = pytest.importorskip("plotly.graph_objects")
    go.Figure(sweep_figure(result, theme="dark"))
