"""The memory view: counter track to chart points, the peak and its module, top allocators, the
'allocated' column only with profile_memory, and the static chart on the flame chart's scale."""

from __future__ import annotations

import numpy as np
import pytest
from views_fakes import make_batch
from views_runs import FakeClock, model_run

import everyo as eo
from everyo.profiler import profile
from everyo.profiler.storage.run import RunRegistry
from everyo_lab.views import build_report, render_html, render_text
from everyo_lab.views.memory.memory_view import memory_html, memory_view, peak_owner, top_allocators


def memory_run(*, big=64, iterations=3):
    model = eo.Sequential(eo.Linear(4, big, seed=0), eo.ReLU(), eo.Linear(big, 2, seed=1))
    with profile(
        label="mem", profile_memory=True, clock=FakeClock(), registry=RunRegistry()
    ) as prof:
        for _ in range(iterations):
            model(eo.zeros(16, 4))
    return prof.run


def test_memory_view_reads_the_counter_track_and_names_the_peak():
    run = memory_run()
    view = memory_view(run)
    t, v = run.counters["host tensor bytes"]
    assert view["track"] == "host tensor bytes"
    assert view["t_ms"] == pytest.approx((t / 1e6).tolist(), abs=1e-4)
    assert view["bytes"] == v.tolist()
    peak = view["peak"]
    assert peak["bytes"] == int(v.max()) == run.memory["host_peak_bytes"]
    # at the peak, the innermost module running is a layer, not the Sequential around it
    assert peak["kind"] == "module" and peak["name"] in ("Linear", "ReLU")
    assert peak["label"].endswith("]")  # "Linear [2]": the class with its path


def test_no_memory_view_without_profile_memory():
    assert memory_view(model_run()) is None
    report = build_report(model_run())
    assert report.memory is None
    assert "allocated" not in [c.header for c in report.columns]
    assert "allocated" not in render_text(model_run())


def test_allocated_column_and_header_line_only_with_memory():
    run = memory_run()
    report = build_report(run)
    assert "allocated" in [c.header for c in report.columns]
    assert report.memory["peak"]["bytes"] > 0
    text = render_text(run, report=report)
    assert "memory (host tensor bytes): peak" in text and " kB" in text
    d = report.to_dict()
    assert d["memory"]["top"] and "mem_bytes" in d["rows"][0]


def test_top_allocators_count_own_allocations_of_modules():
    run = memory_run(big=256)
    top = top_allocators(run.snapshot())
    labels = [t["label"] for t in top]
    # Linear [0] returns 16 x 256 floats per call, as ReLU [1]; Linear [2] only 16 x 2; the
    # Sequential allocates nothing of its own (its output is Linear [2]'s)
    assert "Sequential" not in labels
    assert labels[-1] == "Linear [2]" and top[0]["bytes"] == 3 * 16 * 256 * 4
    assert all(t["calls"] == 3 for t in top)


def test_peak_owner_prefers_the_innermost_module():
    batch = make_batch(
        [
            (0, 100, 0, "Sequential", "module", ""),
            (10, 40, 1, "Linear", "module", "0"),
            (20, 10, 2, "matmul", "op", ""),
            (60, 30, 1, "ReLU", "module", "1"),
        ]
    )
    batch.keys = [
        (k, n, p) for k, n, p in zip(batch.kind.tolist(), batch.name.tolist(), batch.path.tolist())
    ]
    batch.key = np.arange(4)
    assert peak_owner(batch, 25)["label"] == "Linear [0]"  # the op is inside it: not a module
    assert peak_owner(batch, 70)["label"] == "ReLU [1]"
    assert peak_owner(batch, 55)["label"] == "Sequential"
    assert peak_owner(batch, 500)["label"] is None


def test_long_tracks_are_thinned_keeping_every_extreme():
    class Run:
        counters = {"host tensor bytes": (np.arange(10_000) * 1000, np.zeros(10_000, int))}

        def snapshot(self):
            return make_batch([])

    run = Run()
    values = run.counters["host tensor bytes"][1]
    values[:] = np.sin(np.arange(10_000) / 50) * 1000 + 2000
    values[7777] = 99_999
    view = memory_view(run, max_points=400)
    assert len(view["t_ms"]) <= 402
    assert max(view["bytes"]) == 99_999 and view["peak"]["t_ms"] == 7.777
    assert min(view["bytes"]) == int(values.min())
    assert view["t_ms"] == sorted(view["t_ms"])


def test_static_html_draws_memory_under_the_flame_chart_on_its_scale():
    run = memory_run()
    html = render_html(run)
    assert "<svg" not in html  # an untrusted notebook's sanitiser drops it: <div>s instead
    assert html.count('class="everyo-static-flame"') == 1
    assert html.count('class="everyo-static-memory"') == 1 and "live tensor bytes over time" in html
    assert html.index("flame chart") < html.index("live tensor bytes")
    view = memory_view(run)
    chart = memory_html(view, span_ns=view["t_ms"][-1] * 2e6)
    assert "peak" in chart and "<svg" not in chart
    assert memory_html(None, span_ns=1) == ""


def test_the_memory_charts_columns_keep_the_peak_however_short():
    """A column is as high as the most bytes live in its stretch: a peak between two column
    edges still gives its column the full height, and a level held across columns fills them."""
    import re

    view = {
        "track": "host",
        "t_ms": [0.0, 1.0, 1.0001, 9.0],
        "bytes": [100, 5000, 100, 0],
        "peak": {"bytes": 5000, "t_ms": 1.0, "label": "Linear [0]"},
        "top": [],
    }
    chart = memory_html(view, span_ns=10e6, columns=100)
    heights = [int(h) for h in re.findall(r"height:(\d+)px;background-color", chart)]
    assert max(heights) == 90  # the 0.1-us peak: a whole column at full height
    titles = re.findall(r'title="([^"]+) live from', chart)
    assert "5.0 kB" in titles and "100 B" in titles
    lefts = [float(x) for x in re.findall(r"left:([\d.]+)%;top:\d+px;width:[\d.]+%", chart)]
    assert lefts == sorted(lefts) and lefts[0] == 0.0
    assert "peak 5.0 kB at 1.000 ms · Linear [0]" in chart


def test_every_view_of_the_memory_chart_spells_the_peak_once():
    from everyo_lab.views.memory.memory_view import memory_figure, memory_text, peak_text

    view = memory_view(memory_run())
    assert view["peak_text"] == peak_text(view["peak"])  # what the widget shows as it is
    assert view["peak_text"] in memory_text(view)
    assert view["peak_text"] in memory_html(view, span_ns=1e6)
    figure = memory_figure(view)
    assert figure["layout"]["annotations"][0]["text"] == view["peak_text"]


def test_to_html_page_has_the_memory_chart_zooming_with_the_flame_chart(tmp_path):
    import json

    import everyo_lab

    page = everyo_lab.to_html(memory_run(), tmp_path / "mem.html").read_text()
    figures = json.loads(page.split('id="everyo-figures">')[1].split("</script>")[0])
    assert set(figures) == {"flame", "memory", "icicle"}
    flame, memory = figures["flame"]["layout"], figures["memory"]["layout"]
    assert flame["xaxis"]["range"] == memory["xaxis"]["range"]
    assert (flame["margin"]["l"], flame["margin"]["r"]) == (
        memory["margin"]["l"],
        memory["margin"]["r"],
    )
    assert '["flame", "memory"]' in page and "plotly_relayout" in page
    assert "peak" in memory["annotations"][0]["text"]
    plain = everyo_lab.to_html(model_run(), tmp_path / "plain.html").read_text()
    assert '"memory"' not in plain.split('id="everyo-figures">')[1]
