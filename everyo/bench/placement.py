"""Where a measurement ran: the worker's name and its environment record.

Executors (a Dask cluster's ``client.get_executor()``, a process pool) run sweep points and
benchmark grid points in other processes, often on other machines; each result says which
worker measured it and carries that worker's :func:`~everyo.environment_record.environment`.
``distributed`` is never imported here: inside a Dask worker it is already loaded.
"""

from __future__ import annotations

import functools
import os
import socket
import sys
from typing import Any

__all__ = ["worker_identity", "worker_name", "worker_environment"]


def worker_identity() -> dict[str, Any]:
    """This process as a worker: ``name``, ``address`` (a Dask worker's, else ``None``),
    ``host`` and ``pid``.

    Inside a Dask worker the name is the worker's name (``LocalCluster`` numbers them 0, 1...);
    elsewhere it is ``"host:pid"``.
    """
    host, pid = socket.gethostname(), os.getpid()
    worker = _dask_worker()
    if worker is not None:
        return {"name": str(worker.name), "address": worker.address, "host": host, "pid": pid}
    return {"name": f"{host}:{pid}", "address": None, "host": host, "pid": pid}


def worker_name() -> str:
    """The name :func:`worker_identity` gives this process."""
    return worker_identity()["name"]


def worker_environment() -> dict[str, Any]:
    """:func:`~everyo.environment_record.environment` of this process, computed once per process
    (it runs ``git``, a few milliseconds that each point of a sweep need not pay again), with
    the engine's subnormal flushing as it is now: :func:`everyo.set_flush_denormal` can switch
    it between two grids in one process."""
    from everyo.core.float_mode import flushing

    record = _environment_once()
    return {**record, "everyo": {**record["everyo"], "flush_denormal": flushing()}}


@functools.lru_cache(maxsize=1)
def _environment_once() -> dict[str, Any]:
    from everyo.environment_record import environment

    return environment()


def _dask_worker():
    """The Dask worker running the current task, or ``None`` (not in a Dask task)."""
    if "distributed" not in sys.modules:
        return None
    try:
        from distributed import get_worker

        return get_worker()
    except ValueError:  # "No worker found": not inside a task
        return None
