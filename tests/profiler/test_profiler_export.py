"""Exports: Chrome trace validity, gzip, raw JSON, load round trips, atomic writes."""

from __future__ import annotations

import gzip
import json
import os

import numpy as np
import pytest
from fakes import FakeClock
from profiler_fakes import mlp
from trace_nesting import assert_trace_nests, misnested, read_trace

from everyo.errors import EveryOExportError
from everyo.profiler import load, profile, record_function


@pytest.fixture
def prof(clock, registry):
    clock.tick = 3  # every clock read moves: no zero-length events
    model = mlp(clock)
    with profile(clock=clock, registry=registry, label="exp", profile_memory=True) as p:
        for i in range(3):
            with record_function("step", index=i, tag="a%b"):
                model(np.zeros((4, 4)))
    return p


def _complete_events(trace):
    return [e for e in trace["traceEvents"] if e["ph"] == "X"]


def assert_children_inside_parents(events):
    """Every event lies inside the innermost enclosing event of its own thread, exactly."""
    assert not misnested(events)


def test_chrome_trace_is_valid(prof, tmp_path):
    path = tmp_path / "trace.json"
    assert prof.export_chrome_trace(path) == path  # a Path, as the reference returns
    trace = json.loads(path.read_text())
    xs = _complete_events(trace)
    assert len(xs) == prof.run.num_events == 15
    assert all(isinstance(e["ts"], float) and e["pid"] == 1 for e in xs)
    assert_children_inside_parents(xs)
    meta = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    assert {e["name"] for e in meta} >= {"process_name", "thread_name"}
    assert any(e["args"]["name"] == "MainThread" for e in meta if e["name"] == "thread_name")
    lin = next(e for e in xs if e["name"] == "Linear")
    assert lin["cat"] == "module" and lin["args"]["path"] == "0"
    assert lin["args"]["shapes"] == "[(4, 4) float64] -> (4, 16) float64"
    step = next(e for e in xs if e["name"] == "step")
    assert step["args"]["metadata"] == {"index": 0, "tag": "a%b"}
    counters = [e for e in trace["traceEvents"] if e["ph"] == "C"]
    assert counters and all("bytes" in e["args"] for e in counters)
    assert trace["otherData"]["everyo_run"]["label"] == "exp"
    # microsecond times keep the nanoseconds
    first = prof.run.snapshot()
    assert round(xs[0]["ts"] * 1000) == first.start_ns[0]


def test_chrome_trace_events_from_threads_nest_per_thread(registry, tmp_path):
    import threading

    model = mlp()
    with profile(registry=registry) as p:
        t = threading.Thread(target=lambda: [model(np.zeros((2, 4))) for _ in range(5)])
        t.start()
        for _ in range(5):
            model(np.zeros((2, 4)))
        t.join()
    p.export_chrome_trace(tmp_path / "t.json")
    xs = _complete_events(json.loads((tmp_path / "t.json").read_text()))
    assert len({e["tid"] for e in xs}) == 2
    assert_children_inside_parents(xs)


def test_gzip_when_path_ends_in_gz(prof, tmp_path):
    path = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(path)
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    assert len(_complete_events(trace)) == 15


@pytest.mark.parametrize(
    "name", ["raw.json", "raw.json.gz", "chrome.json", "chrome.json.gz", "events.json"]
)
def test_load_round_trip(prof, tmp_path, name):
    path = tmp_path / name
    if name.startswith("raw"):
        prof.export_json(path, format="raw")
    elif name.startswith("events"):
        prof.export_json(path)
    else:
        prof.export_chrome_trace(path)
    run = load(path)
    if name.startswith("events"):  # events only: no run header in this format
        assert run.label == "events.json" and run.process_id == os.getpid()
        assert run.wall_ns == max(e.end_ns for e in prof.events)
    else:
        assert run.id == prof.run.id and run.label == "exp" and run.status == "completed"
        assert set(run.counters) == set(prof.run.counters)
    assert run.num_events == prof.run.num_events
    assert run.snapshot().events() == prof.events
    a, b = prof.run.snapshot(), run.snapshot()
    assert a.name.tolist() == b.name.tolist() and a.path.tolist() == b.path.tolist()
    assert (a.start_ns == b.start_ns).all() and (a.dur_ns == b.dur_ns).all()
    assert (a.depth == b.depth).all() and (a.parent == b.parent).all()
    assert a.shapes == b.shapes and a.metadata == b.metadata
    sa, sb = prof.summary(), run.summary()
    assert [(r["name"], r["calls"], r["total_ms"]) for r in sa] == [
        (r["name"], r["calls"], r["total_ms"]) for r in sb
    ]


def test_raw_export_lists_events_with_header(prof, tmp_path):
    path = prof.export_json(tmp_path / "raw.json", format="raw")
    data = json.loads(open(path).read())
    assert data["format"] == "everyo.raw" and data["run"]["status"] == "completed"
    assert len(data["events"]) == 15
    ev = data["events"][0]
    assert {"name", "kind", "path", "start_ns", "dur_ns", "depth", "parent", "tid"} <= set(ev)
    assert "environment" in data["run"] and "options" in data["run"]


def test_failed_run_status_survives_export(clock, registry, tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with profile(clock=clock, registry=registry) as p:
            mlp(clock)(np.zeros((1, 4)))
            raise KeyboardInterrupt
    p.export_chrome_trace(tmp_path / "f.json")
    run = load(tmp_path / "f.json")
    assert run.status == "failed" and run.error == "KeyboardInterrupt"


def test_missing_directory_names_the_path_and_leaves_nothing(prof, tmp_path):
    target = tmp_path / "nope" / "trace.json"
    with pytest.raises(EveryOExportError, match="does not exist") as info:
        prof.export_chrome_trace(target)
    assert str(target) in str(info.value)
    assert not (tmp_path / "nope").exists()


def test_path_that_is_a_directory(prof, tmp_path):
    with pytest.raises(EveryOExportError, match="is a directory"):
        prof.export_json(tmp_path)


def test_unwritable_directory_is_an_export_error(prof, tmp_path, monkeypatch):
    real_open = os.open

    def deny(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    with pytest.raises(EveryOExportError, match="trace.json") as info:
        prof.export_chrome_trace(tmp_path / "trace.json")
    assert "writable" in str(info.value) and ".tmp" not in str(info.value)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores permissions")
def test_read_only_directory(prof, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(EveryOExportError, match="ro"):
            prof.export_json(ro / "raw.json")
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o700)


def test_failure_mid_write_leaves_no_partial_file(prof, tmp_path, monkeypatch):
    from everyo.profiler.export import chrome

    def explode(*args, **kwargs):
        raise RuntimeError("disk full")

    (tmp_path / "trace.json").write_text("previous")
    monkeypatch.setattr(chrome, "format_chunk", explode)
    with pytest.raises(RuntimeError, match="disk full"):
        prof.export_chrome_trace(tmp_path / "trace.json")
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json"]
    assert (tmp_path / "trace.json").read_text() == "previous"


def test_metadata_that_json_cannot_hold_names_the_key(clock, registry, tmp_path):
    with profile(clock=clock, registry=registry) as p:
        with record_function("load", dataset=object()):
            pass
    for export in (p.export_chrome_trace, p.export_json):
        with pytest.raises(EveryOExportError, match="'dataset'"):
            export(tmp_path / "t.json")
    assert list(tmp_path.iterdir()) == []


def test_load_errors(tmp_path):
    with pytest.raises(EveryOExportError, match="no such file"):
        load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(EveryOExportError, match="bad.json"):
        load(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text('{"a": 1}')
    with pytest.raises(EveryOExportError, match="neither"):
        load(tmp_path / "other.json")


def test_export_while_running_includes_this_threads_events(clock, registry, tmp_path):
    with profile(clock=clock, registry=registry) as p:
        mlp(clock)(np.zeros((1, 4)))
        p.export_json(tmp_path / "live.json")
    assert len(json.loads((tmp_path / "live.json").read_text())) == 4


def test_chrome_numeric_args_and_unknowns_round_trip(clock, registry, tmp_path):
    from everyo.profiler.recording import hooks

    a, b = np.ones((8, 4)), np.ones((4, 16))

    class Mat:
        def named_modules(self):
            yield "", self

        def __call__(self, x):
            return hooks.active.module_call(self, self.forward, (x,), {})

        def forward(self, x):
            hooks.active.op_call("matmul", np.matmul, (x, b), {})
            return hooks.active.op_call("mystery_op", np.negative, (x,), {})

    clock.tick = 7
    with profile(clock=clock, registry=registry, record_ops=True, profile_memory=True) as p:
        for i in range(3):
            with record_function("step", i=i):
                Mat()(a)
    p.export_chrome_trace(tmp_path / "ops.json")
    trace = json.loads((tmp_path / "ops.json").read_text())
    xs = {e["name"]: e for e in _complete_events(trace)}
    assert xs["matmul"]["args"]["flops"] == 2 * 8 * 4 * 16
    assert xs["mystery_op"]["args"]["flops"] is None  # unknown FLOPs are null, not a guess
    assert xs["matmul"]["args"]["mem_bytes"] == 8 * 16 * 8
    assert_children_inside_parents(_complete_events(trace))
    run = load(tmp_path / "ops.json")
    a_, b_ = p.run.snapshot(), run.snapshot()
    assert a_.name.tolist() == b_.name.tolist() and (a_.parent == b_.parent).all()
    assert a_.flops.tolist() == b_.flops.tolist()
    assert a_.mem_bytes.tolist() == b_.mem_bytes.tolist() and a_.metadata == b_.metadata


def test_exact_durations_land_on_the_end_as_a_float_sum():
    """``ts + dur`` parsed and summed as doubles equals the parsed end, for any ns values."""
    from everyo.profiler.export._fixed import exact_durations, fixed3

    rng = np.random.default_rng(0)
    start = np.concatenate([[21_741_558], rng.integers(0, 2**45, 5000)])  # up to ~10 hours
    dur = np.concatenate([[9_220], rng.integers(0, 10**10, 5000)])

    def parsed(matrix):  # each row of the fixed-width field as a viewer parses it
        return [float(bytes(row)) for row in matrix]

    ts, end = parsed(fixed3(start)), parsed(fixed3(start + dur))
    durs = parsed(exact_durations(start, dur))
    assert all(t + d == e for t, d, e in zip(ts, durs, end))
    assert all(abs(d * 1000 - n) < 0.5 for d, n in zip(durs, dur))  # still the same ns


def test_exact_durations_never_end_after_the_end():
    """Where no double lands on the end (a start of finer ulp than its end: sums round to
    even), the duration is the one landing just before it, never after (1465.376 + 2266.712
    µs was written as 2266.7120000000004, ending an ulp into its next sibling)."""
    from everyo.profiler.export._fixed import exact_durations

    start, end = 1_465_376, 3_732_088
    dur = float(bytes(exact_durations([start], [end - start])[0]))
    assert 1465.376 + dur <= 3732.088 and abs(dur * 1000 - (end - start)) < 0.5


class TouchingClock(FakeClock):
    """Moves on every other read only, so an event ends at the very ns its next sibling (or its
    parent) starts or ends: the cases where a float sum overshooting by one ulp misnests."""

    def __init__(self, tick, *, start=0):
        super().__init__(tick, start=start)
        self.moves = False

    def __call__(self):
        self.moves = not self.moves
        self.now += self.tick if self.moves else 0
        return self.now


def test_long_run_trace_nests_exactly(registry, tmp_path):
    """Hours into a run, events that touch in ns still touch (not overlap) as floats."""
    clock = TouchingClock(9_220, start=21_741_558)  # 9.22 µs: the demo's overshooting case
    model = mlp(clock)
    with profile(clock=clock, registry=registry, label="long") as p:
        for hours in (0, 1, 7):
            clock.advance(hours * 3_600_000_000_000 + 1_337)
            for i in range(40):
                with record_function("step", index=i):
                    model(np.zeros((4, 4)))
    path = p.export_chrome_trace(tmp_path / "long.json")
    assert_trace_nests(path)
    assert max(e["ts"] for e in read_trace(path) if e["ph"] == "X") > 7 * 3.6e9
