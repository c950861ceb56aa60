"""Hostile and damaged files given to ``everyo.profiler.load``: each is an
:class:`EveryOExportError` that names the file and the problem (issue 36), never a bare
``RecursionError``/``OverflowError``, a value that wraps, or a run that breaks the views later."""

from __future__ import annotations

import json
import math

import pytest

from everyo.errors import EveryOExportError
from everyo.profiler import Profiler, load, record_function, runs


@pytest.fixture(autouse=True)
def _fresh_runs():
    runs.clear()
    yield
    runs.clear()


def _raw_file(tmp_path, **header):
    with Profiler(label="good") as p:
        with record_function("step"):
            pass
    path = p.export_json(tmp_path / "good.json", format="raw")
    data = json.loads(path.read_text())
    data["run"].update(header)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    runs.clear()
    return bad


@pytest.mark.parametrize(
    "start_time", ["yesterday", math.nan, math.inf, 1e20, -5, True, [1]], ids=repr
)
def test_a_start_time_no_date_can_show_is_refused(tmp_path, start_time):
    path = _raw_file(tmp_path, start_time=start_time)
    with pytest.raises(EveryOExportError, match="start_time") as info:
        load(path, register=True)
    assert str(path) in str(info.value)
    assert len(runs) == 0  # nothing half-registered


@pytest.mark.parametrize(
    "field, value",
    [("wall_ns", -1), ("wall_ns", "long"), ("status", "exploded"), ("step_ns", [1e300])],
)
def test_other_header_fields_are_checked(tmp_path, field, value):
    with pytest.raises(EveryOExportError, match=field):
        load(_raw_file(tmp_path, **{field: value}))


def test_a_good_start_time_loads(tmp_path):
    run = load(_raw_file(tmp_path, start_time=1_700_000_000.5))
    assert run.start_time == 1_700_000_000.5


def test_deeply_nested_json_is_an_export_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(EveryOExportError, match="nests"):
        load(path)


def _events_file(tmp_path, **fields):
    event = {"name": "a", "duration_ns": 10, "start_ns": 5, "process_id": 1, "thread_id": 1}
    event.update(fields)
    path = tmp_path / "events.json"
    text = json.dumps([event, {**event, "name": "b"}])
    path.write_text(text.replace('"HUGE"', "9" * 4000))  # json.dumps refuses ints this long
    return path


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"start_ns": 10**30}, "start_ns"),
        ({"start_ns": "HUGE"}, "start_ns=<an integer of about"),
        ({"duration_ns": 2**64}, "duration_ns"),
        ({"duration_ns": -3}, "duration_ns"),
        ({"start_ns": 1e300}, "start_ns"),
    ],
    ids=["1e30", "4000 digits", "2**64", "negative", "1e300"],
)
def test_huge_or_negative_numbers_in_the_events_array_are_refused(tmp_path, fields, message):
    with pytest.raises(EveryOExportError, match=message):
        load(_events_file(tmp_path, **fields))


def _own_raw(tmp_path, edit):
    with Profiler() as p:
        with record_function("outer"):
            with record_function("inner"):
                pass
    path = p.export_json(tmp_path / "raw.json", format="raw")
    data = json.loads(path.read_text())
    edit(data["events"])
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "field, value", [("dur_ns", -5), ("depth", -1), ("depth", 40_000), ("start_ns", 2**70)]
)
def test_negative_durations_and_depths_in_a_raw_file_are_refused(tmp_path, field, value):
    path = _own_raw(tmp_path, lambda events: events[0].update({field: value}))
    with pytest.raises(EveryOExportError, match=f"event 0 .*{field}"):
        load(path)


def test_a_chrome_trace_at_ts_1e300_is_refused_not_wrapped(tmp_path):
    path = tmp_path / "t.json"
    trace = [
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 1},
        {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 1e300, "dur": 1},
    ]
    path.write_text(json.dumps(trace))
    with pytest.raises(EveryOExportError, match=r"traceEvents\[1\].*start_ns"):
        load(path)


@pytest.mark.parametrize("tid", [lambda i: i + 1, lambda i: f"stream {i}"], ids=["int", "str"])
def test_a_trace_of_40_000_threads_loads(tmp_path, tid):
    """Past the 16-bit thread column, and numbered in linear time (a new number per thread
    used to look at every number given so far)."""
    trace = [
        {"ph": "X", "name": "work", "pid": 1, "tid": tid(i), "ts": i, "dur": 1}
        for i in range(40_000)
    ]
    path = tmp_path / "threads.json"
    path.write_text(json.dumps(trace))
    run = load(path)
    assert run.num_events == 40_000 and len(run.store.threads) == 40_000
    assert len(set(run.snapshot().tid.tolist())) == 40_000


def test_a_raw_file_of_40_000_threads_loads(tmp_path):
    events = [
        {"name": "w", "kind": "user", "start_ns": i, "dur_ns": 1, "depth": 0, "tid": i + 1}
        for i in range(40_000)
    ]
    path = tmp_path / "raw.json"
    path.write_text(json.dumps({"format": "everyo.raw", "version": 1, "events": events}))
    assert len(set(load(path).snapshot().tid.tolist())) == 40_000


def test_durations_whose_sum_overflows_are_refused_at_load(tmp_path):
    """Issue 44: three events of 2**62 - 10 ns each loaded, then gave negative total_ms and
    self_ms, and the compiled and NumPy aggregations disagreed (-4.6e12 vs -9.2e12 ms)."""
    event = {"name": "a", "duration_ns": 2**62 - 10, "start_ns": 0, "process_id": 1,
             "thread_id": 1}  # fmt: skip
    path = tmp_path / "events.json"
    path.write_text(json.dumps([event, {**event, "name": "b"}, {**event, "name": "c"}]))
    with pytest.raises(EveryOExportError, match="add up to"):
        load(path)
    late = {**event, "start_ns": 2**62 - 5, "duration_ns": 2**61}
    path.write_text(json.dumps([{**event, "duration_ns": 10}, late]))
    with pytest.raises(EveryOExportError, match="ends at"):
        load(path)
    path.write_text(json.dumps([{**event, "duration_ns": 2**40}, {**event, "name": "b"}][:1]))
    assert load(path).summary()[0]["total_ms"] > 0  # (large but summable: loads)


def _sampled_raw(tmp_path, edit):
    from everyo.profiler import profile

    with profile(sample=0.5) as p:
        with record_function("step"):
            end = __import__("time").perf_counter() + 0.05
            while __import__("time").perf_counter() < end:
                pass
    path = p.export_json(tmp_path / "sampled.json", format="raw")
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data).replace('"HUGE"', "1e30"))
    runs.clear()
    return path


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["samples"]["columns"]["stack"].pop(),  # unequal lengths
        lambda d: d["samples"]["columns"]["wall_ns"].__setitem__(0, "HUGE"),  # 1e30
        lambda d: d["samples"]["columns"]["wall_ns"].__setitem__(0, -5),
        lambda d: d["samples"]["columns"]["cpu_ns"].__setitem__(0, 2**62),
        lambda d: d["run"]["machine"].__setitem__("blas_threads", "many"),
        lambda d: d["run"]["options"].__setitem__("sample_ms", "x"),
    ],
    ids=["unequal", "1e30", "negative", "2**62", "blas_threads", "sample_ms"],
)
def test_crafted_samples_and_header_numbers_are_refused_at_load(tmp_path, edit):
    """Issue 44: these loaded, then hot_lines() or summarize() raised bare IndexError,
    OverflowError or TypeError."""
    path = _sampled_raw(tmp_path, edit)
    with pytest.raises(EveryOExportError):
        load(path)


def test_a_sampled_raw_file_as_written_loads(tmp_path):
    run = load(_sampled_raw(tmp_path, lambda d: None))
    assert run.samples is not None and len(run.samples) > 0
