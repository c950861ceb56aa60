"""everyo on a Dask cluster: sweeps and benchmark grids one point per task, and profiles of
tasks on many workers merged into one run.

``import everyo.distributed`` does not import Dask: ``distributed`` (the ``dask`` extra,
``pip install 'everyo[dask]'``) is imported when a cluster is used. In-process stays the default
everywhere: without ``executor=`` a sweep or grid runs here.

With a cluster::

    from distributed import Client, LocalCluster
    client = Client(LocalCluster(n_workers=2, threads_per_worker=1))
    sweep = sweep_batch_sizes(model, make_batch, [32, 64, 128], executor=client.get_executor())
    run = profile_tasks(client, train_shard, shards, record_shapes=True)
"""

from everyo.bench.grid import benchmark_grid
from everyo.bench.sweep import sweep_batch_sizes
from everyo.distributed.clock import ClockOffset
from everyo.distributed.merge import DistributedRun, TaskRecord, WorkerRecord
from everyo.distributed.profile import profile_tasks

__all__ = [
    "profile_tasks",
    "sweep_batch_sizes",
    "benchmark_grid",
    "DistributedRun",
    "TaskRecord",
    "WorkerRecord",
    "ClockOffset",
]
