"""Batch-size sweep chart."""

from __future__ import annotations

import re

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
    assert by_name["median latency (ms)"]["yaxis"] == "y2"  # the latency every view shows
    assert by_name["median latency (ms)"]["y"] == [r.median_ms for r in result.rows if r.ok]
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


# -- the sweep report: pure, from planted rows ----------------------------------------------------
from everyo.bench import SweepRow  # noqa: E402
from everyo_lab.views.sweep.sweep_charts import sweep_charts  # noqa: E402
from everyo_lab.views.sweep.sweep_report import (  # noqa: E402
    build_sweep_report,
    failed_marks,
    progress_text,
    recommendation,
    sweep_points,
)
from everyo_lab.views.sweep.sweep_static import (  # noqa: E402
    STATIC_CLASS,
    chart_html,
    render_sweep_html,
    render_sweep_text,
)


def _ok(batch, throughput, *, median=1.0, p5=0.9, p95=1.5, peak=1000, gpu=None):
    return SweepRow(
        batch, "ok", n=5, mean_ms=median, median_ms=median, p5_ms=p5, p95_ms=p95,
        throughput=throughput, peak_memory=peak, gpu_memory=gpu,
    )  # fmt: skip


ROWS = [
    _ok(8, 400.0, median=20.0, p5=19.0, p95=25.0, peak=8_000),
    _ok(1, 100.0, median=10.0, p5=9.0, p95=12.0, peak=1_000),
    _ok(32, 990.0, median=32.3, p5=30.0, p95=40.0, peak=32_000),
    _ok(64, 1000.0, median=64.0, p5=60.0, p95=70.0, peak=64_000),
    SweepRow(128, "oom", "MemoryLimitExceeded: peak 1.00 MiB exceeds memory_limit 0.10 MiB"),
    SweepRow(256, "skipped", "larger than 128, which ran out of memory"),
    SweepRow(16, "error", "ValueError: shapes do not match"),
]


def test_points_are_the_measured_rows_sorted_by_batch_size():
    pts = sweep_points(ROWS)
    assert pts["batch_size"] == [1, 8, 32, 64]
    assert pts["throughput"] == [100.0, 400.0, 990.0, 1000.0]
    assert pts["memory"] == [1_000, 8_000, 32_000, 64_000]


def test_latency_band_is_p5_to_p95_around_the_median():
    pts = sweep_points(ROWS)
    assert pts["median_ms"] == [10.0, 20.0, 32.3, 64.0]
    assert pts["p5_ms"] == [9.0, 19.0, 30.0, 60.0] and pts["p95_ms"] == [12.0, 25.0, 40.0, 70.0]
    # a row without percentiles (an older result) collapses its band to the median
    old = SweepRow(4, "ok", n=1, median_ms=5.0, throughput=800.0, peak_memory=1)
    assert sweep_points([old])["p5_ms"] == [5.0] and sweep_points([old])["p95_ms"] == [5.0]


def test_gpu_memory_wins_over_host_memory_when_present():
    pts = sweep_points([_ok(1, 1.0, peak=10, gpu=500), _ok(2, 2.0, peak=20, gpu=900)])
    assert pts["memory"] == [500, 900]
    assert build_sweep_report([_ok(1, 1.0, gpu=5)]).memory_kind == "GPU"


def test_marks_name_oom_error_and_skipped_points_with_their_message():
    marks = failed_marks(ROWS)
    assert [(m["batch_size"], m["status"], m["label"]) for m in marks] == [
        (16, "error", "error"),
        (128, "oom", "OOM"),
        (256, "skipped", "skipped"),
    ]
    assert "exceeds memory_limit" in marks[1]["message"]
    assert marks[2]["message"] == "larger than 128, which ran out of memory"


def test_recommendation_is_the_smallest_within_five_percent_and_says_why():
    rec = recommendation(ROWS)
    assert (rec["recommended"], rec["best"], rec["largest_fit"]) == (32, 64, 64)
    assert rec["text"] == (
        "Batch size 32 is recommended: it is the smallest within 5 % of the best throughput "
        "(990 vs 1,000 samples/s at 64), so it needs less memory and has lower latency; "
        "64 is the largest that fits."
    )


def test_recommendation_when_the_best_is_also_the_largest_and_while_running():
    rows = [_ok(1, 10.0), _ok(2, 30.0)]
    assert recommendation(rows)["text"] == (
        "Batch size 2 is recommended: it has the best throughput (30 samples/s); "
        "it is also the largest that fits."
    )
    assert "best throughput so far" in recommendation(rows, final=False)["text"]


def test_recommendation_without_a_measured_point():
    assert recommendation([])["text"] == "No point measured yet."
    failed = recommendation([SweepRow(1, "oom", "MemoryError: no")])
    assert failed["recommended"] is None and "nothing to recommend" in failed["text"]


def test_progress_text():
    assert progress_text(4, 9, 64, 2.14) == "point 4 of 9, batch 64, 2.1 s"
    assert progress_text(3, None, 4) == "point 3, batch 4, 0.0 s"  # "auto": total unknown


def test_report_progress_line_follows_the_status():
    running = build_sweep_report(ROWS[:2], status="running", progress=dict(
        index=3, total=7, batch_size=32, elapsed_s=0.5))  # fmt: skip
    assert running.progress_line == "point 3 of 7, batch 32, 0.5 s"
    assert "so far" in running.recommendation["text"]
    stopped = build_sweep_report(ROWS[:2], status="stopped", progress={"index": 3})
    assert stopped.progress is None
    assert stopped.progress_line == "stopped after 2 points; the other sizes were not measured"
    assert build_sweep_report([], status="ready").progress_line == "not started"
    failed = build_sweep_report(ROWS[:1], status="failed", error="RuntimeError: x")
    assert failed.progress_line == "failed after 1 point: RuntimeError: x"
    with pytest.raises(ValueError, match="status must be one of"):
        build_sweep_report(ROWS, status="done")


def test_report_is_plain_json_and_keeps_every_row_for_the_table():
    import json

    report = build_sweep_report(ROWS, title="t", mode="train", memory_limit=100_000)
    data = json.loads(json.dumps(report.to_dict()))
    assert [r["batch_size"] for r in data["rows"]] == [1, 8, 16, 32, 64, 128, 256]
    assert data["mode"] == "train" and data["memory_limit"] == 100_000


def test_charts_draw_points_band_marks_and_the_recommendation():
    charts = sweep_charts(build_sweep_report(ROWS, memory_limit=100_000))
    assert set(charts) == {"throughput", "latency", "memory"}
    line = charts["throughput"]["data"][0]
    assert line["x"] == [1, 8, 32, 64] and line["y"] == [100.0, 400.0, 990.0, 1000.0]
    star = charts["throughput"]["data"][1]
    assert star["x"] == [32] and star["marker"]["symbol"] == "star"
    upper, lower, median = charts["latency"]["data"][:3]
    assert upper["y"] == [12.0, 25.0, 40.0, 70.0] and lower["fill"] == "tonexty"
    assert median["y"] == [10.0, 20.0, 32.3, 64.0]
    for fig in charts.values():
        marks = fig["data"][-1]
        assert marks["x"] == [16, 128, 256] and marks["y"] == [0, 0, 0]
        assert "exceeds memory_limit" in marks["customdata"][1]
        assert fig["layout"]["xaxis"]["type"] == "log"
        lines = {s["x0"] for s in fig["layout"]["shapes"] if s["yref"] == "paper"}
        assert lines == {32, 64}  # recommended and largest fit
    limit = [s for s in charts["memory"]["layout"]["shapes"] if s["yref"] == "y"]
    assert limit and limit[0]["y0"] == pytest.approx(100_000 / 2**20)


def test_charts_are_valid_plotly():
    go = pytest.importorskip("plotly.graph_objects")
    for fig in sweep_charts(build_sweep_report(ROWS), theme="dark").values():
        go.Figure(fig)
    for fig in sweep_charts(build_sweep_report([], status="ready")).values():
        go.Figure(fig)


def test_static_html_has_three_sanitiser_proof_charts_the_table_and_the_sentence():
    html = render_sweep_html(build_sweep_report(ROWS, title="Sweep <b>"))
    assert html.startswith(f'<div class="{STATIC_CLASS}"')
    assert html.count('class="everyo-sweep-chart"') == 3 and "<table" in html
    assert "<svg" not in html and "<script" not in html
    assert "Sweep &lt;b&gt;" in html  # escaped
    assert "Batch size 32 is recommended" in html
    assert "shapes do not match" in html and "OOM" in html
    chart = chart_html(build_sweep_report(ROWS), "latency")
    assert re.search(r'title="batch 32: p5 [\d.]+ ms, p95 [\d.]+ ms"', chart)  # the band
    assert chart.count('class="everyo-sweep-point"') == 4  # the points measured
    with pytest.raises(ValueError):
        chart_html(build_sweep_report(ROWS), "flops")


def test_static_html_of_a_sweep_not_started_has_no_charts():
    html = render_sweep_html(build_sweep_report([], status="ready"))
    assert "everyo-sweep-chart" not in html and "not started" in html


def test_text_rendering_lists_every_point_and_the_recommendation():
    text = render_sweep_text(build_sweep_report(ROWS, title="T"))
    lines = text.splitlines()
    assert lines[0] == "T (inference, completed): 7 points measured"
    assert any(line.split()[:2] == ["32", "ok"] and "recommended" in line for line in lines)
    assert any(line.split()[:2] == ["128", "oom"] for line in lines)
    assert lines[-1].startswith("Batch size 32 is recommended")


def test_sweep_views_are_exported_and_loaded_on_first_use():
    import subprocess
    import sys

    import everyo_lab.views as views

    assert views.build_sweep_report is build_sweep_report and views.sweep_charts is sweep_charts
    assert views.render_sweep_html is render_sweep_html
    code = "import sys, everyo_lab.views; print('everyo.bench' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # %load_ext imports the views: keep it quick


def test_sweep_figure_rings_the_points_it_cannot_trust_and_says_why():
    from dataclasses import replace

    from everyo.bench import SweepResult
    from everyo.bench.sweep_point import row_from_times

    rows = [row_from_times(b, [1e-4 * (1 + b / 64)] * 5) for b in (8, 16, 32, 64)]
    rows[1] = replace(
        rows[1],
        verdict="contended",
        machine={"verdict": "contended", "reason": "other processes used 1.8 of 2 cores"},
    )
    rows[2] = replace(rows[2], reliable=False, note="its re-measured rounds disagreed")
    fig = sweep_figure(SweepResult(rows=rows))
    ring = next(t for t in fig["data"] if t["name"] == "not trusted")
    assert ring["x"] == [16, 32] and ring["text"] == ["contended", "unreliable"]
    hover = [text.replace("<br>", " ") for text in ring["customdata"]]
    assert "contended machine (other processes used 1.8 of 2 cores)" in hover[0]
    assert "its re-measured rounds disagreed" in hover[1]
    # a sweep whose points can all be trusted has no ring
    assert "not trusted" not in [
        t["name"] for t in sweep_figure(SweepResult(rows=rows[:1]))["data"]
    ]
    # the point itself says why on hover, and a trusted point measured on a busy machine says so
    rows[3] = replace(rows[3], verdict="busy", machine={"verdict": "busy", "reason": "1.0 of 2"})
    line = sweep_figure(SweepResult(rows=rows))["data"][0]
    assert "%{text}" in line["hovertemplate"]
    assert line["text"][0] == "" and line["text"][3] == "<br>machine: busy"
    assert line["text"][1].startswith("<br>contended: ")
