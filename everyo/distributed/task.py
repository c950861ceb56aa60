"""What a worker runs for :func:`~everyo.distributed.profile_tasks`: ``fn(value)`` under the
everyo profiler, returned as plain columns (a ``Run`` holds locks and does not pickle).

The profiler records one session per process, so the profiled tasks of one worker take turns
(a lock); workers with one thread each lose nothing by it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from everyo.bench.placement import worker_environment, worker_identity

__all__ = ["run_profiled", "task_name", "START_TOPIC"]

START_TOPIC = "everyo-task-start"
"""Dask event topic of the note a worker logs when a profiled task starts."""

_one_profiler = threading.Lock()


def task_name(fn: Any) -> str:
    """The name of the region that wraps each task: ``"task <function name>"``."""
    return f"task {getattr(fn, '__name__', None) or type(fn).__name__}"


def run_profiled(fn, value, index: int, token: str, options: dict) -> dict[str, Any]:
    """Run ``fn(value)`` inside a ``task`` region under a fresh profiler; return its events.

    An exception in ``fn`` is caught: the events recorded so far come back with the error.
    """
    from everyo.profiler.profiler import Profiler, record_function
    from everyo.profiler.storage.run import RunRegistry

    identity = worker_identity()
    with _one_profiler:
        _announce(token, index, identity)
        profiler = Profiler(**options, label=f"task {index}", registry=RunRegistry())
        error = None
        try:
            with profiler, record_function(task_name(fn), task=index):
                fn(value)
        except Exception as exc:  # noqa: BLE001 - the task's error is data, sent back
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        run = profiler.run
    store = run.store
    return {
        "index": index,
        "worker": identity,
        "environment": worker_environment(),
        "error": error,
        "start_time": run.start_time,
        "wall_ns": run.wall_ns,
        "options": dict(run.options),
        "columns": store.read(),
        "keys": list(store.keys),
        "shapes": list(store.shapes),
        "threads": list(store.threads),
        "metadata": dict(store.metadata),
        "counters": {k: (t.copy(), v.copy()) for k, (t, v) in run.counters.items()},
        "thread": threading.get_native_id(),
        "machine": run.machine,  # what the worker's machine did during the task
    }


def _announce(token: str, index: int, identity: dict) -> None:
    """Tell the scheduler (Dask's structured events) that the task starts, and when: if the
    worker dies during the task, this note is what places the failed task on its lane."""
    from everyo.bench.placement import _dask_worker

    worker = _dask_worker()
    if worker is None:
        return
    note = {
        "token": token,
        "index": index,
        "t_ns": time.time_ns(),
        "worker": identity["name"],
        "address": identity["address"],
        "thread": threading.get_native_id(),
        "thread_name": threading.current_thread().name,
    }
    worker.log_event(START_TOPIC, note)
