"""Batch-size sweeps: throughput, latency and peak memory per batch size, and a recommendation.

Unlike finders that only look for the largest batch that fits, a sweep measures every point and
recommends the *smallest* batch within 5 % of the best throughput: the largest one that fits
often runs out of memory later, once the allocator is fragmented or the data varies.
"""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

from everyo.bench.devices import free_gpu_pool, is_module
from everyo.bench.sweep_point import SweepRow, measure_point
from everyo.bench.sweep_result import SweepResult
from everyo.bench.timing import check_count
from everyo.errors import EveryOBenchmarkError, EveryOBenchmarkWarning

__all__ = ["sweep_batch_sizes", "EveryOBenchmarkWarning", "SweepResult", "SweepRow"]

MODES = ("inference", "train")


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
) -> SweepResult:
    """Measure a workload at several batch sizes.

    Parameters
    ----------
    model_or_step : callable
        An everyo module (inference mode: called as ``model(batch)`` under ``eo.no_grad()``, in
        evaluation mode, restored afterwards) or a step function ``step(batch)`` (e.g. forward,
        backward and optimizer step for ``mode="train"``).
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
        pool when the batch is on a GPU); above it the point is ``"oom"``. Lets a CPU run
        reproduce a memory boundary exactly.
    executor : concurrent.futures.Executor, optional
        Runs the points, e.g. ``dask.distributed.Client(...).get_executor()``. A list of sizes is
        submitted at once (in parallel, without skipping); ``"auto"`` submits one point at a
        time. Default: in this process, one point at a time.
    progress : bool
        Show a progress bar (tqdm).

    Returns
    -------
    SweepResult
        ``rows``, ``best``, ``recommended``, ``largest_fit``; ``print()`` gives a table.
    """
    sizes = _check(model_or_step, make_batch, batch_sizes, mode, warmup, repeat, max_batch)
    _check_memory_limit(memory_limit)
    _warn_if_parallel_on_one_machine(executor)
    step, restore = _prepare_step(model_or_step, mode)
    options = (warmup, repeat, memory_limit, clock, synchronize)
    gc.collect()  # start from a clean heap; each point collects after itself
    free_gpu_pool()
    run = _PointRunner(step, make_batch, options, executor, progress, total=len(sizes or ()))
    try:
        if sizes is None:
            rows = _auto(run, max_batch)
        elif executor is not None:
            rows = run.many(sizes)
        else:
            rows = _in_order(run, sizes)
    finally:
        run.close()
        restore()
    env = None
    if record_environment:
        from everyo.bench.environment import environment

        env = environment()
    return SweepResult(rows=sorted(rows, key=lambda r: r.batch_size), mode=mode, environment=env)


class _PointRunner:
    """Runs points in process or through an executor, and drives the progress bar."""

    def __init__(self, step, make_batch, options, executor, progress, total):
        self.step, self.make_batch, self.options, self.executor = (
            step,
            make_batch,
            options,
            executor,
        )
        self.bar = None
        if progress:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total or None, desc="batch-size sweep", unit="point")

    def __call__(self, batch_size: int) -> SweepRow:
        return self.many([batch_size])[0]

    def many(self, sizes: list[int]) -> list[SweepRow]:
        args = [(self.step, self.make_batch, bs, *self.options) for bs in sizes]
        if self.executor is None:
            return [self._done(measure_point(*a)) for a in args]
        futures = [self.executor.submit(measure_point, *a) for a in args]
        return [self._done(f.result()) for f in futures]

    def _done(self, row: SweepRow) -> SweepRow:
        if self.bar is not None:
            self.bar.set_postfix(batch=row.batch_size, status=row.status)
            self.bar.update(1)
        return row

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


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
            run._done(rows[-1])
            continue
        rows.append(run(size))
        if rows[-1].status == "oom":
            oom_at = size
    return rows


def _prepare_step(model_or_step, mode):
    """The callable each point times, and a function that undoes any change to the model."""
    if not is_module(model_or_step):
        return model_or_step, lambda: None
    if mode == "train":
        raise EveryOBenchmarkError(
            "mode='train' needs a step function: pass step(batch) that runs the forward pass, "
            "the loss, backward() and optimizer.step(), instead of the model"
        )
    model = model_or_step
    was_training = bool(getattr(model, "training", False))
    model.eval()
    return _InferenceStep(model), lambda: model.train(was_training)


class _InferenceStep:
    """``model(batch)`` without gradient recording; a class so process executors can pickle it."""

    def __init__(self, model):
        self.model = model

    def __call__(self, batch):
        import everyo as eo

        with eo.no_grad():
            return self.model(batch)


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
    sizes = list(batch_sizes)
    bad = [s for s in sizes if isinstance(s, bool) or not isinstance(s, int) or s <= 0]
    if bad or not sizes:
        raise EveryOBenchmarkError(
            f"batch sizes must be positive integers, got {bad or 'an empty list'}"
        )
    return sorted(set(sizes))


def _check_memory_limit(memory_limit):
    if memory_limit is None:
        return
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, int) or memory_limit <= 0:
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
