"""``profile_tasks`` and a sweep over Dask workers that run PyTorch: a LocalCluster with one
worker process started here; each task imports torch itself and trains a small model, and the
merged run holds every task's layers, backward and optimizer steps under its task region."""

from __future__ import annotations

import sys

import pytest

distributed = pytest.importorskip("distributed")
pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # a worker process that imports torch: seconds on 2 busy cores

import cloudpickle  # noqa: E402 - installed with distributed

from everyo.distributed import profile_tasks, sweep_batch_sizes  # noqa: E402
from everyo.profiler.export.chrome import export_chrome_trace  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])
WAIT_S = 180


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    client = distributed.Client(cluster)
    client.wait_for_workers(1, timeout=WAIT_S)
    yield client
    client.close()
    cluster.close()


def train_shard(seed):
    """Two SGD steps of a small MLP on one shard; torch is imported on the worker, in the task."""
    import torch

    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        model(torch.randn(4, 8)).square().mean().backward()
        opt.step()


def test_profile_tasks_records_torch_work_on_the_workers(client, tmp_path):
    run = profile_tasks(client, train_shard, range(3), label="torch-shards", timeout=WAIT_S)
    assert run.status == "completed" and len(run.tasks) == 3
    b = run.snapshot()
    names = [str(n) for n in b.name]
    kinds = [str(k) for k in b.kind]
    for task in run.tasks:
        assert names[task.row] == "task train_shard"
        inside = [
            r
            for r in range(len(b))
            if b.start_ns[task.row] <= b.start_ns[r] < b.start_ns[task.row] + b.dur_ns[task.row]
            and b.tid[r] == b.tid[task.row]
            and r != task.row
        ]
        got = {(kinds[r], names[r].split(" [")[0]) for r in inside}
        assert {("module", "Sequential"), ("module", "Linear"), ("optimizer", "SGD.step")} <= got
        assert sum(1 for k, n in got if k == "backward" and "Linear" in n) >= 1
        assert sum(1 for r in inside if names[r] == "SGD.step") == 2  # two steps per task
    export_chrome_trace(run, tmp_path / "torch-shards.json")  # (conftest checks the nesting)


def test_a_sweep_of_a_torch_model_runs_on_the_worker(client):
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU())
    result = sweep_batch_sizes(
        model,
        lambda n: torch.randn(n, 32),
        [4, 64],
        executor=client.get_executor(),
        warmup=1,
        repeat=3,
        progress=False,
        record_environment=False,
    )
    assert [r.status for r in result.rows] == ["ok", "ok"]
    assert {r.memory_source for r in result.rows} == {"rss"} and {r.worker for r in result.rows}
    assert result.memory_label == "host, resident-set growth"
