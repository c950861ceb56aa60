"""Benchmark grids: one :func:`~everyo.bench.timing.benchmark` per point of a parameter grid,
in process or one point per task of an executor (a Dask cluster's ``client.get_executor()``).
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from typing import Any

import numpy as np

from everyo.bench.placement import worker_environment, worker_name
from everyo.bench.result import BenchmarkResult
from everyo.errors import EveryOBenchmarkError

__all__ = ["benchmark_grid", "grid_points", "run_grid_point", "run_grid_point_on_worker"]


def benchmark_grid(
    setup: Callable[..., Any],
    grid: Mapping[str, Iterable[Any]] | Iterable[Mapping[str, Any]],
    *,
    executor: Executor | None = None,
    **benchmark_options: Any,
) -> list[BenchmarkResult]:
    """Benchmark a workload at every point of a grid (batch sizes × models × devices...).

    Parameters
    ----------
    setup : callable
        ``setup(**point)`` builds one point's workload and returns what to time: a callable
        taking no arguments, or a tuple ``(fn, *args)``. Building happens where the point runs
        (on the worker), untimed.
    grid : dict or list of dicts
        ``{"batch": [32, 64], "model": ["mlp", "cnn"]}`` (every combination, the last name
        varying fastest) or a list of points ``[{"batch": 32, "model": "mlp"}, ...]``.
    executor : concurrent.futures.Executor, optional
        Runs one point per task, e.g. ``client.get_executor()``; all points are submitted at
        once. Default: here, one point after another.
    **benchmark_options
        ``warmup``, ``repeat``, ``min_time``, ``samples``, ``sync``: as
        :func:`~everyo.bench.timing.benchmark`.

    Returns
    -------
    list of BenchmarkResult
        In grid order. Each is an ordinary result named ``"<setup>[k=v, ...]"``, with
        ``workload["params"]`` the point and ``environment`` the record of the process that
        measured it; with an executor, ``worker`` names that worker (``None`` in process).

    Raises
    ------
    EveryOBenchmarkError
        Bad grid or options; or some points failed: the error lists them, and its ``results``
        holds every result in grid order (``None`` for a failed point).

    Examples
    --------
    >>> import numpy as np
    >>> from everyo.bench import benchmark_grid
    >>> def setup(n):
    ...     x = np.ones(n)
    ...     return np.tanh, x
    >>> results = benchmark_grid(setup, {"n": [10, 100]}, warmup=1, repeat=5)
    >>> [r.workload["params"] for r in results]
    [{'n': 10}, {'n': 100}]
    """
    points = grid_points(grid)
    if not callable(setup):
        raise EveryOBenchmarkError(
            f"setup must be a function setup(**point) returning what to time, got "
            f"{type(setup).__name__}"
        )
    if executor is not None and not isinstance(executor, Executor):
        raise EveryOBenchmarkError(
            f"executor must be a concurrent.futures.Executor, got {type(executor).__name__}"
        )
    for name in ("name", "clock", "synchronize", "record_environment"):
        if name in benchmark_options:
            raise EveryOBenchmarkError(
                f"benchmark_grid sets {name}= itself (per point, where the point runs)"
            )
    # a fresh token per call: Dask treats calls with equal arguments as one task otherwise,
    # and would hand back an earlier measurement
    token = uuid.uuid4().hex
    if executor is None:
        outcomes = [
            _outcome(lambda p=p: run_grid_point(setup, p, benchmark_options)) for p in points
        ]
    else:
        futures = [
            executor.submit(run_grid_point_on_worker, setup, p, benchmark_options, token)
            for p in points
        ]
        outcomes = [_outcome(f.result) for f in futures]
    failed = [(p, o) for p, o in zip(points, outcomes) if isinstance(o, BaseException)]
    results = [None if isinstance(o, BaseException) else o for o in outcomes]
    if failed:
        listed = "; ".join(f"{p}: {type(e).__name__}: {e}" for p, e in failed)
        error = EveryOBenchmarkError(f"{len(failed)} of {len(points)} grid points failed: {listed}")
        error.results = results
        raise error
    return results


def grid_points(grid) -> list[dict[str, Any]]:
    """The points of a grid (see :func:`benchmark_grid`), checked."""
    if isinstance(grid, Mapping):
        names = list(grid)
        values = []
        for name in names:
            column = grid[name]
            if isinstance(column, (str, bytes)) or not isinstance(column, Iterable):
                raise EveryOBenchmarkError(
                    f"grid[{name!r}] must be a list of values, got {type(column).__name__}"
                )
            values.append(list(column))
        points = [dict(zip(names, combo)) for combo in itertools.product(*values)]
    elif isinstance(grid, Iterable) and not isinstance(grid, (str, bytes)):
        points = [dict(p) if isinstance(p, Mapping) else p for p in grid]
        bad = [p for p in points if not isinstance(p, dict)]
        if bad:
            raise EveryOBenchmarkError(f"grid points must be dicts of parameters, got {bad[0]!r}")
    else:
        raise EveryOBenchmarkError(
            f"grid must be a dict of value lists or a list of dicts, got {type(grid).__name__}"
        )
    if not points:
        raise EveryOBenchmarkError("the grid has no points: give every parameter a value")
    # a column such as 2 ** np.arange(8) gives NumPy scalars: the points (and each result's
    # workload["params"], which to_json writes) hold plain Python values, as sweeps do
    return [{k: _plain(v) for k, v in p.items()} for p in points]


def _plain(value: Any) -> Any:
    """A NumPy number, bool or string as the Python one (``np.int64(8)`` -> ``8``)."""
    if isinstance(value, (np.integer, np.floating, np.bool_, np.str_)):
        return value.item()
    return value


def run_grid_point(setup: Callable[..., Any], point: dict, options: dict) -> BenchmarkResult:
    """Build and benchmark one point here, with this process's environment record."""
    from everyo.bench.timing import benchmark

    workload = setup(**point)
    fn, args = (workload[0], workload[1:]) if isinstance(workload, tuple) else (workload, ())
    if not callable(fn):
        raise EveryOBenchmarkError(
            f"setup(**{point!r}) returned {type(fn).__name__}: return a callable, or (fn, *args)"
        )
    label = ", ".join(f"{k}={v}" for k, v in point.items())
    name = f"{getattr(setup, '__name__', 'setup')}[{label}]"
    result = benchmark(fn, *args, name=name, record_environment=False, **options)
    result.workload["params"] = dict(point)
    result.environment = worker_environment()
    return result


def run_grid_point_on_worker(
    setup: Callable[..., Any], point: dict, options: dict, token: str = ""
) -> BenchmarkResult:
    """:func:`run_grid_point` where an executor runs it: the result names the worker.

    Module-level so that any executor can run it (``token`` only keeps task keys apart).
    """
    result = run_grid_point(setup, point, options)
    result.worker = worker_name()
    return result


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - one failed point must not lose the others
        return exc
