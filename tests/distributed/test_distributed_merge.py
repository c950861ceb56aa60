"""merge_tasks with hand-made task payloads (no cluster): clock alignment, one lane and one
Chrome process per worker, nesting, stragglers, failed tasks, the dashboard's lanes."""

from __future__ import annotations

import json

import numpy as np
import pytest

import everyo.profiler as ep
from everyo.distributed.clock import ClockOffset
from everyo.distributed.merge import TaskOutcome, merge_tasks
from everyo.profiler.export.chrome import export_chrome_trace

TASK = "task work"
ORIGIN = 1_700_000_000_000_000_000  # client wall clock, ns
OFFSETS = {"tcp://a": ClockOffset(5_000_000, 1000, 5), "tcp://b": ClockOffset(-3_000_000, 800, 5)}
WORKERS = {
    "tcp://a": {"name": "0", "address": "tcp://a", "host": "h", "pid": 11},
    "tcp://b": {"name": "1", "address": "tcp://b", "host": "h", "pid": 12},
}


def payload(index, address, start_ns, dur_ns, *, error=None, thread=77):
    """A task as run_profiled returns it: task > outer > inner on one thread, post-order.

    ``start_ns`` is when the task's profiler started, in client time; the payload carries it
    on its worker's clock (ahead by the worker's offset)."""
    worker_start = ORIGIN + start_ns + OFFSETS[address].offset_ns
    keys = [("user", "inner", ""), ("user", "outer", ""), ("user", TASK, "")]
    rows = [(0, 2, 10, dur_ns - 30), (1, 1, 5, dur_ns - 15), (2, 0, 0, dur_ns)]
    cols = {
        "start_ns": np.array([r[2] for r in rows], np.int64),
        "dur_ns": np.array([r[3] for r in rows], np.int64),
        "key": np.array([r[0] for r in rows], np.int32),
        "thread": np.zeros(3, np.int16),
        "depth": np.array([r[1] for r in rows], np.int16),
    }
    return {
        "index": index,
        "worker": WORKERS[address],
        "environment": {"host": WORKERS[address]["name"]},
        "error": error,
        "start_time": worker_start / 1e9,
        "wall_ns": dur_ns,
        "options": {"record_shapes": False},
        "columns": cols,
        "keys": keys,
        "shapes": [],
        "threads": [(thread, "Dask-Default-Threads-0")],
        "metadata": {2: {"task": index}, 1: {"x": index}},
        "counters": {},
        "thread": thread,
    }


def merged(outcomes, **kwargs):
    return merge_tasks(
        outcomes,
        OFFSETS,
        origin_ns=ORIGIN,
        end_ns=ORIGIN + 10_000_000_000,
        task_name=TASK,
        label="merged",
        workers=WORKERS,
        **kwargs,
    )


@pytest.fixture
def run():
    durations = [100_000, 110_000, 90_000, 105_000, 600_000]  # task 4 is a straggler
    outcomes = []
    for i, dur in enumerate(durations):
        address = "tcp://a" if i % 2 == 0 else "tcp://b"
        outcomes.append(TaskOutcome(i, payload(i, address, 1_000_000 * (i + 1), dur)))
    return merged(outcomes)


def test_tasks_land_on_the_client_clock(run):
    # every worker's own clock was off by its offset: the merge takes it back out exactly
    # (exact but for the float seconds of Run.start_time: a quarter of a microsecond today)
    starts = [t.start_ns for t in run.tasks]
    assert starts == pytest.approx([1_000_000 * (i + 1) for i in range(5)], abs=500)
    assert [t.dur_ns for t in run.tasks] == [100_000, 110_000, 90_000, 105_000, 600_000]
    assert run.start_time == pytest.approx(ORIGIN / 1e9)
    assert run.workers["0"].clock == OFFSETS["tcp://a"]


def test_one_lane_and_one_process_per_worker(run, tmp_path):
    batch = run.snapshot()
    names = {t: n for t, n in run.store.threads}
    assert sorted(names.values()) == ["worker 0", "worker 1"]  # one thread each: no thread name
    for task in run.tasks:
        assert names[batch.tid[task.row]] == f"worker {task.worker}"
    assert {p for p, _ in run.processes.values()} == {2, 3}
    trace = json.loads(open(export_chrome_trace(run, tmp_path / "t.json")).read())
    events = trace["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert procs == {2: "worker 0 (tcp://a)", 3: "worker 1 (tcp://b)"}
    pid_of_task = {e["args"]["metadata"]["task"]: e["pid"] for e in events if e.get("name") == TASK}
    assert pid_of_task == {0: 2, 1: 3, 2: 2, 3: 3, 4: 2}
    again = ep.load(tmp_path / "t.json")  # the processes survive a round trip
    assert sorted(again.processes.values()) == sorted(run.processes.values())


def test_nesting_is_intact(run):
    b = run.snapshot()
    for task in run.tasks:
        outer = [r for r in range(len(b)) if b.parent[r] == task.row]
        assert [b.name[r] for r in outer] == ["outer"]
        inner = [r for r in range(len(b)) if b.parent[r] == outer[0]]
        assert [b.name[r] for r in inner] == ["inner"]
        assert b.tid[inner[0]] == b.tid[outer[0]] == b.tid[task.row]
        assert b.start_ns[task.row] <= b.start_ns[outer[0]] <= b.start_ns[inner[0]]


def test_straggler_is_flagged_in_tasks_and_event_metadata(run):
    assert [t.index for t in run.stragglers] == [4]
    assert run.median_task_ns == 105_000
    assert run.tasks[4].slowdown == pytest.approx(600 / 105)
    meta = run.store.metadata[run.tasks[4].row]
    assert meta["straggler"] is True and meta["worker"] == "0" and meta["status"] == "ok"
    assert run.store.metadata[run.tasks[0].row]["straggler"] is False
    assert run.status == "completed"
    assert merged(run_outcomes_again(), straggler_factor=10.0).stragglers == []


def run_outcomes_again():
    return [
        TaskOutcome(i, payload(i, "tcp://a", 1_000_000 * i + 1, d))
        for i, d in enumerate([100_000, 100_000, 600_000])
    ]


def test_a_task_whose_worker_died_is_marked_and_the_others_kept():
    note = {
        "token": "t",
        "index": 1,
        "t_ns": ORIGIN + 2_000_000 + OFFSETS["tcp://b"].offset_ns,
        "worker": "1",
        "address": "tcp://b",
        "thread": 99,
        "thread_name": "Dask-1",
    }
    outcomes = [
        TaskOutcome(0, payload(0, "tcp://a", 1_000_000, 100_000)),
        TaskOutcome(
            1,
            error="KilledWorker: it died",
            observed_ns=ORIGIN + 5_000_000,
            note=note,
            worker={"name": "1", "address": "tcp://b"},
        ),
        TaskOutcome(2, error="TimeoutError: no result", observed_ns=ORIGIN + 6_000_000),
        TaskOutcome(3, payload(3, "tcp://a", 3_000_000, 100_000, error="ValueError: bad")),
    ]
    run = merged(outcomes, lost={"1"})
    assert run.status == "failed" and run.error.startswith("3 of 4 tasks failed; task 1")
    died, timed_out, raised = run.tasks[1], run.tasks[2], run.tasks[3]
    assert (died.status, died.worker, died.error) == ("failed", "1", "KilledWorker: it died")
    assert (died.start_ns, died.dur_ns) == (2_000_000, 3_000_000)  # from its start note
    assert run.store.metadata[died.row] == {
        "task": 1,
        "worker": "1",
        "status": "failed",
        "error": "KilledWorker: it died",
        "straggler": False,
        "slowdown": None,
    }
    assert timed_out.row is None and timed_out.error.startswith("TimeoutError")
    assert raised.error == "ValueError: bad" and raised.row is not None  # its events are kept
    assert run.tasks[0].ok and run.lost_workers == ["1"]
    assert run.num_events == 3 + 1 + 3
    header = run.header()["distributed"]
    assert header["tasks"][1]["error"] == "KilledWorker: it died"
    assert header["workers"]["1"]["lost"] is True


def test_dashboard_views_show_one_band_per_worker(run):
    pytest.importorskip("everyo_lab")
    from everyo_lab.views._batch import lanes

    _, bands = lanes(run.snapshot())
    assert sorted(name for _, name in bands) == ["worker 0", "worker 1"]


def _with_machine(p, verdict, others):
    from everyo.machine_state import Reading, judge

    hz = 100.0
    end = Reading(1.0, (others + 1.0) * hz, 1.0 * hz, 3, "proc")
    state = judge(Reading(0.0, 0.0, 0.0, 0, "proc"), end, cores=2, threads={"blas": 2})
    assert state.verdict == verdict
    return {**p, "machine": state.to_dict()}


def test_the_merged_run_carries_the_least_trusted_workers_machine_state(tmp_path):
    """Each task brings its worker's machine state; the run's is the least trustworthy one,
    naming the worker and task, so the run's notes and exports say a worker was contended."""
    import everyo.machine_state as ms

    if ms._HZ != 100:
        pytest.skip("the fake readings assume 100 ticks a second")
    outcomes = [
        TaskOutcome(0, _with_machine(payload(0, "tcp://a", 1_000_000, 100_000), "quiet", 0.0)),
        TaskOutcome(1, _with_machine(payload(1, "tcp://b", 2_000_000, 100_000), "contended", 1.5)),
        TaskOutcome(2, payload(2, "tcp://a", 3_000_000, 100_000)),  # an older worker: none
    ]
    run = merged(outcomes)
    assert [t.machine and t.machine["verdict"] for t in run.tasks] == ["quiet", "contended", None]
    state = run.machine_state
    assert state.verdict == "contended" and state.extra["worker"] == "1"
    assert state.reason.startswith("task 1 on worker 1: other processes used 1.5 of 2 cores")
    again = ep.load(export_chrome_trace(run, tmp_path / "t.json"))
    assert again.machine_state.verdict == "contended"
    quiet = merged([TaskOutcome(0, payload(0, "tcp://a", 1_000_000, 100_000))])
    assert quiet.machine_state is None  # nothing was recorded: nothing is claimed
