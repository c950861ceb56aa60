"""Batch-size sweeps: throughput, latency and peak memory per batch size, and a recommendation.

Unlike finders that only look for the largest batch that fits, a sweep measures every point and
recommends the *smallest* batch within 5 % of the best throughput: the largest one that fits
often runs out of memory later, once the allocator is fragmented or the data varies.
"""

from __future__ import annotations

import gc
import numbers
import time
import uuid
import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from everyo.bench import torch_memory
from everyo.bench.devices import free_gpu_pool, is_module
from everyo.bench.sweep_check import recheck, remeasure
from everyo.bench.sweep_point import (
    SweepProgress,
    SweepRow,
    measure_point,
    measure_point_on_worker,
)
from everyo.bench.sweep_result import SweepResult
from everyo.bench.timing import check_count
from everyo.errors import EveryOBenchmarkError, EveryOBenchmarkWarning
from everyo.machine_state import MachineWatch
from everyo.thread_policy import ThreadPolicy, check_threads

__all__ = [
    "sweep_batch_sizes",
    "check_sweep_options",
    "EveryOBenchmarkWarning",
    "SweepProgress",
    "SweepResult",
    "SweepRow",
]

MODES = ("inference", "train")
_TRAIN_NEEDS_STEP = (
    "mode='train' needs a step function: pass step(batch) that runs the forward pass, "
    "the loss, backward() and optimizer.step(), instead of the model"
)


def sweep_batch_sizes(
    model_or_step: Callable[[Any], Any],
    make_batch: Callable[[int], Any],
    batch_sizes: str | Iterable[int] = "auto",
    *,
    mode: str = "inference",
    warmup: int = 3,
    repeat: int = 10,
    max_batch: int = 8192,
    memory_limit: int | None = None,
    executor: Executor | None = None,
    progress: bool = True,
    clock: Callable[[], float] | None = None,
    synchronize: Callable[[], None] | None = None,
    record_environment: bool = True,
    device: str | None = None,
    on_point: Callable[[SweepProgress], None] | None = None,
    stop: Callable[[], bool] | None = None,
    threads: Any = "auto",
    recheck: bool = True,
) -> SweepResult:
    """Measure a workload at several batch sizes.

    Parameters
    ----------
    model_or_step : callable
        An everyo module (inference mode: called as ``model(batch)`` under ``eo.no_grad()``, in
        evaluation mode, restored afterwards), a ``torch.nn.Module`` (the same, under
        ``torch.no_grad()``; a dict batch is passed as keyword arguments) or a step function
        ``step(batch)`` (e.g. forward, backward and optimizer step for ``mode="train"``).
    make_batch : callable
        ``make_batch(batch_size)`` returns the batch passed to the step.
    batch_sizes : "auto" or iterable of int
        ``"auto"``: powers of two (then ``max_batch``) until a point runs out of memory, then a
        binary search between the last size that fitted and the first that did not, to within
        1/16 of the boundary. A list is measured in increasing order; sizes above one that ran
        out of memory are ``"skipped"``. An ``"error"`` point ends an ``"auto"`` sweep; a list
        goes on.
    mode : {"inference", "train"}
    warmup, repeat : int
        Untimed and timed calls per point.
    max_batch : int
        The largest size ``"auto"`` tries.
    memory_limit : int, optional
        Bytes a point may use at its peak (host memory traced with :mod:`tracemalloc`, or CuPy's
        pool when the batch is on a GPU; for torch workloads torch's CUDA allocator, or on the
        CPU the process's resident-set growth, which tracemalloc cannot replace there: each
        row's ``memory_source`` says which); above it the point is ``"oom"``. Lets a CPU run
        reproduce a memory boundary (exactly for NumPy, to a page or so for torch).
    executor : concurrent.futures.Executor, optional
        Runs the points, e.g. ``dask.distributed.Client(...).get_executor()``. A list of sizes is
        submitted at once (in parallel, without skipping); ``"auto"`` submits one point at a
        time. Default: in this process, one point at a time.
    progress : bool
        Show a progress bar (tqdm).
    device : str, optional
        Run there (``"cpu"``, ``"cuda"``, ...): a model is moved with ``model.to(device)`` and
        every tensor of each batch with ``.to(device)``. Default: where they already are.
    on_point : callable, optional
        ``on_point(progress)`` with a :class:`~everyo.bench.sweep_point.SweepProgress` when each
        point starts (``progress.row is None``) and when it ends: what a live view draws from.
        It runs in the sweep's thread; an exception in it ends the sweep.
    stop : callable or threading.Event, optional
        Checked before each point, and before each round of re-measuring an outlier
        (``stop()`` or ``stop.is_set()``): once true, no further point or round starts, and the
        result holds the finished points with ``stopped=True``.

    threads : "auto", int or None
        BLAS/OpenMP threads for the whole sweep (see :mod:`everyo.thread_policy`): ``"auto"``
        limits them to the cores other processes leave free when those are busy (decided once,
        before the first point, so that every point runs with the same threads). With an
        executor each worker applies the policy around its points.
    recheck : bool
        Re-measure points that break from their neighbours, interleaved with them, and mark
        those that stay inconsistent unreliable (in process; see
        :mod:`everyo.bench.sweep_check`).

    Every point records the machine's state while it was timed (``row.verdict``); the sweep
    recommends only from trusted points (measured, consistent, not contended) and says in
    :attr:`SweepResult.recommendation` which points it left out and why.

    Returns
    -------
    SweepResult
        ``rows``, ``best``, ``recommended``, ``largest_fit``; ``print()`` gives a table.

    Raises
    ------
    KeyboardInterrupt
        An interrupt during a point ends the sweep cleanly (the point's memory is freed, a model
        is restored); the exception carries the finished points as ``exc.sweep_result``, a
        ``SweepResult`` with ``stopped=True``.
    """
    sizes = check_sweep_options(
        model_or_step,
        make_batch,
        batch_sizes,
        mode=mode,
        warmup=warmup,
        repeat=repeat,
        max_batch=max_batch,
        memory_limit=memory_limit,
        threads=threads,
    )
    if not isinstance(recheck, bool):  # ("no" or "False" would turn it on)
        raise EveryOBenchmarkError(
            f"recheck must be True (re-measure points that break from their neighbours) or "
            f"False, got {recheck!r}"
        )
    _warn_if_parallel_on_one_machine(executor)
    warmup, repeat, max_batch = int(warmup), int(repeat), int(max_batch)  # (checked: integers)
    memory_limit = None if memory_limit is None else int(memory_limit)
    policy = ThreadPolicy(threads)
    step, restore = _prepare_step(model_or_step, mode, device)
    if device is not None:
        make_batch = OnDevice(make_batch, device)
    # in process the policy is applied once, here; an executor's workers apply it per point
    worker_threads = policy.policy if executor is not None else None
    options = (warmup, repeat, memory_limit, clock, synchronize, worker_threads)
    gc.collect()  # start from a clean heap; each point collects after itself
    free_gpu_pool()
    run = _PointRunner(step, make_batch, options, executor, progress, sizes, on_point, stop)
    watch = MachineWatch(threads_policy=policy.policy)
    try:
        if executor is None:
            policy.apply()
        watch.threads_applied = policy.applied
        watch.start()
        if sizes is None:
            _auto(run, max_batch)
        elif executor is not None:
            run.many(sizes)
        else:
            _in_order(run, sizes)
        if recheck and executor is None:
            run.recheck()
    except _Stopped:
        pass
    except KeyboardInterrupt as exc:
        exc.sweep_result = run.result(mode, stopped=True, machine=watch.stop())
        raise
    finally:
        machine = watch.stop()  # while the policy's threads are still in force
        run.close()
        restore()
        policy.restore()
    env = None
    if record_environment:
        from everyo.environment_record import environment

        env = environment()
    return run.result(mode, stopped=run.stopped, environment=env, machine=machine)


def check_sweep_options(
    model_or_step: Callable[[Any], Any],
    make_batch: Callable[[int], Any],
    batch_sizes: str | Iterable[int] = "auto",
    *,
    mode: str = "inference",
    warmup: int = 3,
    repeat: int = 10,
    max_batch: int = 8192,
    memory_limit: int | None = None,
    threads: Any = "auto",
) -> list[int] | None:
    """Check a sweep's arguments as :func:`sweep_batch_sizes` does, without measuring anything.

    Returns the sorted, de-duplicated sizes (``None`` for ``"auto"``); raises
    :class:`~everyo.errors.EveryOBenchmarkError` saying what to change. Lets a caller that runs
    the sweep later (a widget, on a thread) report a bad argument at once.
    """
    sizes = _check(model_or_step, make_batch, batch_sizes, mode, warmup, repeat, max_batch)
    _check_memory_limit(memory_limit)
    check_threads(threads)
    if mode == "train" and _is_model(model_or_step):
        raise EveryOBenchmarkError(_TRAIN_NEEDS_STEP)
    return sizes


def _is_model(obj) -> bool:
    """An everyo or a torch module (a torch one only if torch is imported already)."""
    return is_module(obj) or torch_memory.is_torch_module(obj)


class _Stopped(Exception):
    """The stop flag was set: no further point starts."""


class _PointRunner:
    """Runs points in process or through an executor, keeps every finished row, and reports
    progress (the tqdm bar, ``on_point``); checks the stop flag before each point."""

    def __init__(self, step, make_batch, options, executor, progress, sizes, on_point, stop):
        self.step, self.make_batch, self.options = step, make_batch, options
        self.executor, self.on_point, self.stop = executor, on_point, _stop_check(stop)
        self.total = len(sizes) if sizes is not None else None
        self.rows: list[SweepRow] = []
        self.workers: dict[str, dict] = {}  # worker name -> its environment record (executors)
        # one token per sweep: Dask treats calls with equal arguments as one task, and would
        # hand an earlier sweep's row back instead of measuring again
        self.token = uuid.uuid4().hex
        self.stopped = False
        self.bar = None
        if progress:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.total, desc="batch-size sweep", unit="point")

    def __call__(self, batch_size: int) -> SweepRow:
        return self.many([batch_size])[0]

    def many(self, sizes: list[int]) -> list[SweepRow]:
        if self.executor is None:
            return [self._measure_here(bs) for bs in sizes]
        starts = []
        futures = []
        for bs in sizes:
            starts.append(self._start(bs))
            args = self._args(bs)
            futures.append(self.executor.submit(measure_point_on_worker, *args, token=self.token))
        rows = []
        for (bs, t0), future in zip(starts, futures):
            if self.stopped or self.stop():
                self.stopped = True
                future.cancel()
                continue
            rows.append(self._done(self._collect(future, bs), t0))
        if self.stopped:
            raise _Stopped
        return rows

    def _collect(self, future, batch_size: int) -> SweepRow:
        """The row an executor measured, naming its worker; a task that failed (its worker
        died, it could not be sent) is an ``"error"`` row, and the sweep goes on."""
        try:
            row, env = future.result()
        except Exception as exc:  # noqa: BLE001 - every failure becomes a row
            return SweepRow(batch_size, "error", f"{type(exc).__name__}: {exc}")
        if row.worker is not None and env is not None:
            self.workers.setdefault(row.worker, env)
        return row

    def _measure_here(self, batch_size: int) -> SweepRow:
        _, t0 = self._start(batch_size)
        return self._done(measure_point(*self._args(batch_size)), t0)

    def _args(self, batch_size: int) -> tuple:
        return (self.step, self.make_batch, batch_size, *self.options)

    def _start(self, batch_size: int) -> tuple[int, float]:
        if self.stopped or self.stop():
            self.stopped = True
            raise _Stopped
        if self.on_point is not None:
            index = len(self.rows) + 1
            self.on_point(SweepProgress(index, self.total, batch_size, rows=tuple(self.rows)))
        return batch_size, time.perf_counter()

    def _done(self, row: SweepRow, t0: float | None = None) -> SweepRow:
        self.rows.append(row)
        if self.bar is not None:
            self.bar.set_postfix(batch=row.batch_size, status=row.status)
            self.bar.update(1)
        if self.on_point is not None:
            elapsed = 0.0 if t0 is None else time.perf_counter() - t0
            index = len(self.rows)
            rows = tuple(self.rows)
            self.on_point(SweepProgress(index, self.total, row.batch_size, row, elapsed, rows))
        return row

    def skip(self, row: SweepRow) -> None:
        """A point not measured (``"skipped"``): reported, never started."""
        self._done(row)

    def recheck(self) -> None:
        """Re-measure the points that break from their neighbours (interleaved with them)."""
        warmup, repeat, _, clock, synchronize, _ = self.options

        def measure(sizes):
            if self.bar is not None:
                self.bar.set_postfix(status=f"re-measuring {len(sizes)} sizes")
            if self.on_point is not None:
                rows = tuple(self.rows)
                self.on_point(
                    SweepProgress(
                        len(rows), self.total, sizes[0], rows=rows, rechecking=tuple(sizes)
                    )
                )
            return remeasure(
                self.step,
                self.make_batch,
                sizes,
                warmup=warmup,
                repeat=repeat,
                clock=clock,
                synchronize=synchronize,
                stop=self._stop_now,
            )

        self.rows = recheck(self.rows, measure, stopped=lambda: self.stopped)

    def _stop_now(self) -> bool:
        self.stopped = self.stopped or self.stop()
        return self.stopped

    def result(self, mode: str, *, stopped: bool, environment=None, machine=None) -> SweepResult:
        rows = sorted(self.rows, key=lambda r: r.batch_size)
        if machine is not None and machine.verdict != "unknown":
            rows = [_with_sweep_state(r, machine) for r in rows]
        return SweepResult(
            rows=rows,
            mode=mode,
            environment=environment,
            stopped=stopped,
            workers=self.workers or None,
            machine=None if machine is None else machine.to_dict(),
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _with_sweep_state(row: SweepRow, machine) -> SweepRow:
    """A point too short to read the machine's load over by itself (verdict ``unknown``, on a
    platform that reports it) takes the state of the whole sweep, whose window holds it."""
    if row.verdict != "unknown" or row.machine is None or row.machine.get("source") == "none":
        return row
    note = "machine state read over the whole sweep (the point was too short to read alone)"
    return replace(
        row,
        verdict=machine.verdict,
        machine=machine.to_dict(),
        note="; ".join(n for n in (row.note, note) if n),
    )


def _stop_check(stop) -> Callable[[], bool]:
    """``stop`` as a function: a threading.Event-like flag, a callable, or ``None`` (never)."""
    if stop is None:
        return lambda: False
    if hasattr(stop, "is_set"):
        return stop.is_set
    if callable(stop):
        return lambda: bool(stop())
    raise EveryOBenchmarkError(
        f"stop must be a threading.Event or a function returning True to stop, got "
        f"{type(stop).__name__}"
    )


def _auto(run: _PointRunner, max_batch: int) -> list[SweepRow]:
    rows: list[SweepRow] = []
    last_ok, first_oom = None, None
    for size in _doubling(max_batch):
        row = run(size)
        rows.append(row)
        if row.status == "error":
            return rows
        if row.status == "oom":
            first_oom = size
            break
        last_ok = size
    if last_ok is None or first_oom is None:
        return rows
    lo, hi = last_ok, first_oom
    while hi - lo > max(1, lo // 16):
        mid = (lo + hi) // 2
        row = run(mid)
        rows.append(row)
        if row.status == "error":
            break
        lo, hi = (mid, hi) if row.ok else (lo, mid)
    return rows


def _doubling(max_batch: int) -> list[int]:
    sizes = [1]
    while sizes[-1] * 2 <= max_batch:
        sizes.append(sizes[-1] * 2)
    return sizes if sizes[-1] == max_batch else [*sizes, max_batch]


def _in_order(run: _PointRunner, sizes: list[int]) -> list[SweepRow]:
    rows: list[SweepRow] = []
    oom_at = None
    for size in sizes:
        if oom_at is not None:
            rows.append(SweepRow(size, "skipped", f"larger than {oom_at}, which ran out of memory"))
            run.skip(rows[-1])
            continue
        rows.append(run(size))
        if rows[-1].status == "oom":
            oom_at = size
    return rows


def _prepare_step(model_or_step, mode, device=None):
    """The callable each point times, and a function that undoes any change to the model."""
    if device is not None and _is_model(model_or_step):
        model_or_step.to(device)
    if not _is_model(model_or_step):
        return model_or_step, lambda: None
    if mode == "train":
        raise EveryOBenchmarkError(_TRAIN_NEEDS_STEP)
    model = model_or_step
    was_training = bool(getattr(model, "training", False))
    model.eval()
    if torch_memory.is_torch_module(model):
        step = torch_memory.TorchInferenceStep(model)
    else:
        step = _InferenceStep(model)
    return step, lambda: model.train(was_training)


class _InferenceStep:
    """``model(batch)`` without gradient recording; a class so process executors can pickle it."""

    def __init__(self, model):
        self.model = model

    def __call__(self, batch):
        import everyo as eo

        with eo.no_grad():
            return self.model(batch)


class OnDevice:
    """``make_batch`` whose tensors are moved to ``device`` (picklable, for process executors)."""

    def __init__(self, make_batch, device):
        self.make_batch, self.device = make_batch, device

    def __call__(self, batch_size):
        return _to_device(self.make_batch(batch_size), self.device)


def _to_device(batch, device, depth: int = 0):
    if isinstance(batch, (tuple, list)) and depth < 3:
        return type(batch)(_to_device(x, device, depth + 1) for x in batch)
    if isinstance(batch, dict) and depth < 3:
        return {k: _to_device(v, device, depth + 1) for k, v in batch.items()}
    move = getattr(batch, "to", None)
    return move(device) if callable(move) and hasattr(batch, "data") else batch


def _check(model_or_step, make_batch, batch_sizes, mode, warmup, repeat, max_batch):
    if not callable(model_or_step):
        raise EveryOBenchmarkError(
            f"model_or_step must be a model or a step function, got {type(model_or_step).__name__}"
        )
    if not callable(make_batch):
        raise EveryOBenchmarkError("make_batch must be a function: make_batch(batch_size) -> batch")
    if mode not in MODES:
        raise EveryOBenchmarkError(f"mode must be one of {MODES}, got {mode!r}")
    check_count("warmup", warmup, minimum=0)
    check_count("repeat", repeat, minimum=1)
    check_count("max_batch", max_batch, minimum=1)
    if isinstance(batch_sizes, str):
        if batch_sizes != "auto":
            raise EveryOBenchmarkError(
                f"batch_sizes must be 'auto' or a list of sizes, got {batch_sizes!r}"
            )
        return None
    try:
        sizes = list(batch_sizes)  # (NumPy's integers too: np.arange(1, 9), 2 ** np.arange(8))
    except TypeError:  # (one number: list(8) raised a bare TypeError)
        one = isinstance(batch_sizes, numbers.Integral) and not isinstance(batch_sizes, bool)
        raise EveryOBenchmarkError(
            f"batch_sizes must be 'auto' or a list of sizes, got {batch_sizes!r}"
            + (f": for one size, pass [{int(batch_sizes)}]" if one else "")
        ) from None
    bad = [s for s in sizes if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s <= 0]
    if bad or not sizes:
        raise EveryOBenchmarkError(
            f"batch sizes must be positive integers, got {bad or 'an empty list'}"
        )
    return sorted({int(s) for s in sizes})


def _check_memory_limit(memory_limit):
    if memory_limit is None:
        return
    if (
        isinstance(memory_limit, bool)
        or not isinstance(memory_limit, numbers.Integral)
        or memory_limit <= 0
    ):
        raise EveryOBenchmarkError(f"memory_limit is a number of bytes > 0, got {memory_limit!r}")


def _warn_if_parallel_on_one_machine(executor):
    if executor is None:
        return
    if not isinstance(executor, Executor):
        raise EveryOBenchmarkError(
            f"executor must be a concurrent.futures.Executor, got {type(executor).__name__}"
        )
    workers = getattr(executor, "_max_workers", 1)
    if isinstance(executor, (ThreadPoolExecutor, ProcessPoolExecutor)) and workers > 1:
        warnings.warn(
            f"{type(executor).__name__} with max_workers={workers} runs sweep points in parallel "
            "on this machine: they compete for cores, caches and memory, which distorts both "
            "timings and memory peaks. Use max_workers=1, no executor, or a cluster executor.",
            EveryOBenchmarkWarning,
            stacklevel=3,
        )
