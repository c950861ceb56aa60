"""Recording: module paths, nesting, timing with a fake clock, shapes, warmup, errors, threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from profiler_fakes import Boom, FakeClock, Linear, Sequential, mlp

from everyo.errors import EveryOProfilerError
from everyo.profiler import (
    Profiler,
    profile,
    record_function,
    schedule,
)
from everyo.profiler.recording import hooks

# every test runs with the compiled and the pure-Python recorder (see conftest.py)
pytestmark = pytest.mark.usefixtures("recorder_impl")


def by_path(p):
    return {e.path: e for e in p.events if e.kind == "module"}


def test_module_paths_nesting_and_fake_clock_times(clock, registry):
    model = mlp(clock)
    with profile(clock=clock, registry=registry) as p:
        model(np.zeros((32, 4)))
    ev = by_path(p)
    assert set(ev) == {"", "0", "1", "2"}
    assert [ev[k].name for k in ("", "0", "1", "2")] == ["Sequential", "Linear", "ReLU", "Linear"]
    assert ev[""].duration_ns == 160 and ev["0"].duration_ns == 10 and ev["2"].duration_ns == 30
    assert ev[""].depth == 0 and ev[""].parent == -1
    root_row = ev[""].row
    assert all(ev[k].parent == root_row and ev[k].depth == 1 for k in ("0", "1", "2"))
    # children lie inside their parent
    for k in ("0", "1", "2"):
        assert ev[""].start_ns <= ev[k].start_ns and ev[k].end_ns <= ev[""].end_ns
    batch = p.run.snapshot()
    selfs = dict(zip(batch.path.tolist(), batch.self_ns.tolist()))
    assert selfs[""] == 100


def test_shapes_of_inputs_keyword_inputs_and_output(clock, registry):
    model = mlp(clock)
    with profile(clock=clock, registry=registry) as p:
        model(np.zeros((32, 4)))
        model.children[0](np.zeros((8, 4), np.float32), mask=np.zeros((8, 1), bool))
    shapes = [e.shapes for e in p.events]
    assert "[(32, 4) float64] -> (32, 16) float64" in shapes  # (NumPy's default dtype)
    assert "[(32, 16) float64] -> (32, 2) float64" in shapes
    # float32, the engine's and torch's default, goes unsaid; any other dtype follows its shape
    assert "[(8, 4), mask=(8, 1) bool] -> (8, 16) float64" in shapes


def test_record_shapes_off_has_no_shape_column(clock, registry):
    with profile(clock=clock, registry=registry, record_shapes=False) as p:
        mlp(clock)(np.zeros((2, 4)))
    assert p.run.snapshot().shapes is None
    assert "shape" not in p.run.store.columns


def test_child_called_standalone_is_its_own_root(clock, registry):
    model = mlp(clock)
    with profile(clock=clock, registry=registry) as p:
        model.children[0](np.zeros((2, 4)))
        model(np.zeros((2, 4)))
    paths = [(e.name, e.path) for e in p.events]
    assert paths[0] == ("Linear", "")
    assert ("Linear", "0") in paths


def test_module_not_in_tree_gets_a_path_under_its_caller(clock, registry):
    stray = Linear(4, 4)

    class Outer(Sequential):
        def forward(self, x, **kwargs):
            return stray(x)

    with profile(clock=clock, registry=registry) as p:
        Outer()(np.zeros((1, 4)))
    assert {(e.name, e.path) for e in p.events} == {("Outer", ""), ("Linear", "Linear")}


def test_warmup_skips_first_recorded_events(clock, registry):
    model = mlp(clock)
    with profile(clock=clock, registry=registry, warmup=5) as p:
        for _ in range(3):
            model(np.zeros((2, 4)))
    assert len(p.events) == 12 - 5
    assert p.run.skipped == 5
    # the first 4 events of call 1 and the first event of call 2 are gone
    assert [e.path for e in p.events[:3]] == ["1", "2", ""]


def test_warmup_skipping_everything_explains_the_empty_summary(clock, registry):
    with profile(clock=clock, registry=registry, warmup=100) as p:
        mlp(clock)(np.zeros((2, 4)))
    text = str(p.summary())
    assert "no events recorded" in text and "skipped by warmup=100" in text


@pytest.mark.parametrize("bad", [-1, float("nan"), "3", True])
def test_bad_warmup_is_a_clear_error(bad):
    with pytest.raises(EveryOProfilerError, match="warmup"):
        Profiler(warmup=bad)


def test_schedule_records_active_steps_only(clock, registry):
    model = mlp(clock)
    sched = schedule(wait=1, warmup=1, active=2, repeat=1)
    with profile(clock=clock, registry=registry, schedule=sched) as p:
        for step in range(6):
            with record_function("step", index=step):
                model(np.zeros((2, 4)))
            p.step()
    steps = [e.metadata["index"] for e in p.events if e.name == "step"]
    assert steps == [2, 3]
    assert len(p.events) == 2 * 5
    assert p.run.options["steps"] == 6


def test_schedule_validation():
    with pytest.raises(EveryOProfilerError, match="active"):
        schedule(active=0)
    with pytest.raises(EveryOProfilerError, match="wait"):
        schedule(wait=-1)
    s = schedule(wait=1, warmup=0, active=1, repeat=0)
    assert [s.action(i) for i in range(4)] == ["wait", "active", "wait", "active"]


def test_nested_profilers_raise_runtime_error(registry):
    with profile(registry=registry):
        with pytest.raises(RuntimeError, match="cannot be nested"):
            Profiler(registry=registry).start()
    assert hooks.active is None


@pytest.mark.parametrize("exc", [ValueError("bad input"), KeyboardInterrupt()])
def test_exception_keeps_events_marks_run_failed_and_deactivates(clock, registry, exc):
    model = Sequential(Linear(4, 4), Boom(exc, clock=clock, work_ns=7), clock=clock)
    with pytest.raises(type(exc)):
        with profile(clock=clock, registry=registry) as p:
            mlp(clock)(np.zeros((2, 4)))
            model(np.zeros((2, 4)))
    assert hooks.active is None
    assert p.run.status == "failed"
    assert p.run.error == (
        "KeyboardInterrupt" if isinstance(exc, KeyboardInterrupt) else "ValueError: bad input"
    )
    names = [(e.name, e.path) for e in p.events]
    assert ("Boom", "1") in names and names[-1] == ("Sequential", "")
    assert len(names) == 4 + 3
    boom = next(e for e in p.events if e.name == "Boom")
    assert boom.duration_ns == 7
    assert "failed" in str(p.summary())


def test_system_exit_zero_is_a_completed_run(registry):
    with pytest.raises(SystemExit):
        with profile(registry=registry) as p:
            raise SystemExit(0)
    assert p.run.status == "completed"


def test_record_function_is_a_noop_without_profiler():
    assert hooks.active is None
    with record_function("idle", batch_size=3) as r:
        assert r.name == "idle"

    @record_function("decorated")
    def f(x):
        return x + 1

    assert f(1) == 2


def test_record_function_regions_metadata_and_decorator(clock, registry):
    @record_function("decorated", stage="predict")
    def predict(x):
        clock.advance(5)
        return x

    with profile(clock=clock, registry=registry) as p:
        with record_function("inference", batch_size=64):
            clock.advance(3)
            predict(1)
        with p.record("custom", {"epoch": 2}):
            clock.advance(4)
    ev = {e.name: e for e in p.events}
    assert ev["inference"].kind == "user" and ev["inference"].metadata == {"batch_size": 64}
    assert ev["inference"].duration_ns == 8
    assert ev["decorated"].parent == ev["inference"].row
    assert ev["decorated"].metadata == {"stage": "predict"}
    assert ev["custom"].metadata == {"epoch": 2} and ev["custom"].duration_ns == 4


def test_record_needs_a_running_profiler(registry):
    p = Profiler(registry=registry)
    with pytest.raises(EveryOProfilerError, match="running"):
        p.record("x")


def test_engine_regions_have_their_kind(clock, registry):
    with profile(clock=clock, registry=registry) as p:
        with hooks.active.region("DataLoader.next", "data", batch_size=8):
            clock.advance(2)
        with hooks.active.region("Adam.step", "optimizer"):
            clock.advance(3)
    assert [(e.name, e.kind) for e in p.events] == [
        ("DataLoader.next", "data"),
        ("Adam.step", "optimizer"),
    ]
    assert p.events[0].metadata == {"batch_size": 8}


def test_events_from_other_threads_carry_thread_ids_and_names(registry):
    model = mlp()
    with profile(registry=registry) as p:
        worker = threading.Thread(target=lambda: model(np.zeros((2, 4))), name="loader-0")
        worker.start()
        worker.join()
        model(np.zeros((2, 4)))
    batch = p.run.snapshot()
    names = set(batch.thread_names.values())
    assert {"loader-0", threading.current_thread().name} <= names
    assert len(set(batch.tid.tolist())) == 2
    worker_tid = next(t for t, n in batch.thread_names.items() if n == "loader-0")
    assert (batch.tid == worker_tid).sum() == 4


class Scoped(Sequential):
    """Records the autograd scope token current inside its forward, as the engine would."""

    def __init__(self, log, *children):
        super().__init__(*children)
        self.log = log

    def forward(self, x, **kwargs):
        self.log.append(hooks.active.scope())
        return super().forward(x)


def test_backward_events_are_grouped_per_module_scope(clock, registry):
    log = []
    model = Sequential(Scoped(log), Scoped(log), Scoped(log))
    with profile(clock=clock, registry=registry) as p:
        model(np.zeros((2, 4)))
        prof = hooks.active
        assert prof.scope() is None
        a, b, c = log

        def run():
            # reverse order; two consecutive nodes of module "2" make one event
            for scope, name in [
                (c, "add"),
                (c, "matmul"),
                (b, "relu"),
                (a, "matmul"),
                (None, "sum"),
            ]:
                prof.backward_node(scope, name, lambda: clock.advance(10))
            return "done"

        assert prof.backward_call(run) == "done"
    assert log[0] == ("Scoped", "0")
    bw = [(e.name, e.path, e.duration_ns, e.depth) for e in p.events if e.kind == "backward"]
    assert bw == [
        ("Scoped.backward", "2", 20, 1),
        ("Scoped.backward", "1", 10, 1),
        ("Scoped.backward", "0", 10, 1),
        ("sum.backward", "", 10, 1),
        ("backward", "", 50, 0),
    ]
    root = next(e for e in p.events if e.name == "backward")
    assert all(e.parent == root.row for e in p.events if e.kind == "backward" and e.depth == 1)


def test_backward_node_outside_backward_call_just_runs(registry):
    with profile(registry=registry) as p:
        assert hooks.active.backward_node(("Linear", "0"), "matmul", lambda: 5) == 5
    assert p.events == []


def test_op_events_with_flops_and_module_totals(clock, registry):
    a, b = np.ones((8, 4)), np.ones((4, 16))

    class Mat(Sequential):
        def forward(self, x, **kwargs):
            return hooks.active.op_call("matmul", np.matmul, (x, b), {})

    with profile(clock=clock, registry=registry, record_ops=True) as p:
        assert hooks.active.record_ops
        Mat()(a)
    op = next(e for e in p.events if e.kind == "op")
    assert op.flops == 2 * 8 * 4 * 16
    assert op.shapes == "[(8, 4) float64, (4, 16) float64] -> (8, 16) float64"
    rows = {r["name"]: r for r in p.summary()}
    assert rows["Mat"]["flops"] == 2 * 8 * 4 * 16
    assert rows["Mat"]["bytes"] == a.nbytes + b.nbytes + 8 * 16 * 8


def test_profile_memory_counts_output_bytes_and_counter(clock, registry):
    model = mlp(clock)
    with profile(clock=clock, registry=registry, profile_memory=True) as p:
        out = model(np.zeros((32, 4)))
    ev = by_path(p)
    assert ev["0"].mem_bytes == 32 * 16 * 8
    assert ev[""].mem_bytes == 0  # returns its child's output: nothing new
    assert p.run.memory["host_peak_bytes"] >= out.nbytes
    t, v = p.run.counters["host tensor bytes"]
    assert len(t) == len(v) == 3 and v.max() == p.run.memory["host_peak_bytes"]


def test_profiler_and_run_registry(clock, registry):
    seen = []
    unsubscribe = registry.subscribe(seen.append)
    with profile(clock=clock, registry=registry, label="baseline") as p:
        assert p.run.status == "running"
        mlp(clock)(np.zeros((1, 4)))
    unsubscribe()
    with profile(clock=clock, registry=registry, label="baseline"):
        pass
    assert seen == [p.run]
    assert registry[p.run.id] is p.run
    assert registry["baseline"] is registry.latest is not p.run
    assert len(registry) == 2 and list(registry)[0] is p.run
    assert p.run.status == "completed" and p.run.options["record_shapes"] is True
    assert p.run.wall_ns > 0 and p.run.num_events == 4
    with pytest.raises(KeyError, match="no run"):
        registry["nope"]


def test_fake_clock_tick_gives_strictly_positive_durations():
    c = FakeClock(tick=1)
    assert c() < c()


def test_one_record_function_instance_shared_by_threads(registry):
    region = record_function("shared", source="both")
    barrier = threading.Barrier(2)

    def work():
        with region:
            barrier.wait()  # both threads are inside the same instance at once

    with profile(registry=registry) as p:
        t = threading.Thread(target=work)
        t.start()
        work()
        t.join()
    events = [e for e in p.events if e.name == "shared"]
    assert len(events) == 2 and len({e.thread_id for e in events}) == 2
    assert all(e.metadata == {"source": "both"} for e in events)


def test_shapes_follow_changing_batch_sizes(clock, registry):
    model = mlp(clock)
    with profile(clock=clock, registry=registry) as p:
        for rows in (32, 8, 32, 8, 8):
            model(np.zeros((rows, 4)))
    lin0 = [e.shapes for e in p.events if e.path == "0"]
    assert lin0 == [f"[({r}, 4) float64] -> ({r}, 16) float64" for r in (32, 8, 32, 8, 8)]
    seq = [e.shapes for e in p.events if e.path == ""]
    assert seq == [f"[({r}, 4) float64] -> ({r}, 2) float64" for r in (32, 8, 32, 8, 8)]


def test_numpy_counts_are_whole_numbers_for_warmup_and_schedules(registry):
    # np.int64(3) was refused ("use a whole number >= 0") while np.float64(3.0) passed
    p = Profiler(warmup=np.int64(3), registry=registry)
    assert p.warmup == 3 and type(p.warmup) is int
    s = schedule(wait=np.int64(1), warmup=np.int32(0), active=np.int64(2), repeat=np.uint8(1))
    assert (s.wait, s.warmup, s.active, s.repeat) == (1, 0, 2, 1)
    assert all(type(v) is int for v in (s.wait, s.warmup, s.active, s.repeat))
    assert [s.action(i) for i in range(4)] == ["wait", "active", "active", "done"]
    for bad in (np.True_, np.float64(1.0)):
        with pytest.raises(EveryOProfilerError, match="whole number"):
            schedule(wait=bad)
    with pytest.raises(EveryOProfilerError, match="warmup"):
        Profiler(warmup=np.True_, registry=registry)
