"""Sweep points that break from their neighbours: found, re-measured interleaved, flagged; the
recommendation never rests on an untrusted point. Fake clocks and fake machine states only."""

from __future__ import annotations

from dataclasses import replace

import pytest
from bench_fakes import FakeClock

from everyo.bench import SweepResult, SweepRow, sweep_batch_sizes
from everyo.bench.sweep_check import MAX_REMEASURED, recheck, suspects
from everyo.bench.sweep_point import row_from_times
from everyo.machine_state import MachineState
from everyo_lab.views.sweep.sweep_charts import sweep_charts
from everyo_lab.views.sweep.sweep_report import build_sweep_report
from everyo_lab.views.sweep.sweep_static import chart_html, render_sweep_text

SIZES = [8, 16, 32, 64, 128, 256, 512]


class QuietWatch:
    """A machine watch that always reads a quiet machine: these tests are about the sweep's
    logic, not about the load of the machine that runs them."""

    def __init__(self, **kwargs):
        pass

    def start(self):
        return self

    def stop(self):
        return MachineState("quiet", "other processes used 0.0 of 2 cores; 1 BLAS thread")


@pytest.fixture(autouse=True)
def _quiet_machine(monkeypatch):
    for module in ("sweep_check", "sweep_point", "sweep"):
        monkeypatch.setattr(f"everyo.bench.{module}.MachineWatch", QuietWatch)


def per_call_s(batch: int) -> float:
    """A smooth curve: 40 µs of overhead plus 1 µs a sample."""
    return 40e-6 + 1e-6 * batch


def rows(slow: dict | None = None, verdict: str | None = "quiet") -> list[SweepRow]:
    slow = slow or {}
    out = []
    for bs in SIZES:
        t = per_call_s(bs) * slow.get(bs, 1.0)
        row = row_from_times(bs, [t * f for f in (0.99, 1.0, 1.0, 1.01, 1.0)])
        out.append(replace(row, verdict=verdict))
    return out


def test_a_smooth_curve_has_no_suspects():
    assert suspects(rows()) == []


def test_a_point_88x_slower_than_its_neighbours_is_a_suspect():
    found = suspects(rows({16: 88.0}))
    assert 16 in found
    assert set(found) <= {8, 16, 32}  # its neighbours may look odd beside it, nothing further


def test_two_points_only_break_beyond_what_their_sizes_allow():
    two = [r for r in rows({16: 20.0}) if r.batch_size in (8, 16)]
    assert suspects(two) == [8, 16]
    assert suspects([r for r in rows() if r.batch_size in (8, 16)]) == []


def fake_measure(factors_per_round: dict[int, list[float]]):
    """``measure(sizes)`` as remeasure returns it: per size, one list of seconds per round."""
    calls = []

    def measure(sizes):
        calls.append(list(sizes))
        return {
            bs: [[per_call_s(bs) * f] * 5 for f in factors_per_round.get(bs, [1.0, 1.0, 1.0])]
            for bs in sizes
        }

    return measure, calls


def test_a_suspect_that_measures_consistently_takes_the_new_figures():
    measure, calls = fake_measure({})
    out = recheck(rows({16: 88.0}), measure)
    assert calls and 16 in calls[0] and {8, 32} <= set(calls[0])  # with its neighbours
    point = next(r for r in out if r.batch_size == 16)
    assert point.reliable and point.flag is None
    assert point.median_ms == pytest.approx(per_call_s(16) * 1e3)
    assert "re-measured" in point.note and "first reading" in point.note
    assert suspects(out) == []


def test_a_suspect_whose_rounds_disagree_is_unreliable_and_never_recommended():
    measure, _ = fake_measure({16: [1.0, 30.0, 1.0]})
    out = recheck(rows({16: 88.0}), measure)
    point = next(r for r in out if r.batch_size == 16)
    assert not point.reliable and point.flag == "unreliable"
    assert "disagree" in point.note
    result = SweepResult(rows=out)
    assert result.recommended is not None and result.recommended.batch_size != 16
    assert "not considered: 16 (unreliable)" in result.recommendation
    assert "! unreliable" in str(result)


def test_a_cliff_is_a_suspect_even_where_the_points_after_it_stay_low():
    # throughput drops 4x from 128 to 256 and stays low at 512: 256 lies on the line through
    # its neighbours, yet it is a cliff (docs/labs.md: no unflagged cliff above 3x)
    assert 256 in suspects(rows({256: 4.0, 512: 8.0}))


def test_a_departure_that_re_measures_the_same_is_shown_as_a_finding_not_recommended():
    slow = {512: 3.0}
    first = rows(slow)
    for i, r in enumerate(first):  # 512 faults in fresh pages on every call; the rest do not
        first[i] = replace(r, faults_per_call=480.0 if r.batch_size == 512 else 0.0)
    measure, _ = fake_measure({512: [3.0, 3.0, 3.0]})  # the rounds agree: it is repeatable
    out = recheck(first, measure)
    point = next(r for r in out if r.batch_size == 512)
    assert point.off_trend and point.flag == "off-trend" and not point.trusted
    assert "repeatable" in point.note and "480 page faults" in point.note
    result = SweepResult(rows=out)
    assert result.recommended.batch_size != 512
    assert "not considered: 512 (off-trend)" in result.recommendation  # never silently
    assert "! off-trend" in str(result)
    text = render_sweep_text(build_sweep_report(out))
    assert "page faults" in text


def test_re_measurement_is_bounded():
    measure, calls = fake_measure({})
    wild = {bs: (20.0 if i % 2 else 1.0) for i, bs in enumerate(SIZES)}
    recheck(rows(wild), measure)
    assert len(calls) == 1 and len(calls[0]) <= MAX_REMEASURED


def test_contended_points_are_never_recommended():
    out = rows()
    out[-1] = replace(out[-1], verdict="contended")  # the best throughput, but contended
    result = SweepResult(rows=out)
    assert result.recommended.batch_size != 512 and out[-1].flag == "contended"
    assert "512 (contended)" in result.recommendation
    none = SweepResult(rows=rows(verdict="contended"))
    assert none.recommended is None and none.best is None
    assert none.recommendation.startswith("No recommendation: no point can be trusted")
    assert "threads='auto'" in none.recommendation


def test_a_sweep_re_measures_a_point_slowed_once_and_records_each_points_machine():
    clock = FakeClock()
    slowed = {"left": 12}  # the first 12 timed calls at batch 16 are 50x slower

    def step(batch):
        factor = 1.0
        if batch == 16 and slowed["left"] > 0:
            slowed["left"] -= 1
            factor = 50.0
        clock.advance(per_call_s(batch) * factor)

    result = sweep_batch_sizes(
        step, lambda b: b, SIZES, warmup=2, repeat=10, clock=clock, progress=False, threads=None
    )
    point = result[16]
    assert point.reliable and "re-measured" in point.note
    assert point.throughput == pytest.approx(16 / per_call_s(16), rel=1e-6)
    assert all(r.verdict == "quiet" for r in result.rows)
    assert result.machine_state is not None
    data = result.to_dict()
    assert data["recommendation"] == result.recommendation and data["machine"]
    header = result.csv_text().splitlines()[0].split(",")
    assert "verdict" in header and "machine" not in header


def _slowed_once_step(clock, calls=12):
    slowed = {"left": calls}  # the first timed calls at batch 16 are 50x slower

    def step(batch):
        factor = 1.0
        if batch == 16 and slowed["left"] > 0:
            slowed["left"] -= 1
            factor = 50.0
        clock.advance(per_call_s(batch) * factor)

    return step


def test_the_progress_says_when_the_sweep_re_measures_and_stop_works_there():
    """Once every point is measured, ``on_point`` says which sizes are re-measured (the
    widget's progress line is not left silent), and Stop pressed then ends the re-measuring:
    the suspect is not taken as re-measured, and is never recommended."""
    from everyo_lab.views.sweep.sweep_report import progress_text

    clock = FakeClock()
    seen, stop = [], []

    def on_point(progress):
        seen.append(progress)
        if progress.rechecking:
            stop.append(True)  # Stop pressed as the re-measuring starts

    result = sweep_batch_sizes(
        _slowed_once_step(clock),
        lambda b: b,
        SIZES,
        warmup=2,
        repeat=10,
        clock=clock,
        progress=False,
        threads=None,
        on_point=on_point,
        stop=lambda: bool(stop),
    )
    rechecks = [p for p in seen if p.rechecking]
    assert len(rechecks) == 1 and 16 in rechecks[0].rechecking
    assert len(rechecks[0].rows) == len(SIZES) and not rechecks[0].done
    sizes = list(rechecks[0].rechecking)
    line = progress_text(1, 7, sizes[0], 1.25, rechecking=sizes)
    # 1.25 s rounds half up, as the widget's clock rounds it (spelling.seconds_text)
    assert line == f"re-measuring batch {', '.join(map(str, sizes))} interleaved, 1.3 s"
    point = result[16]
    assert result.stopped and not point.reliable and "not re-measured" in point.note
    assert result.recommended != 16


def test_the_views_mark_untrusted_points_and_say_why():
    out = rows()
    out[1] = replace(out[1], reliable=False, note="unreliable: rounds disagree")
    out[2] = replace(
        out[2], verdict="contended", machine={"reason": "other processes used 1.8 of 2 cores"}
    )
    state = {"verdict": "busy", "reason": "other processes used 1.1 of 2 cores; 1 BLAS thread"}
    report = build_sweep_report(SweepResult(rows=out, machine=state))
    assert report.points["flag"][:3] == [None, "unreliable", "contended"]
    assert report.notes[0] == "Machine: busy (other processes used 1.1 of 2 cores; 1 BLAS thread)"
    assert "2 points not trusted" in report.notes[1]
    assert "Not considered: 16 (unreliable), 32 (contended)." in report.recommendation["text"]
    figure = sweep_charts(report)["throughput"]
    ring = next(t for t in figure["data"] if t.get("name") == "not trusted")
    assert ring["x"] == [16, 32] and ring["cliponaxis"] is False
    assert "1.8 of 2 cores" in ring["customdata"][1].replace("<br>", " ")
    line = figure["data"][0]  # hovering the point itself says why as well
    assert line["text"][1].startswith("<br>unreliable: ") and line["text"][0] == ""
    assert "batch 16: unreliable" in chart_html(report, "throughput")
    text = render_sweep_text(report)
    assert "! contended" in text and "Machine: busy" in text


def test_each_point_measured_on_a_busy_machine_says_so_on_hover():
    out = rows()
    out[3] = replace(out[3], verdict="busy")  # one point caught a busy moment; the rest quiet
    figure = sweep_charts(build_sweep_report(SweepResult(rows=out)))["throughput"]
    line = figure["data"][0]
    assert line["text"][3] == "<br>machine: busy"
    assert [t for i, t in enumerate(line["text"]) if i != 3] == [""] * (len(SIZES) - 1)
    assert "%{text}" in line["hovertemplate"]


def test_hover_text_is_wrapped_and_cut_at_a_word():
    from everyo_lab.views.sweep.sweep_charts import hover_text

    text = hover_text("word " * 100, width=20, limit=60)
    assert all(len(line) <= 20 for line in text.split("<br>"))
    assert text.endswith("…") and "wor …" not in text


def test_a_point_too_short_to_read_alone_takes_the_sweeps_state():
    from everyo.bench.sweep import _with_sweep_state

    unknown = {"verdict": "unknown", "reason": "read over 1 ms only", "source": "proc"}
    row = replace(rows()[0], verdict="unknown", machine=unknown)
    sweep = MachineState("contended", "other processes used 1.8 of 2 cores; 2 BLAS threads")
    fixed = _with_sweep_state(row, sweep)
    assert fixed.verdict == "contended" and not fixed.trusted
    assert "over the whole sweep" in fixed.note
    no_proc = replace(row, machine={**unknown, "source": "none"})
    assert _with_sweep_state(no_proc, sweep).verdict == "unknown"  # nothing to read there


def test_a_recommendation_that_untrusted_points_might_beat_is_provisional():
    # under a CPU burner: 256 re-measured 1.6x apart between rounds, yet at its median it was
    # the fastest; the recommendation from the trusted points alone flipped between reruns
    out = rows()
    out[-2] = replace(out[-2], reliable=False, throughput=out[-1].throughput * 2)
    result = SweepResult(rows=out)
    assert result.recommended.batch_size == 512 and not result.conclusive
    assert [r.batch_size for r in result.rivals] == [256]
    assert "provisional: 256 (unreliable)" in result.recommendation
    assert "rerun" in result.recommendation
    assert "provisional: 256 (unreliable)" in render_sweep_text(build_sweep_report(out))
    calm = SweepResult(rows=rows())
    assert calm.conclusive and calm.machine_note == "" and "provisional" not in calm.recommendation
