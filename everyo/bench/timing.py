"""Time a callable: warmup, repeated calls, CUDA synchronisation at the edges of each call.

:func:`benchmark` is the guide's "Complete Benchmark Example" as one call; it returns a
:class:`~everyo.bench.result.BenchmarkResult` holding the raw times, their statistics, the
environment record and a description of the workload.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable
from typing import Any

from everyo.bench.checks import check_count
from everyo.bench.devices import cuda_synchronize, on_gpu
from everyo.bench.result import BenchmarkResult, describe, process_token
from everyo.errors import EveryOBenchmarkError
from everyo.machine_state import MachineWatch
from everyo.thread_policy import ThreadPolicy

__all__ = ["benchmark", "Timer"]

Clock = Callable[[], float]


def benchmark(
    fn: Callable[..., Any],
    *args: Any,
    warmup: int = 10,
    repeat: int = 100,
    min_time: float | None = None,
    samples: int | None = None,
    sync: bool | str = "auto",
    name: str | None = None,
    clock: Clock | None = None,
    synchronize: Callable[[], None] | None = None,
    record_environment: bool = True,
    threads: Any = "auto",
    processes: int | None = None,
    **kwargs: Any,
) -> BenchmarkResult:
    """Call ``fn(*args, **kwargs)`` ``warmup`` times, then time ``repeat`` calls.

    Parameters
    ----------
    fn : callable
        The workload, e.g. a model or a function.
    *args, **kwargs
        Passed to every call (keyword arguments named like this function's own options cannot
        be passed through: wrap ``fn`` in a ``lambda`` instead).
    warmup : int
        Untimed calls first (caches, allocator, lazy initialisation).
    repeat : int
        Timed calls, at least 1; with ``min_time`` the minimum number of timed calls.
    min_time : float, optional
        Keep timing (beyond ``repeat`` calls) until this many seconds have passed.
    samples : int, optional
        Samples processed per call (the batch size); gives ``result.throughput`` in samples/s.
    sync : {"auto", True, False}
        Synchronise CUDA before and after each timed call so asynchronous GPU work is counted.
        ``"auto"`` does so when an argument, the result, or the model's parameters live on a GPU.
    name : str, optional
        Workload name for reports and baselines (default: the callable's qualified name).
    clock : callable, optional
        Returns seconds as a float (default :func:`time.perf_counter`); tests pass a fake one.
    synchronize : callable, optional
        Waits for the GPU (default: synchronise the current CuPy device, if CuPy is loaded).
    record_environment : bool
        Store :func:`everyo.environment` in the result (a few milliseconds; off in tight loops).
    threads : "auto", int or None
        BLAS/OpenMP threads while timing (see :mod:`everyo.thread_policy`): ``"auto"`` limits
        them to the cores other processes leave free when those are busy, an integer sets
        them, ``None`` (or ``"keep"``) leaves them alone. The machine's state while it measured
        (other processes' CPU use, the threads applied, a verdict) is always recorded.
    processes : int, optional
        Measure in this many fresh worker processes, one after the other, each making
        ``warmup`` and ``repeat`` calls (see :mod:`everyo.bench.workers`): what a comparison
        across processes or sessions (a saved baseline) needs, since processes differ more
        than calls do. ``fn`` must be a module-level function a worker can import (not a
        lambda, a closure or a notebook's function); arguments are pickled. A thread limit is
        then set in each worker's environment before NumPy loads. ``None`` (the default):
        measure here, in this process.

    Returns
    -------
    BenchmarkResult
        ``print(result)`` gives the guide's report, with the outliers, the stability and the
        machine's state; ``result.to_json(path)`` saves it.

    Examples
    --------
    >>> import numpy as np
    >>> from everyo.bench import benchmark
    >>> x = np.ones((128, 32))
    >>> result = benchmark(np.tanh, x, warmup=2, repeat=20, samples=128)
    >>> result.n, result.samples
    (20, 128)
    """
    warmup, repeat, min_time, samples = _check_options(fn, warmup, repeat, min_time, samples, sync)
    if processes is not None:
        return _in_workers(
            fn,
            args,
            kwargs,
            processes,
            warmup,
            repeat,
            min_time,
            samples,
            name,
            threads,
            clock,
            synchronize,
        )
    policy = ThreadPolicy(threads)
    timer = Timer(clock=clock, sync=sync, synchronize=synchronize)
    inputs = (fn, args, kwargs)
    with policy:
        watch = MachineWatch(threads_policy=policy.policy, threads_applied=policy.applied).start()
        times = timer.run(lambda: fn(*args, **kwargs), warmup, repeat, min_time, inputs=inputs)
        machine = watch.stop()
    env = None
    if record_environment:
        from everyo.environment_record import environment

        env = environment()
    return BenchmarkResult(
        times=times,
        name=name or _callable_name(fn),
        warmup=warmup,
        repeat=repeat,
        min_time=min_time,
        samples=samples,
        synchronized=timer.synchronized,
        workload=describe(fn, args, kwargs),
        environment=env,
        machine=machine.to_dict(),
        process=process_token(),
        thread_limit="runtime" if policy.applied is not None else None,
    )


def _in_workers(
    fn,
    args,
    kwargs,
    processes,
    warmup,
    repeat,
    min_time,
    samples,
    name,
    threads,
    clock,
    synchronize,
) -> BenchmarkResult:
    """``benchmark(..., processes=N)``: the worker path, for what a worker can reproduce."""
    from everyo.bench.workers import benchmark_in_workers, spec_of

    if clock is not None or synchronize is not None:
        raise EveryOBenchmarkError(
            "processes= measures in worker processes, which use their own clock and "
            "synchronisation: leave clock= and synchronize= at their defaults"
        )
    spec = spec_of(fn)
    return benchmark_in_workers(
        spec,
        args,
        kwargs,
        processes=processes,
        warmup=warmup,
        repeat=repeat,
        min_time=min_time,
        samples=samples,
        name=name or _callable_name(fn),
        threads=threads,
        workload=describe(fn, args, kwargs),
    )


class Timer:
    """The timing loop shared by :func:`benchmark`, sweeps and precision comparisons.

    Parameters
    ----------
    clock : callable, optional
        Seconds as a float; :func:`time.perf_counter` by default.
    sync : {"auto", True, False}
        When to synchronise the GPU around each timed call (see :func:`benchmark`).
    synchronize : callable, optional
        The synchroniser; :func:`everyo.bench.devices.cuda_synchronize` by default.
    """

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        sync: bool | str = "auto",
        synchronize: Callable[[], None] | None = None,
    ) -> None:
        self.clock = clock or time.perf_counter
        self._sync_fn = synchronize or cuda_synchronize
        # None: "auto" and not yet decided (decided on the first call, from inputs and result)
        self._sync: bool | None = None if sync == "auto" else bool(sync)

    @property
    def synchronized(self) -> bool:
        """Whether timed calls were synchronised."""
        return bool(self._sync)

    def run(
        self,
        call: Callable[[], Any],
        warmup: int,
        repeat: int,
        min_time: float | None = None,
        *,
        inputs: tuple = (),
    ) -> list[float]:
        """Run ``call`` ``warmup`` times untimed, then return the seconds of each timed call.

        ``inputs`` (the callable, its arguments...) are searched for GPU data under ``"auto"``.
        """
        self.watch(*inputs)
        for _ in range(warmup):
            self._decide(call())
        times: list[float] = []
        started = self.clock() if min_time else 0.0
        while len(times) < repeat:
            times.append(self.time_once(call))
        if min_time:
            while self.clock() - started < min_time:
                times.append(self.time_once(call))
        return times

    def time_once(self, call: Callable[[], Any]) -> float:
        """Seconds taken by one call, synchronised at both edges when needed."""
        if self._sync:
            self._sync_fn()
        start = self.clock()
        result = call()
        if self._sync is None:
            self._decide(result)  # only the very first call, when there was no warmup
        if self._sync:
            self._sync_fn()
        return self.clock() - start

    def watch(self, *objects: Any) -> None:
        """Under ``"auto"``, synchronise from now on if any of ``objects`` is on a GPU."""
        if not self._sync and self._sync is not False and any(on_gpu(x) for x in objects):
            self._sync = True

    def _decide(self, result: Any) -> None:
        if self._sync is None:
            self._sync = on_gpu(result)


def _check_options(
    fn, warmup, repeat, min_time, samples, sync
) -> tuple[int, int, float | None, int | None]:
    """Raise on a bad option; return ``warmup``, ``repeat`` and ``samples`` as Python ints and
    ``min_time`` as a float."""
    if not callable(fn):
        raise EveryOBenchmarkError(
            f"benchmark() needs a callable to time, got {type(fn).__name__}; "
            "pass the function or model itself, not its result"
        )
    warmup = check_count("warmup", warmup, minimum=0)
    repeat = check_count("repeat", repeat, minimum=1)
    if min_time is not None:
        # any real number (np.float32(0.5), np.int64(1)), not a bool (True read as 1 second)
        if (
            isinstance(min_time, bool)
            or not isinstance(min_time, numbers.Real)
            or not math.isfinite(min_time)
            or min_time < 0
        ):
            raise EveryOBenchmarkError(
                f"min_time must be a number of seconds >= 0, got {min_time!r}"
            )
        min_time = float(min_time)  # (a result saved as JSON holds a plain float)
    if samples is not None:
        samples = check_count("samples", samples, minimum=1)
    if sync not in ("auto", True, False):
        raise EveryOBenchmarkError(f"sync must be 'auto', True or False, got {sync!r}")
    return warmup, repeat, min_time, samples


def _callable_name(fn: Any) -> str:
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None) or type(fn).__module__
    if module and module not in ("builtins", "__main__"):
        return f"{module}.{name}"
    return name
