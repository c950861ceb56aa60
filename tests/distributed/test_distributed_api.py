"""everyo.distributed without a cluster: lazy import, benchmark grids in process, clear errors."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import Executor, Future

import numpy as np
import pytest

from everyo.bench import BenchmarkResult, benchmark_grid
from everyo.errors import EveryOBenchmarkError, EveryOConfigError, EveryOProfilerError


def test_import_does_not_import_dask():
    code = (
        "import everyo.distributed, sys; print('distributed' in sys.modules, 'dask' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def setup(n, fn="tanh"):
    return getattr(np, fn), np.ones(n)


def test_grid_in_process_runs_every_point_in_order():
    results = benchmark_grid(setup, {"n": [4, 8], "fn": ["tanh", "exp"]}, warmup=0, repeat=3)
    assert [r.workload["params"] for r in results] == [
        {"n": 4, "fn": "tanh"},
        {"n": 4, "fn": "exp"},
        {"n": 8, "fn": "tanh"},
        {"n": 8, "fn": "exp"},
    ]
    assert all(isinstance(r, BenchmarkResult) and r.n == 3 for r in results)
    assert results[0].worker is None and results[0].environment["numpy"]
    assert results[2].workload["args"] == ["ndarray(8,) float64"]


def test_a_grid_of_numpy_values_saves_its_points_as_plain_json(tmp_path):
    # 2 ** np.arange(2) gives np.int64 values: to_json raised "Object of type int64 is not
    # JSON serializable" for every point
    results = benchmark_grid(setup, {"n": 2 ** np.arange(2), "fn": np.array(["tanh"])}, repeat=2)
    for r in results:
        loaded = BenchmarkResult.load(r.to_json(tmp_path / "point.json"))
        assert loaded.workload["params"] == r.workload["params"]
    assert [r.workload["params"] for r in results] == [
        {"n": 1, "fn": "tanh"},
        {"n": 2, "fn": "tanh"},
    ]
    assert all(type(r.workload["params"]["n"]) is int for r in results)
    assert results[1].name == "setup[n=2, fn=tanh]"


def test_a_grid_records_the_subnormal_flushing_it_ran_with():
    # the record is computed once per process, but this setting can change between two grids:
    # a stale "on" hid the switch from a regression check against the second grid's results
    import everyo as eo

    first = benchmark_grid(setup, {"n": [4]}, warmup=0, repeat=2)[0]
    eo.set_flush_denormal(False)
    try:
        second = benchmark_grid(setup, {"n": [4]}, warmup=0, repeat=2)[0]
    finally:
        eo.set_flush_denormal(True)
    assert second.environment["everyo"]["flush_denormal"] is False
    assert (
        first.environment["everyo"]["flush_denormal"]
        is eo.environment()["everyo"]["flush_denormal"]
    )  # (the first result's record is its own: not changed by the second grid)


class Inline(Executor):
    """Runs each call at once, as a remote worker would, and counts the calls."""

    def __init__(self):
        self.calls = []

    def submit(self, fn, /, *args, **kwargs):
        self.calls.append(args[1])
        future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:  # as a real executor does: the error is the future's
            future.set_exception(exc)
        return future


def test_grid_with_an_executor_names_the_worker_and_keeps_going_past_a_bad_point():
    pool = Inline()
    with pytest.raises(
        EveryOBenchmarkError, match=r"1 of 3 grid points failed: \{'n': 2, 'fn'"
    ) as e:
        benchmark_grid(setup, [{"n": 1}, {"n": 2, "fn": "nope"}, {"n": 3}], executor=pool, repeat=2)
    assert pool.calls == [{"n": 1}, {"n": 2, "fn": "nope"}, {"n": 3}]
    first, bad, last = e.value.results
    assert bad is None and first.worker and last.workload["params"] == {"n": 3}


@pytest.mark.parametrize(
    "grid, kwargs, message",
    [
        ({"n": 4}, {}, "must be a list of values"),
        ({"n": []}, {}, "no points"),
        ("n=4", {}, "dict of value lists"),
        ([1, 2], {}, "dicts of parameters"),
        ({"n": [1]}, {"executor": object()}, "Executor"),
        ({"n": [1]}, {"name": "x"}, "sets name="),
    ],
)
def test_bad_grids_are_clear_errors(grid, kwargs, message):
    with pytest.raises(EveryOBenchmarkError, match=message):
        benchmark_grid(setup, grid, **kwargs)


class NotAClient:
    pass


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        ((NotAClient(), print, [1]), {}, EveryOConfigError, "not client.get_executor"),
        ((None, 3, [1]), {}, EveryOConfigError, "Client"),
        (("client", print, []), {}, EveryOConfigError, "Client"),
    ],
)
def test_profile_tasks_checks_its_client(args, kwargs, error, message):
    from everyo.distributed import profile_tasks

    with pytest.raises(error, match=message):
        profile_tasks(*args, **kwargs)


class FakeClient:
    """Enough of a Client for argument checks, which come before any call to it."""

    def submit(self, *a, **k):
        raise AssertionError("no task may be submitted when the arguments are wrong")

    def run(self, *a, **k):
        raise AssertionError("no clock may be asked for when the arguments are wrong")


@pytest.mark.parametrize(
    "inputs, kwargs, error, message",
    [
        ([], {}, EveryOConfigError, "inputs is empty"),
        (5, {}, EveryOConfigError, "iterable"),
        ([1], {"straggler_factor": 1.0}, EveryOConfigError, "straggler_factor"),
        ([1], {"timeout": 0}, EveryOConfigError, "timeout"),
        ([1], {"clock_rounds": 0}, EveryOConfigError, "clock_rounds"),
        ([1], {"clock": lambda: 0}, EveryOProfilerError, "does not take clock="),
        ([1], {"warmup": -1}, EveryOProfilerError, "warmup"),
        ([1], {"record_everything": True}, EveryOProfilerError, "profiler options are"),
    ],
)
def test_profile_tasks_checks_its_arguments_before_running_anything(inputs, kwargs, error, message):
    from everyo.distributed import profile_tasks

    with pytest.raises(error, match=message):
        profile_tasks(FakeClient(), print, inputs, **kwargs)


class Dying(Executor):
    """An executor whose tasks all fail the way a dead Dask worker's do."""

    def submit(self, fn, /, *args, **kwargs):
        future = Future()
        future.set_exception(RuntimeError("KilledWorker: the worker died"))
        return future


def test_a_sweep_point_whose_task_failed_is_an_error_row():
    from everyo.bench import sweep_batch_sizes

    result = sweep_batch_sizes(np.tanh, np.ones, [1, 2], executor=Dying(), repeat=1, progress=False)
    assert [(r.batch_size, r.status) for r in result.rows] == [(1, "error"), (2, "error")]
    assert result.rows[0].message == "RuntimeError: KilledWorker: the worker died"
    assert result.workers is None
