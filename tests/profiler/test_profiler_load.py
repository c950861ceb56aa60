"""everyo.profiler.load on files of other tools: B/E pairs, instants, torch.profiler traces, the
reference EveryO's events array, and malformed input named in an EveryOExportError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from everyo.errors import EveryOExportError
from everyo.profiler import load

DATA = Path(__file__).parent / "data"


def _write(tmp_path, data, name="t.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _events(run):
    return {e.name: e for e in run.snapshot().events()}


def test_begin_end_pairs_nest_per_thread_and_merge_their_args(tmp_path):
    trace = {
        "traceEvents": [
            {"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 10, "args": {"a": 1}},
            {"ph": "B", "name": "other", "pid": 1, "tid": 2, "ts": 12},
            {"ph": "B", "name": "inner", "pid": 1, "tid": 1, "ts": 15},
            {"ph": "E", "pid": 1, "tid": 2, "ts": 40},  # closes "other", not "inner"
            {"ph": "E", "pid": 1, "tid": 1, "ts": 20},
            {"ph": "E", "pid": 1, "tid": 1, "ts": 30, "args": {"b": 2}},
            {"ph": "X", "name": "later", "pid": 1, "tid": 1, "ts": 35, "dur": 1},
        ]
    }
    ev = _events(load(_write(tmp_path, trace)))
    assert set(ev) == {"outer", "inner", "other", "later"}
    assert (ev["outer"].start_ns, ev["outer"].duration_ns, ev["outer"].depth) == (0, 20_000, 0)
    assert (ev["inner"].start_ns, ev["inner"].duration_ns, ev["inner"].depth) == (5000, 5000, 1)
    assert ev["inner"].parent == ev["outer"].row
    assert (ev["other"].duration_ns, ev["other"].depth) == (28_000, 0)
    assert ev["other"].thread_id != ev["outer"].thread_id
    assert ev["outer"].metadata == {"a": 1, "b": 2}


def test_unclosed_begin_runs_to_the_end_and_a_lone_end_is_skipped(tmp_path):
    trace = [
        {"ph": "E", "pid": 1, "tid": 1, "ts": 5},
        {"ph": "B", "name": "open", "pid": 1, "tid": 1, "ts": 10},
        {"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": 20, "dur": 30},
    ]
    run = load(_write(tmp_path, trace))
    ev = _events(run)
    assert run.num_events == 2
    assert ev["open"].duration_ns == 40_000 and ev["x"].depth == 1  # to the end of "x"


def test_instant_events_are_zero_length_events(tmp_path):
    trace = {
        "traceEvents": [
            {"ph": "X", "name": "step", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
            {"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": 4, "s": "t"},
            {"ph": "I", "name": "old mark", "pid": 1, "tid": 1, "ts": 6},
        ]
    }
    ev = _events(load(_write(tmp_path, trace)))
    assert ev["mark"].duration_ns == 0 and ev["mark"].start_ns == 4000
    assert ev["mark"].depth == 1 and ev["old mark"].duration_ns == 0


def test_a_torch_profiler_trace_loads():
    run = load(DATA / "torch_cpu.pt.trace.json")
    ev = _events(run)
    ops = {"aten::linear", "aten::t", "aten::addmm", "aten::relu"}
    assert ops <= set(ev) and "ProfilerStep#0" in ev
    assert run.num_events == 10  # X events and instants; M, flow (s/f) events are not regions
    # the earliest event starts at 0; microseconds with fractions become exact nanoseconds
    assert min(e.start_ns for e in ev.values()) == 0
    assert ev["aten::linear"].duration_ns == 401_125
    assert ev["aten::t"].parent == ev["aten::linear"].row and ev["aten::t"].depth == 2
    assert ev["aten::linear"].metadata["External id"] == 2
    assert ev["aten::linear"].metadata["Input Dims"] == [[32, 4], [16, 4], [16]]
    assert ev["aten::linear"].kind == "cpu_op"
    names = dict(run.store.threads)
    assert names[ev["aten::relu"].thread_id] == "python3: thread 70610 (python3)"
    backward = ev["autograd::engine::evaluate_function: AddmmBackward0"]
    assert names[backward.thread_id].endswith("(pt_autograd_0)")
    # string pid/tid ("Spans"/"PyTorch Profiler") are threads of their own
    assert names[ev["PyTorch Profiler (0)"].thread_id] == "Spans: PyTorch Profiler"
    assert run.summary(top=1)[0]["name"] == "PyTorch Profiler (0)"


def test_the_reference_everyo_events_array_loads(tmp_path):
    # what the reference writes: perf_counter_ns() starts, thread 0, inner before outer
    events = [
        {
            "name": "Linear",
            "duration_ns": 400,
            "start_ns": 5_000_000_100,
            "process_id": 4242,
            "thread_id": 0,
            "metadata": {"input_shapes": [[8, 4]]},
        },
        {
            "name": "Sequential",
            "duration_ns": 1000,
            "start_ns": 5_000_000_000,
            "process_id": 4242,
            "thread_id": 0,
            "metadata": {"input_shapes": [[8, 4]]},
        },
    ]
    path = tmp_path / "ref.json"
    path.write_text(json.dumps(events, indent=2))
    run = load(path)
    ev = _events(run)
    assert ev["Sequential"].start_ns == 0 and ev["Linear"].start_ns == 100
    assert ev["Linear"].depth == 1 and ev["Linear"].parent == ev["Sequential"].row
    assert ev["Linear"].metadata == {"input_shapes": [[8, 4]]}
    assert ev["Linear"].process_id == 4242 and run.wall_ns == 1000
    assert run.label == "ref.json"


_OURS = {"otherData": {"everyo_run": {}}}  # a Chrome trace everyo wrote


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ([1, 2, 3], r"item 0 is '1', not an event object"),
        ({"traceEvents": [1, 2]}, r"traceEvents\[0\] is '1', not an event object"),
        ({"traceEvents": {"a": 1}}, "'traceEvents' is a dict, not a list"),
        (
            {"traceEvents": [{"ph": "X", "name": "a", "ts": "12", "dur": 1}]},
            r"traceEvents\[0\] \(ph 'X', name 'a'\) has ts='12': a number is expected",
        ),
        (
            {"traceEvents": [{"ph": "X", "name": "a", "dur": 1}]},
            r"traceEvents\[0\] \(ph 'X', name 'a'\) has no 'ts'",
        ),
        (
            [
                {"ph": "X", "name": "a", "ts": 1, "dur": 2},
                {"ph": "X", "name": "b", "ts": 1, "dur": -5},
            ],
            r"traceEvents\[1\] \(ph 'X', name 'b'\) has dur=-5: it cannot be below 0",
        ),
        (
            [
                {"ph": "B", "name": "a", "ts": 10, "pid": 1, "tid": 1},
                {"ph": "E", "ts": 5, "pid": 1, "tid": 1},
            ],
            "ends at ts=5, before its 'B' began at 10",
        ),
        ([{"name": "a", "duration_ns": 3}], r"event 0 \('a'\) has no 'start_ns'"),
        (
            [{"name": "a", "duration_ns": 3, "start_ns": 0, "metadata": [1]}],
            "'metadata' that is not an object",
        ),
        ({"format": "everyo.raw", "events": [{"name": "a"}]}, "damaged .missing field 'start_ns'"),
        (  # numbers past int64 in everyo's args were a bare OverflowError
            {"traceEvents": [{"ph": "X", "ts": 1, "args": {"flops": 10**20}}], **_OURS},
            "damaged .Python int too large",
        ),
        (
            {"traceEvents": [{"ph": "X", "ts": 1, "args": {"device_us": 1e400}}], **_OURS},
            "damaged .cannot convert float infinity",
        ),
        ("text", "neither an events array"),
    ],
)
def test_malformed_input_is_an_export_error_naming_the_problem(tmp_path, content, problem):
    path = _write(tmp_path, content)
    with pytest.raises(EveryOExportError, match=problem) as info:
        load(path)
    assert str(path) in str(info.value)
