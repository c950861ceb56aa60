"""``profile_tasks``: profile a function on each input across a Dask cluster, as one run."""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from everyo.distributed.clock import ClockOffset, combine_offsets, estimate_offsets, worker_time_ns
from everyo.distributed.merge import DistributedRun, TaskOutcome, merge_tasks
from everyo.distributed.task import START_TOPIC, run_profiled, task_name
from everyo.errors import EveryOConfigError, EveryOProfilerError

__all__ = ["profile_tasks", "require_distributed"]

NOT_FOR_WORKERS = ("clock",)


def require_distributed():
    """Import Dask's ``distributed`` (only when a cluster is used), or say how to install it."""
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(
            "everyo.distributed runs work on a Dask cluster and needs Dask's `distributed` "
            "package: pip install 'everyo[dask]'"
        ) from exc
    return distributed


def profile_tasks(
    client: Any,
    fn: Callable[[Any], Any],
    inputs: Iterable[Any],
    *,
    label: str | None = None,
    straggler_factor: float = 2.0,
    timeout: float | None = None,
    clock_rounds: int = 5,
    registry: Any = None,
    **profiler_options: Any,
) -> DistributedRun:
    """Run ``fn(x)`` for each ``x`` of ``inputs`` on the cluster's workers under the everyo
    profiler, and merge every task's events into one run.

    Each task is one Dask task: ``fn(x)`` inside a region named ``"task <fn name>"`` (metadata
    ``task=<input index>``), profiled on its worker with ``profiler_options``. Its events come
    back to the client and are moved onto the client's clock; each worker thread is a lane of
    its own (``"worker <name>"``, or ``"worker <name> · <thread>"`` for a worker whose tasks
    used several threads), and a process of its own per worker in Chrome traces. The result
    opens in the dashboard and exports like any run.

    Parameters
    ----------
    client : distributed.Client
        A client of the cluster (not ``client.get_executor()``).
    fn : callable
        Called once per input on a worker; its return value is not kept.
    inputs : iterable
        One task per item.
    label : str, optional
        The merged run's label.
    straggler_factor : float
        A task slower than this multiple of the median task duration is a straggler
        (``run.stragglers``; ``straggler: True`` in its event's metadata). Must be > 1.
    timeout : float, optional
        Seconds to wait for all tasks; tasks without a result by then are cancelled and marked
        failed (``TimeoutError``). ``None``: wait until Dask settles every task, which it does
        when a worker dies (at once when its process exits; after
        ``distributed.scheduler.worker-ttl``, 5 minutes by default, when it hangs).
    clock_rounds : int
        Round trips per worker used to estimate its clock offset, before and after the tasks.
    registry : RunRegistry, optional
        Where the merged run is kept (``everyo.profiler.runs`` by default, so that
        ``%everyo_dashboard`` lists it like any other run).
    **profiler_options
        ``warmup``, ``record_shapes``, ``record_ops``, ``profile_memory``, ``schedule``: as
        :class:`~everyo.profiler.Profiler`.

    Returns
    -------
    DistributedRun
        ``run.tasks`` (status, error, worker, aligned start and duration, straggler flag),
        ``run.workers`` (clock offset and its error bound, environment record, lost or not),
        ``run.stragglers``, ``run.failed``. The run is ``"failed"`` when any task failed.

    Notes
    -----
    A task whose ``fn`` raises keeps its events up to the error and is marked failed with it.
    A task whose worker dies has no events; Dask reruns it elsewhere up to
    ``distributed.scheduler.allowed-failures`` times (3 by default), then gives up with
    ``KilledWorker``: the task is marked failed with that error, placed on the dead worker's
    lane from the moment it started there, and the worker is listed in ``run.lost_workers``.
    """
    distributed = require_distributed()
    inputs = _check(client, fn, inputs, straggler_factor, timeout, clock_rounds)
    options = _profiler_options(profiler_options)
    known = _workers(client)
    if not known:
        raise EveryOConfigError(
            "the cluster has no workers yet: start some, or wait for them with "
            "client.wait_for_workers(n), then call profile_tasks again"
        )
    before = _clocks(client, clock_rounds)
    token = uuid.uuid4().hex[:12]
    origin = time.time_ns()
    futures = [
        client.submit(
            run_profiled, fn, x, i, token, options, pure=False, key=f"everyo-task-{token}-{i}"
        )
        for i, x in enumerate(inputs)
    ]
    outcomes = _collect(distributed, futures, timeout)
    end = time.time_ns()
    after = _clocks(client, clock_rounds, quiet=True)
    now = _workers(client, quiet=True)
    _attach_notes(client, token, outcomes)
    seen = {**known, **_addresses(outcomes)}
    # a worker is lost when its address left the cluster (unknown if the scheduler did not answer)
    lost = set() if now is None else {i["name"] for a, i in seen.items() if a not in now}
    run = merge_tasks(
        outcomes,
        combine_offsets(before, after),
        origin_ns=origin,
        end_ns=end,
        task_name=task_name(fn),
        label=label or f"{task_name(fn)} on {len(seen)} workers",
        straggler_factor=float(straggler_factor),
        workers={**seen, **(now or {})},
        lost=lost,
    )
    if registry is None:
        from everyo.profiler.storage.run import runs as registry
    registry.add(run)
    return run


def _check(client, fn, inputs, straggler_factor, timeout, clock_rounds) -> list:
    if not (callable(getattr(client, "submit", None)) and callable(getattr(client, "run", None))):
        raise EveryOConfigError(
            "profile_tasks needs a dask.distributed Client (it runs tasks and asks every "
            f"worker for its clock), got {type(client).__name__}; pass the client itself, "
            "not client.get_executor()"
        )
    if not callable(fn):
        raise EveryOConfigError(f"fn must be a function fn(input), got {type(fn).__name__}")
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Iterable):
        raise EveryOConfigError(
            f"inputs must be an iterable of inputs (one task each), got {type(inputs).__name__}"
        )
    inputs = list(inputs)
    if not inputs:
        raise EveryOConfigError("inputs is empty: give at least one input to profile")
    if not _number(straggler_factor) or straggler_factor <= 1:
        raise EveryOConfigError(
            f"straggler_factor is a multiple of the median task time, > 1, got {straggler_factor!r}"
        )
    if timeout is not None and (not _number(timeout) or timeout <= 0):
        raise EveryOConfigError(f"timeout is a number of seconds > 0 or None, got {timeout!r}")
    if isinstance(clock_rounds, bool) or not isinstance(clock_rounds, int) or clock_rounds < 1:
        raise EveryOConfigError(f"clock_rounds must be an integer >= 1, got {clock_rounds!r}")
    return inputs


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _profiler_options(options: dict) -> dict:
    """Check the options here, before any task runs (a bad one raises as Profiler does)."""
    from everyo.profiler.profiler import Profiler

    bad = [k for k in NOT_FOR_WORKERS if k in options]
    if bad:
        raise EveryOProfilerError(
            "profile_tasks does not take clock=: each worker profiles with its own clock, "
            "and the merge moves every event onto the client's"
        )
    try:
        Profiler(**options)
    except TypeError as exc:
        raise EveryOProfilerError(
            f"profile_tasks: {exc}; profiler options are warmup, record_shapes, record_ops, "
            "profile_memory and schedule"
        ) from exc
    return dict(options)


def _workers(client, quiet: bool = False) -> dict[str, dict] | None:
    """Address -> identity of the workers the scheduler knows now (``None``: no answer, with
    ``quiet``)."""
    try:
        info = client.scheduler_info(n_workers=-1)["workers"]
    except TypeError:  # older distributed: no n_workers
        info = client.scheduler_info()["workers"]
    except Exception:
        if not quiet:
            raise
        return None
    return {
        a: {"name": str(w.get("name", a)), "address": a, "host": w.get("host"), "pid": w.get("pid")}
        for a, w in info.items()
    }


def _clocks(client, rounds: int, quiet: bool = False) -> dict[str, ClockOffset]:
    def ask():
        answers = client.run(worker_time_ns, on_error="return")
        return {a: t for a, t in answers.items() if isinstance(t, int)}

    try:
        return estimate_offsets(ask, rounds=rounds)
    except Exception:
        if not quiet:
            raise
        return {}  # after the tasks: a broken cluster must not lose the events gathered


def _collect(distributed, futures, timeout) -> list[TaskOutcome]:
    """Wait for every task (at most ``timeout`` s); an outcome per task, in input order."""
    outcomes = [TaskOutcome(i) for i in range(len(futures))]
    index = {f.key: i for i, f in enumerate(futures)}
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        for future in distributed.as_completed(futures, timeout=timeout):
            o = outcomes[index[future.key]]
            _settle(o, future, deadline)
            future.release()  # the payload is on the client now; free the worker's copy
    except TimeoutError:
        pass
    for o, future in zip(outcomes, futures):
        if o.payload is None and o.error is None:
            future.cancel()
            o.error = f"TimeoutError: no result within timeout={timeout} s; the task was cancelled"
            o.observed_ns = time.time_ns()
    return outcomes


def _settle(o: TaskOutcome, future, deadline) -> None:
    o.observed_ns = time.time_ns()
    left = None if deadline is None else max(deadline - time.monotonic(), 0.1)
    try:
        if future.status == "finished":
            o.payload = future.result(timeout=left)
            return
        exc = future.exception(timeout=left)
    except Exception as err:  # noqa: BLE001 - lost while gathering, cancelled: the reason
        exc = err
    o.error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    worker = getattr(exc, "last_worker", None)  # KilledWorker: the worker that died last
    if worker is not None:
        o.worker = {"name": str(worker.name), "address": worker.address, "pid": worker.pid}
    o.observed_ns = time.time_ns()


def _attach_notes(client, token: str, outcomes: list[TaskOutcome]) -> None:
    """Attach to each task without events the note its worker logged when it started."""
    if all(o.payload is not None for o in outcomes):
        return
    try:
        events = client.get_events(START_TOPIC)
    except Exception:  # noqa: BLE001 - notes are optional; the failure is recorded anyway
        return
    for _, note in events:
        if isinstance(note, dict) and note.get("token") == token:
            o = outcomes[note["index"]]
            if o.payload is None and (o.note is None or note["t_ns"] > o.note["t_ns"]):
                o.note = note


def _addresses(outcomes: list[TaskOutcome]) -> dict[str, dict]:
    out = {}
    for o in outcomes:
        for ident in (o.payload and o.payload["worker"], o.worker):
            if ident and ident.get("address"):
                out[ident["address"]] = ident
    return out
