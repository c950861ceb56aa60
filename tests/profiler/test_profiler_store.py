"""EventStore and RunRegistry: bytes per event, chunking, live reads under a writer, eviction."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from profiler_fakes import mlp

from everyo.profiler import EveryOProfilerWarning, RunRegistry, profile, record_function
from everyo.profiler.recording import hooks
from everyo.profiler.storage.run import Run, _postorder_parents_numpy, postorder_parents
from everyo.profiler.storage.store import CORE_COLUMNS, EventStore


def _rows(k: int, start: int = 0) -> dict:
    r = np.arange(start, start + k, dtype=np.int64)
    return {
        "start_ns": r * 10,
        "dur_ns": r % 7,
        "key": (r % 3).astype(np.int32),
        "thread": np.zeros(k, np.int16),
        "depth": np.zeros(k, np.int16),
    }


def test_core_columns_take_24_bytes_per_event():
    store = EventStore()
    n = 100_000
    for lo in range(0, n, 7_000):
        store.append(_rows(min(7_000, n - lo), lo))
    cols = store.read()
    measured = sum(cols[name].nbytes for name, _ in CORE_COLUMNS) / len(store)
    assert len(store) == n and measured == 24  # the figure docs/profiler.md states
    assert store.nbytes / n == measured == store.core_row_bytes
    # the chunks hold no more than one chunk of unused capacity
    assert store.allocated_bytes <= store.nbytes * 2 + 4096 * 32


def test_optional_columns_exist_only_when_on(clock, registry):
    with profile(clock=clock, registry=registry, record_shapes=False) as p:
        mlp(clock)(np.zeros((1, 4)))
    assert p.run.store.columns == tuple(name for name, _ in CORE_COLUMNS)
    with profile(clock=clock, registry=registry, record_ops=True, profile_memory=True) as p:
        mlp(clock)(np.zeros((1, 4)))
    assert {"shape", "flops", "bytes", "mem_bytes"} <= set(p.run.store.columns)


def test_read_ranges_across_chunks():
    store = EventStore()
    store.append(_rows(5000))
    store.append(_rows(5000, 5000))
    part = store.read(4090, 8200)
    assert (part["start_ns"] == np.arange(4090, 8200) * 10).all()
    assert len(store.read(9999)) and len(store.read(20_000)["start_ns"]) == 0


def test_postorder_parents():
    # thread 0: a(b(c), d) ; thread 1: x(y) interleaved in the store
    tid = np.array([0, 0, 1, 0, 1, 0])
    depth = np.array([2, 1, 1, 1, 0, 0])  # c b y d x a
    assert postorder_parents(tid, depth, 10).tolist() == [11, 15, 14, 15, -1, -1]
    # a parent not finished yet reads as -1
    assert postorder_parents(tid[:2], depth[:2]).tolist() == [1, -1]


def _parents_by_definition(tid, depth, first_row):
    """The definition, row by row: the next row of the same thread one level up."""
    out = []
    for i, (t, d) in enumerate(zip(tid, depth)):
        nxt = [j for j in range(i + 1, len(tid)) if tid[j] == t and depth[j] == d - 1]
        out.append(nxt[0] + first_row if nxt and d > 0 else -1)
    return out


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("impl", ["default", "numpy"])
def test_postorder_parents_match_the_definition_on_random_batches(threads, impl):
    parents = postorder_parents if impl == "default" else _postorder_parents_numpy
    rng = np.random.default_rng(threads)
    for _ in range(100):
        n = int(rng.integers(1, 60))
        tid = rng.integers(0, threads, n).astype(np.int16)
        depth = rng.integers(0, 5, n).astype(np.int16)
        assert parents(tid, depth, 7).tolist() == _parents_by_definition(tid, depth, 7)


def test_postorder_parents_take_any_thread_labels():
    # thread ids, not indices: beyond what the compiled loop takes, NumPy's answers
    tid = np.array([140_000_000_001, 140_000_000_001, 7, 140_000_000_001, 7, 140_000_000_001])
    depth = np.array([2, 1, 1, 1, 0, 0])
    assert postorder_parents(tid, depth, 10).tolist() == [11, 15, 14, 15, -1, -1]
    assert postorder_parents(tid[:0], depth[:0]).tolist() == []
    # labels and depths at the compiled loop's table limit (4,096) and beyond: NumPy's answers
    for big in (4095, 4096, 65_536):
        assert postorder_parents(np.array([big, big]), np.array([1, 0]), 3).tolist() == [4, -1]
        assert postorder_parents(np.array([0, 0]), np.array([big, big - 1])).tolist() == [1, -1]


def test_live_reader_thread_sees_every_row_once_while_writer_runs(registry):
    model = mlp()
    stop = threading.Event()
    seen, cursors = [], []
    with profile(registry=registry) as p:
        run = p.run

        def reader():
            cursor = 0
            while not stop.is_set():
                batch, cursor = run.events_since(cursor)
                seen.extend(batch.row.tolist())
                cursors.append(cursor)
                time.sleep(0.001)
            batch, cursor = run.events_since(cursor)
            seen.extend(batch.row.tolist())

        t = threading.Thread(target=reader)
        t.start()
        steps, deadline = 0, time.monotonic() + 30
        # more than one flush of the writer's buffer, and (on a fast machine the writer may be
        # done before the reader runs again) until the reader has seen rows arrive
        while steps < 3000 or (len(set(cursors)) < 2 and time.monotonic() < deadline):
            with record_function("step"):
                model(np.zeros((1, 4)))
            steps += 1
        p.stop()
        stop.set()
        t.join()
    assert seen == list(range(run.num_events)) and run.num_events == steps * 5
    assert cursors == sorted(cursors) and len(set(cursors)) > 1


def test_registry_evicts_oldest_finished_runs_with_a_warning(clock):
    reg = RunRegistry(budget_bytes=10**9)
    kept = []
    for i in range(3):
        with profile(clock=clock, registry=reg, label=f"r{i}") as p:
            for _ in range(50):
                mlp(clock)(np.zeros((1, 4)))
        kept.append(p.run)
    size = kept[0].nbytes
    reg.budget_bytes = 2 * size + size // 2
    with pytest.warns(EveryOProfilerWarning, match="evicted run"):
        reg.enforce_budget()
    assert list(reg) == kept[1:]
    with pytest.warns(EveryOProfilerWarning, match="budget_bytes"):
        with profile(clock=clock, registry=reg, label="r3") as p:
            for _ in range(50):
                mlp(clock)(np.zeros((1, 4)))
    assert [r.label for r in reg] == ["r2", "r3"] and reg.latest is p.run


def test_every_removal_tells_the_removal_subscribers(clock):
    """remove(), clear() and the budget's evictions go through one notification, so whatever
    shows a run (a dashboard, a run picker) hears that it must let it go."""
    reg = RunRegistry()
    made = []
    for label in ("a", "b", "c", "d", "e"):
        with profile(clock=clock, registry=reg, label=label) as p:
            mlp(clock)(np.zeros((1, 4)))
        made.append(p.run)
    heard = []
    unsubscribe = reg.subscribe_removals(lambda run, reason: heard.append((run.label, reason)))
    reg.remove(made[1])
    reg.remove(made[1])  # not held any more: nothing to tell
    reg.budget_bytes = made[-1].nbytes + made[-2].nbytes
    with pytest.warns(EveryOProfilerWarning, match="evicted run"):
        reg.enforce_budget()
    reg.clear()
    assert heard == [
        ("b", "removed"),
        ("a", "evicted"),
        ("c", "evicted"),
        ("d", "removed"),
        ("e", "removed"),
    ]
    unsubscribe()
    reg.add(made[0])
    reg.clear()
    assert len(heard) == 5


def test_running_run_is_never_evicted(clock):
    reg = RunRegistry(budget_bytes=0)
    with profile(clock=clock, registry=reg) as p:
        mlp(clock)(np.zeros((1, 4)))
        assert reg.enforce_budget() == []
        assert reg.latest is p.run
    assert hooks.active is None
    assert reg.latest is p.run  # the only run: nothing older to evict


def test_run_fields(clock, registry):
    with profile(clock=clock, registry=registry, label="fields") as p:
        clock.advance(1_000)
        assert p.run.wall_ns >= 1_000
    r = p.run
    assert isinstance(r, Run) and r.id.startswith("run-") and r.label == "fields"
    assert r.start_time > 1.5e9 and r.error is None
    assert {"python"} <= set(r.environment)
    assert r.header()["status"] == "completed"
    assert "fields" in repr(r)


def test_schedule_keeps_ancestors_of_recorded_events(clock, registry):
    from everyo.profiler import schedule

    model = mlp(clock)
    with profile(clock=clock, registry=registry, schedule=schedule(active=2, repeat=1)) as p:
        with record_function("epoch"):
            for _ in range(4):
                model(np.zeros((1, 4)))
                p.step()
    events = p.events
    assert [e.name for e in events].count("Sequential") == 2
    epoch = events[-1]
    assert epoch.name == "epoch" and epoch.depth == 0
    roots = [e for e in events if e.name == "Sequential"]
    assert all(e.parent == epoch.row for e in roots)


def test_from_columns_accepts_rows_in_any_order():
    # pre-order input (parent first), as a hand-built synthetic run would give it
    cols = {
        "start_ns": np.array([0, 10, 60, 100, 110]),
        "dur_ns": np.array([90, 40, 20, 90, 40]),
        "key": np.array([0, 1, 1, 0, 1], np.int32),
        "thread": np.zeros(5, np.int16),
        "depth": np.array([0, 1, 1, 0, 1], np.int16),
    }
    store = EventStore.from_columns(
        cols,
        [("module", "Seq", ""), ("module", "Lin", "0")],
        threads=[(1, "MainThread")],
        metadata={3: {"second": True}},
    )
    run = Run(store, environment={})
    batch = run.snapshot()
    assert batch.start_ns.tolist() == [10, 60, 0, 110, 100]
    assert batch.parent.tolist() == [2, 2, -1, 4, -1]
    assert batch.self_ns.tolist() == [40, 20, 30, 40, 50]
    assert batch.metadata[4] == {"second": True}
