"""everyo.distributed on a real LocalCluster(n_workers=2, processes=True) started here: sweeps and
grids one point per task, profile_tasks merging both workers, and a worker killed mid-run.

One cluster for the module (workers are processes: they take seconds to start on 2 cores). The
worker-death and timeout tests run last: the dead worker comes back under a new address, and the
task given up on keeps its worker busy.
"""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.slow  # a cluster of worker processes: about a minute on 2 busy cores

import cloudpickle  # noqa: E402 - installed with distributed

import everyo.profiler as ep  # noqa: E402
from everyo.distributed import benchmark_grid, profile_tasks, sweep_batch_sizes  # noqa: E402
from everyo.profiler.export.chrome import export_chrome_trace  # noqa: E402

# workers cannot import this test module: send its functions by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

FEATURES = 10_000
PER_SAMPLE = 2 * FEATURES * 8  # the batch, plus the temporary x * 2.0 of the same size
QUICK = {"warmup": 0, "repeat": 2, "progress": False, "record_environment": False}
DOC = Path(__file__).resolve().parents[2] / "docs" / "distributed.md"
WAIT_S = 180  # generous: the 2 cores are shared with everything else running


@pytest.fixture(scope="module")
def client():
    import dask

    # a task whose worker dies fails at once (Dask's default would retry it on 3 more workers)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        )
    client = distributed.Client(cluster)
    client.wait_for_workers(2, timeout=WAIT_S)
    yield client
    client.close()
    cluster.close()


def make_batch(batch_size):
    return np.ones((batch_size, FEATURES))


def step(x):
    return float((x * 2.0).sum())


def test_sweep_on_the_cluster_gives_the_points_of_the_sweep_in_process(client):
    options = {**QUICK, "memory_limit": int(PER_SAMPLE * 10.5)}  # 10 samples fit, 16 do not
    here = sweep_batch_sizes(step, make_batch, [1, 8, 16], **options)
    there = sweep_batch_sizes(
        step, make_batch, [1, 8, 16], executor=client.get_executor(), **options
    )
    assert [(r.batch_size, r.status) for r in there.rows] == [
        (r.batch_size, r.status) for r in here.rows
    ]
    assert [r.status for r in there.rows] == ["ok", "ok", "oom"]
    for row in there.ok_rows:  # traced on the worker (its Dask threads allocate a little too:
        # heartbeats and comms add up to a few hundred KB while a point is measured)
        assert 0.95 * row.batch_size * PER_SAMPLE <= row.peak_memory
        assert row.peak_memory <= row.batch_size * PER_SAMPLE + 2**19
    assert {r.worker for r in there.rows} <= {"0", "1"}
    assert set(there.workers) == {r.worker for r in there.rows}
    assert all(env["python"]["version"] for env in there.workers.values())
    assert here.workers is None and {r.worker for r in here.rows} == {None}
    assert there.to_dict()["workers"] == there.workers


def setup_point(n, fn):
    return getattr(np, fn), np.ones(n)


def test_benchmark_grid_runs_one_point_per_task(client):
    grid = {"n": [10, 1000], "fn": ["tanh", "exp"]}
    results = benchmark_grid(setup_point, grid, executor=client.get_executor(), warmup=1, repeat=5)
    assert [r.workload["params"] for r in results] == [
        {"n": 10, "fn": "tanh"},
        {"n": 10, "fn": "exp"},
        {"n": 1000, "fn": "tanh"},
        {"n": 1000, "fn": "exp"},
    ]
    assert results[0].name == "setup_point[n=10, fn=tanh]" and results[0].n == 5
    assert {r.worker for r in results} <= {"0", "1"}
    assert all(r.environment["numpy"] for r in results)
    assert results[3].to_dict()["worker"] == results[3].worker


def shard(x):
    with ep.record_function("outer", shard=x):
        with ep.record_function("inner"):
            time.sleep(0.6 if x == 5 else 0.05)  # shard 5 is the planted straggler


def test_profile_tasks_merges_both_workers_into_one_run(client, tmp_path):
    run = profile_tasks(client, shard, range(8), label="shards", timeout=WAIT_S)
    assert run.status == "completed" and run.label == "shards"
    assert {t.worker for t in run.tasks} == {"0", "1"}
    assert [t.index for t in run.stragglers] == [5]
    b = run.snapshot()
    lane_names = dict(run.store.threads)
    for task in run.tasks:
        lane = b.tid[task.row]
        assert lane_names[lane] == f"worker {task.worker}"  # one thread per worker
        assert b.name[task.row] == "task shard" and b.depth[task.row] == 0
        (outer,) = [r for r in range(len(b)) if b.parent[r] == task.row]
        (inner,) = [r for r in range(len(b)) if b.parent[r] == outer]
        assert (b.name[outer], b.name[inner]) == ("outer", "inner")
        assert b.tid[outer] == b.tid[inner] == lane
        assert run.store.metadata[outer] == {"shard": task.index}
    # one machine, one clock: the true offset is 0, which must lie within each bound
    for worker in run.workers.values():
        assert abs(worker.clock.offset_ns) <= worker.clock.uncertainty_ns
        assert worker.environment["python"]["version"]
    assert len({run.processes[t][0] for t in lane_names}) == 2
    trace = json.loads(open(export_chrome_trace(run, tmp_path / "shards.json")).read())
    pids = {
        e["args"]["metadata"]["task"]: e["pid"]
        for e in trace["traceEvents"]
        if e.get("name") == "task shard"
    }
    process_of = {w.name: w.process for w in run.workers.values()}
    assert pids == {t.index: process_of[t.worker] for t in run.tasks}


def test_docs_examples_run_on_the_cluster(client, tmp_path, monkeypatch, capsys):
    """docs/distributed.md's code, after its first block (which starts a cluster like this
    module's), runs as written and gives what the text says."""
    found = re.findall(r"^([ \t]*)```python\n(.*?)^\1```", DOC.read_text(), flags=re.S | re.M)
    blocks = [textwrap.dedent(body) for _, body in found]
    assert "LocalCluster(" in blocks[0] and len(blocks) == 4
    monkeypatch.chdir(tmp_path)
    ns = {"__name__": "__docs__", "client": client}
    for block in blocks[1:]:
        exec(compile(block, str(DOC), "exec"), ns)
    here, there = ns["here"], ns["there"]
    assert [(r.batch_size, r.status) for r in there.rows] == [
        (r.batch_size, r.status) for r in here.rows
    ]
    assert there.workers and set(there.workers) <= {"0", "1"}
    assert [r.workload["params"]["width"] for r in ns["results"]] == [128, 512, 128, 512]
    run = ns["run"]
    assert run.status == "completed" and {t.worker for t in run.tasks} == {"0", "1"}
    assert 5 in [t.index for t in run.stragglers]  # 10x the work of the others
    trace = json.loads((tmp_path / "shards-trace.json").read_text())
    names = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "process_name"}
    assert {n.split(" (")[0] for n in names} == {"worker 0", "worker 1"}
    assert "on worker" in capsys.readouterr().out


def doomed(x):
    with ep.record_function("outer", shard=x):
        time.sleep(0.1)
        if x == 2:
            time.sleep(0.3)
            os._exit(1)  # the worker process dies in the middle of the task


def test_a_worker_killed_mid_run_is_reported_and_the_other_events_kept(client):
    run = profile_tasks(client, doomed, range(6), timeout=WAIT_S)
    killed = run.tasks[2]
    assert killed.status == "failed" and killed.error.startswith("KilledWorker")
    assert run.status == "failed" and killed.worker in run.lost_workers
    b = run.snapshot()
    lanes = dict(run.store.threads)
    # where it died: the worker's lane (its restarted process, if it ran tasks, has another)
    assert lanes[b.tid[killed.row]].startswith(f"worker {killed.worker}")
    assert run.store.metadata[killed.row]["error"] == killed.error
    for task in run.tasks:
        if task.ok:  # every finished task keeps its events, nested
            (outer,) = [r for r in range(len(b)) if b.parent[r] == task.row]
            assert b.name[outer] == "outer"
        else:  # queued on the dying worker, or the one that killed it
            assert task.error.startswith("KilledWorker") and task.worker == killed.worker
    survivor = ({"0", "1"} - {killed.worker}).pop()
    assert any(t.ok and t.worker == survivor for t in run.tasks)


def sleepy(x):
    with ep.record_function("outer", shard=x):
        time.sleep(20 if x == 0 else 0.05)


def test_tasks_past_the_timeout_are_cancelled_and_marked(client):
    # runs last: the sleeping task keeps its worker busy after it is given up on
    client.wait_for_workers(2, timeout=WAIT_S)
    run = profile_tasks(client, sleepy, range(4), timeout=3)
    late = run.tasks[0]
    assert late.status == "failed" and late.error.startswith("TimeoutError: no result within")
    # no events came back, but its start note places it on its worker's lane, until given up
    assert run.store.metadata[late.row]["error"] == late.error
    assert dict(run.store.threads)[run.snapshot().tid[late.row]] == f"worker {late.worker}"
    for task in run.tasks[1:]:
        assert task.ok or task.error.startswith("TimeoutError")
    assert any(t.ok and t.row is not None for t in run.tasks)
