"""The comparison view: diff order, verdicts on planted differences, too little data, empty and
failed runs, and its static renderings. Runs are made with a fake clock (no wall-clock tests)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from views_runs import FakeClock, empty_run, model_run, regions_run

from everyo.errors import EveryOProfilerError
from everyo.profiler import profile, record_function
from everyo.profiler.analysis import run_analysis as analysis
from everyo.profiler.storage.run import RunRegistry
from everyo_lab.views.compare.compare_static import render_compare_html, render_compare_text
from everyo_lab.views.compare.compare_view import (
    MIN_CALLS,
    build_comparison,
    call_verdict,
    speedup_text,
)


class ScriptedClock:
    """Returns the next planted time on each read: durations are exactly what a test says."""

    def __init__(self):
        self.now = 0

    def __call__(self) -> int:
        return self.now


def planted_run(label, durations: dict[str, list[int]], *, seed=0, noise=0.02):
    """A run whose region ``name`` is called once per entry of ``durations[name]`` (ns), each
    with multiplicative noise of about ``noise``, regions one after another."""
    rng = np.random.default_rng(seed)
    clock = ScriptedClock()
    with profile(label=label, clock=clock, registry=RunRegistry()) as prof:
        for name, durs in durations.items():
            for d in durs:
                with record_function(name):
                    clock.now += int(d * rng.lognormal(0.0, noise))
                clock.now += 100
    return prof.run


def test_diff_rows_are_sorted_by_absolute_change_of_total_time():
    a = planted_run("a", {"slow": [1000] * 10, "mid": [500] * 10, "same": [300] * 10})
    b = planted_run("b", {"slow": [200] * 10, "mid": [900] * 10, "same": [300] * 10}, seed=1)
    c = build_comparison(a, b)
    assert [r["name"] for r in c.rows] == ["slow", "mid", "same"]  # |-8000| > |+4000| > ~0
    deltas = [abs(r["delta_ms"]) for r in c.rows]
    assert deltas == sorted(deltas, reverse=True)
    slow = c.rows[0]
    assert slow["calls_a"] == slow["calls_b"] == 10
    assert slow["per_call_ms_a"] == pytest.approx(0.001, rel=0.1)
    assert slow["ratio"] == pytest.approx(0.2, rel=0.1)
    # the same analysis as the text diff: the same groups, the same order
    assert [r["name"] for r in analysis.diff(a, b)] == [r["name"] for r in c.rows]


def test_verdicts_find_a_planted_change_and_not_noise():
    n = 30
    a = planted_run("a", {"fast_now": [1000] * n, "slow_now": [1000] * n, "same": [1000] * n})
    b = planted_run(
        "b", {"fast_now": [700] * n, "slow_now": [1300] * n, "same": [1000] * n}, seed=7
    )
    verdicts = {r["name"]: r["verdict"] for r in build_comparison(a, b).rows}
    assert verdicts == {"fast_now": "faster", "slow_now": "slower", "same": "within noise"}
    row = next(r for r in build_comparison(a, b).rows if r["name"] == "fast_now")
    assert row["ci_low"] > 1 and row["speedup"] == pytest.approx(1000 / 700, rel=0.05)
    assert "speed-up" in row["why"]


def test_an_unchanged_layer_beside_a_big_change_is_not_marked_faster_or_slower():
    """Lab 01: the vectorised RowScale got 25x faster, and the untouched ReLU around it moved by
    a few per cent (caches, the allocator): beyond noise, but not a change to report. A row too
    small to matter (under RELEVANT_SHARE of the run) is not one either, however it moved."""
    from everyo_lab.views.compare.compare_view import RELEVANT_PER_CALL, RELEVANT_SHARE

    n = 30
    a = planted_run("a", {"RowScale": [20_000] * n, "ReLU": [1000] * n, "tiny": [100] * n})
    b = planted_run(
        "b", {"RowScale": [800] * n, "ReLU": [1030] * n, "tiny": [150] * n}, seed=1, noise=0.002
    )
    rows = {r["name"]: r for r in build_comparison(a, b).rows}
    assert rows["RowScale"]["verdict"] == "faster"
    relu = rows["ReLU"]
    assert call_verdict(*_durations(a, b, "ReLU"))["verdict"] == "slower"  # beyond noise
    assert max(relu["speedup"], 1 / relu["speedup"]) - 1 < RELEVANT_PER_CALL
    assert relu["verdict"] == "negligible change"
    assert f"under {RELEVANT_PER_CALL:.0%} per call" in relu["why"]
    tiny = rows["tiny"]
    assert max(tiny["speedup"], 1 / tiny["speedup"]) - 1 > RELEVANT_PER_CALL  # 1.5x slower
    assert abs(tiny["delta_ms"]) < RELEVANT_SHARE * max(a.wall_ns, b.wall_ns) / 1e6
    assert tiny["verdict"] == "negligible change" and "of the run's wall time" in tiny["why"]


def _durations(a, b, name):
    return (analysis.call_durations(r, "name")[("user", name)] for r in (a, b))


def test_the_verdict_is_everyo_bench_compare_on_per_call_durations():
    from everyo.bench import compare

    rng = np.random.default_rng(3)
    a, b = rng.lognormal(np.log(1000), 0.3, 8), rng.lognormal(np.log(900), 0.3, 8)
    expected = compare(a / 1e9, b / 1e9)
    got = call_verdict(a, b)
    assert got["speedup"] == pytest.approx(expected.speedup)
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((expected.ci_low, expected.ci_high))
    want = "within noise" if expected.verdict == "no significant change" else expected.verdict
    assert got["verdict"] == want


def test_too_little_data_and_rows_of_one_side():
    a = planted_run("a", {"once": [1000], "twice": [1000, 1000], "gone": [500] * 5})
    b = planted_run("b", {"once": [100], "twice": [100, 100], "new": [500] * 5})
    rows = {r["name"]: r for r in build_comparison(a, b).rows}
    assert rows["once"]["verdict"] == "too little data"
    assert rows["twice"]["verdict"] == "too little data"
    assert f"needs {MIN_CALLS} or more" in rows["once"]["why"]
    assert rows["once"]["speedup"] is None
    assert rows["gone"]["verdict"] == "only in A" and rows["gone"]["calls_b"] == 0
    assert rows["new"]["verdict"] == "only in B" and rows["new"]["ratio"] is None


def test_zero_duration_calls_are_judged_not_rejected():
    # below the clock's resolution: 0 ns durations must not make the ratio rule raise
    assert call_verdict([0, 0, 0, 0], [0, 0, 0, 0])["verdict"] == "within noise"


def test_header_wall_times_speedup_and_steps():
    a = model_run(label="before", iterations=6, clock_step=2000)
    b = model_run(label="after", iterations=6, clock_step=1000)
    c = build_comparison(a, b)
    assert c.a["label"] == "before" and c.b["label"] == "after"
    assert c.speedup == pytest.approx(c.a["wall_ms"] / c.b["wall_ms"])
    assert c.speedup > 1.5 and "faster" in c.headline
    assert speedup_text(0.5) == "2.00× slower" and speedup_text(1.0) == "same speed"
    assert c.steps is None  # no training steps in either run


def test_empty_runs_compare_to_nothing_and_say_so():
    c = build_comparison(empty_run(label="e1"), empty_run(label="e2"))
    assert c.rows == []
    assert any("recorded no events" in n for n in c.notes)
    assert c.to_dict()["rows"] == []
    text = render_compare_text(c)
    assert "e1" in text and "recorded no events" in text
    html = render_compare_html(c)
    assert "no events" in html and "<table" not in html


def test_a_failed_run_is_compared_up_to_its_failure():
    failed = regions_run(label="broken", iterations=5, fail=ValueError("bad batch"))
    ok = regions_run(label="fixed", iterations=5)
    c = build_comparison(failed, ok)
    assert c.a["status"] == "failed" and "bad batch" in c.a["error"]
    assert any("run A (broken) failed" in n for n in c.notes)
    assert {r["name"] for r in c.rows} == {"step", "forward", "backward"}
    calls = {r["name"]: (r["calls_a"], r["calls_b"]) for r in c.rows}
    assert calls["step"] == (1, 5)  # the first iteration raised


def test_grouping_by_path_and_shape():
    a = model_run(label="a", iterations=4)
    b = model_run(label="b", iterations=4, clock_step=500)
    by_path = build_comparison(a, b, group_by="path")
    assert any(r["path"] == "0" for r in by_path.rows)
    by_shape = build_comparison(a, b, group_by="shape")
    assert all("shapes" in r for r in by_shape.rows)
    assert any(r["shapes"] for r in by_shape.rows)
    with pytest.raises(EveryOProfilerError):
        build_comparison(a, b, group_by="colour")


def test_per_step_verdict_when_both_runs_have_steps():
    from views_runs import train_run

    c = build_comparison(train_run(label="a", iterations=5), train_run(label="b", iterations=5))
    assert c.steps is not None and c.steps["steps_a"] == c.steps["steps_b"] == 5
    # the fake clock ticks the same in both runs: the steps are the same
    assert c.steps["verdict"] in ("within noise",)


def test_static_renderings_hold_both_flame_charts_on_one_scale_and_the_table():
    a = model_run(label="before", iterations=4, clock_step=2000)
    b = model_run(label="after", iterations=4, clock_step=1000)
    c = build_comparison(a, b)
    html = render_compare_html(c)
    assert html.count('class="everyo-static-flame"') == 2 and "<svg" not in html
    assert "A · before" in html and "B · after" in html
    assert 'class="everyo-diff"' in html and "verdict" in html
    assert "<script" not in html  # survives sanitisers
    # one time scale: both axes have the same ticks (to the longer run's end)
    parts = html.split('class="everyo-static-flame-axis"')[1:]
    axes = [part.split("</div></div>")[0] for part in parts]
    ticks = [re.findall(r"left:([\d.]+)%;top:0[^>]*><span[^>]*>([\d.e+-]+ ms)<", s) for s in axes]
    assert ticks[0] and ticks[0] == ticks[1]
    text = render_compare_text(c)
    assert text.splitlines()[0].startswith("everyo comparison · before")
    assert "verdict" in text


def test_comparison_of_batches_and_clock():
    a = model_run(label="a", iterations=3)
    c = build_comparison(a.snapshot(), a.snapshot())
    assert c.speedup == pytest.approx(1.0)
    assert all(r["delta_ms"] == 0 for r in c.rows)
    assert FakeClock(1000)() == 1000


def test_one_slow_call_does_not_flip_the_ratio_of_a_faster_group():
    a = planted_run("a", {"relu": [1000] * 20})
    b = planted_run("b", {"relu": [100] * 19 + [100_000]}, seed=2)  # e.g. a slow first call
    (row,) = build_comparison(a, b).rows
    assert row["per_call_ms_b"] > row["per_call_ms_a"]  # the mean says slower...
    assert row["ratio"] == pytest.approx(0.1, rel=0.1)  # ...the median, as the verdict, faster
    assert row["verdict"] == "faster"


BUSY = {
    "verdict": "busy",
    "reason": "other processes used 1.0 of 2 cores; 1 BLAS thread",
    "others_cores": 1.0,
    "usable_cores": 2,
}
CONTENDED = {
    "verdict": "contended",
    "reason": "other processes used 1.8 of 2 cores; 2 BLAS threads",
    "others_cores": 1.8,
    "usable_cores": 2,
    "blas_threads": 2,
}


def test_the_view_shows_each_sides_machine_when_it_was_not_quiet():
    a = planted_run("a", {"x": [1000] * 30})
    b = planted_run("b", {"x": [500] * 30}, seed=1)
    a.machine, b.machine = dict(BUSY), dict(BUSY)
    c = build_comparison(a, b)
    assert c.rows[0]["verdict"] == "faster"  # busy alike: comparable...
    expected = [f"run {n} ({n.lower()}): Machine: busy (other processes used 1.0" for n in "AB"]
    for line in expected:  # ...but not a quiet machine's times: said where the figures are
        assert any(note.startswith(line) for note in c.notes), c.notes
    assert all(line in render_compare_text(c) for line in expected)
    b.machine = dict(CONTENDED)
    c = build_comparison(a, b)
    assert (
        c.rows[0]["verdict"] == c.headline.split(": ", 1)[1] == "inconclusive: the machine was busy"
    )
    assert c.notes[0].startswith("inconclusive: the machine was busy: the run B (b)")
    assert c.notes[1].startswith("run A (a): Machine: busy")  # B's reason is in the caveat
    assert sum("1.8 of 2 cores" in note for note in c.notes) == 1
