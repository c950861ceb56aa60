"""Training steps: profiler.step() marks, optimizer steps, their bounds and summary (fake clock)."""

from __future__ import annotations

import pytest

import everyo.profiler as ep
from everyo.errors import EveryOProfilerError
from everyo.profiler import load, profile, record_function
from everyo.profiler.analysis import run_analysis as analysis
from everyo.profiler.recording import hooks


def _train(clock, durations=(30, 10, 20)):
    """One forward region and one 5 ns optimizer step per duration, from time 0."""
    for dt in durations:
        with record_function("forward"):
            clock.advance(dt)
        with hooks.active.region("SGD.step", "optimizer"):
            clock.advance(5)


def test_step_marks_are_times_from_the_run_start(clock, registry):
    with profile(clock=clock, registry=registry) as p:
        clock.advance(5)
        with record_function("forward"):
            clock.advance(10)
        p.step()
        clock.advance(20)
        p.step()
        clock.advance(7)
        ep.step()  # the module-level function marks the active profiler's step
    assert p.run.step_ns == [15, 35, 42] and p.steps == 3
    assert p.run.header()["step_ns"] == [15, 35, 42]
    starts, ends, source = analysis.step_bounds(p.run)
    assert starts.tolist() == [5, 15, 35] and ends.tolist() == [15, 35, 42]
    assert source == "profiler.step()"


def test_steps_outside_a_run_are_not_marked(clock, registry):
    p = profile(clock=clock, registry=registry)
    p.step()  # before start: counted, nothing to mark
    with p:
        clock.advance(3)
        p.step()
    p.step()  # after stop: ignored
    assert p.run.step_ns == [3]


def test_module_level_step_needs_a_running_profiler():
    with pytest.raises(EveryOProfilerError, match="none is running.*profile"):
        ep.step()


def test_optimizer_events_are_steps(clock, registry):
    with profile(clock=clock, registry=registry) as p:
        _train(clock)
    for source in (p.run, p.run.snapshot()):
        starts, ends, kind = analysis.step_bounds(source)
        assert starts.tolist() == [0, 35, 50] and ends.tolist() == [35, 50, 75]
        assert kind == "optimizer"
    summary = analysis.step_summary(starts, ends, kind)
    assert summary == {
        "count": 3,
        "source": "optimizer",
        "mean_ms": 25 / 1e6,
        "median_ms": 25 / 1e6,
        "p95_ms": 35 / 1e6,  # nearest rank: the step the p95 row shows (not 34, linear)
        "first_start_ms": 0.0,
        "median": {"index": 2, "start_ms": 50 / 1e6, "end_ms": 75 / 1e6, "dur_ms": 25 / 1e6},
        "p95": {"index": 0, "start_ms": 0.0, "end_ms": 35 / 1e6, "dur_ms": 35 / 1e6},
        "slowest": {"index": 0, "start_ms": 0.0, "end_ms": 35 / 1e6, "dur_ms": 35 / 1e6},
        "fastest": {"index": 1, "start_ms": 35 / 1e6, "end_ms": 50 / 1e6, "dur_ms": 15 / 1e6},
    }
    for value in (summary["mean_ms"], summary["p95_ms"], summary["slowest"]["index"]):
        assert type(value) in (int, float)  # no numpy scalars: the report is JSON


def test_explicit_marks_win_over_optimizer_steps(clock, registry):
    with profile(clock=clock, registry=registry) as p:
        _train(clock)
        p.step()
    starts, ends, source = analysis.step_bounds(p.run)
    assert source == "profiler.step()" and starts.tolist() == [0] and ends.tolist() == [75]


def test_a_mark_before_the_first_event_starts_the_first_step_at_itself(clock, registry):
    with profile(clock=clock, registry=registry) as p:
        clock.advance(4)
        p.step()
        clock.advance(6)
        with record_function("late"):
            clock.advance(1)
        p.step()
    starts, ends, _ = analysis.step_bounds(p.run)
    assert starts.tolist() == [4, 4] and ends.tolist() == [4, 11]


def test_no_steps(clock, registry):
    with profile(clock=clock, registry=registry) as p:
        with record_function("forward"):
            clock.advance(3)
    starts, ends, source = analysis.step_bounds(p.run)
    assert len(starts) == len(ends) == 0 and source == ""
    assert analysis.step_summary(starts, ends, source) is None
    with profile(clock=clock, registry=registry) as empty:
        pass
    assert analysis.step_bounds(empty.run)[2] == ""


def test_step_spans_start_at_the_first_event():
    starts, ends = analysis.step_spans([30, 10, 20], first_ns=2)
    assert starts.tolist() == [2, 10, 20] and ends.tolist() == [10, 20, 30]
    assert [a.tolist() for a in analysis.step_spans([])] == [[], []]


@pytest.mark.parametrize("fmt", ["json", "chrome"])
def test_step_marks_survive_export_and_load(clock, registry, tmp_path, fmt):
    with profile(clock=clock, registry=registry) as p:
        _train(clock, durations=(4,))
        p.step()
        clock.advance(9)
        p.step()
    if fmt == "json":  # the run header, steps included, is in the raw format
        path = p.export_json(tmp_path / "t.json", format="raw")
    else:
        path = p.export_chrome_trace(tmp_path / "t.json")
    run = load(path)
    assert run.step_ns == [9, 18]
    assert analysis.step_bounds(run)[1].tolist() == [9, 18]
