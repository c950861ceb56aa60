"""sweep_batch_sizes(): memory boundaries, clean out-of-memory points, recommendation, executors."""

from __future__ import annotations

import gc
import tracemalloc
import warnings
from concurrent.futures import Executor, Future, ThreadPoolExecutor

import numpy as np
import pytest
from bench_fakes import FakeClock

from everyo.bench import EveryOBenchmarkWarning, SweepResult, SweepRow, sweep_batch_sizes
from everyo.errors import EveryOBenchmarkError

FEATURES = 10_000  # 80 kB of float64 per sample
PER_SAMPLE = 2 * FEATURES * 8  # the batch, plus the temporary x * 2.0 of the same size
QUICK = {"warmup": 0, "repeat": 2, "progress": False, "record_environment": False}


def make_batch(batch_size):
    return np.ones((batch_size, FEATURES))


def step(x):
    return float((x * 2.0).sum())


def test_memory_limit_gives_oom_at_the_expected_boundary():
    limit = int(PER_SAMPLE * 100.5)  # 100 samples fit, 101 do not
    result = sweep_batch_sizes(step, make_batch, memory_limit=limit, **QUICK)
    measured = [r.batch_size for r in result.rows]
    # powers of two up to the first out-of-memory point, then bisection down to 1/16 of 64
    assert sorted(measured) == sorted([1, 2, 4, 8, 16, 32, 64, 128, 96, 112, 104, 100])
    assert all(r.status == "ok" for r in result.rows if r.batch_size <= 100)
    assert all(r.status == "oom" for r in result.rows if r.batch_size > 100)
    assert "exceeds memory_limit" in result[128].message
    assert result.largest_fit.batch_size == 100
    assert result[64].peak_memory == pytest.approx(64 * PER_SAMPLE, rel=0.01)


def test_memory_returns_to_its_level_before_the_point():
    leaked = []

    def hungry(x):
        big = np.ones(x.shape[0] * 200_000)  # 1.6 MB per sample, dropped by the failing call
        leaked.append(len(big))
        if x.shape[0] >= 4:
            raise MemoryError("pretend the allocator gave up")
        return big.sum()

    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        result = sweep_batch_sizes(hungry, make_batch, [1, 2, 4, 8], **QUICK)
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [r.status for r in result.rows] == ["ok", "ok", "oom", "skipped"]
    assert "MemoryError: pretend" in result[4].message
    assert "larger than 4" in result[8].message
    assert max(leaked) == 4 * 200_000  # the oom point really allocated 6.4 MB
    assert after - before < 200_000  # the result rows, not the batches or intermediates


def test_cupy_out_of_memory_error_is_matched_by_name():
    class OutOfMemoryError(Exception):  # what cupy.cuda.memory raises
        pass

    def step_gpu(x):
        if x.shape[0] > 2:
            raise OutOfMemoryError("out of memory allocating 1,024 bytes")
        return x.sum()

    result = sweep_batch_sizes(step_gpu, make_batch, max_batch=16, **QUICK)
    statuses = [(r.batch_size, r.status) for r in result.rows]
    assert statuses == [(1, "ok"), (2, "ok"), (3, "oom"), (4, "oom")]  # 3: the bisection


def test_other_errors_end_an_auto_sweep_with_their_message():
    def broken(x):
        if x.shape[0] == 4:
            raise ValueError("shape mismatch")
        return x.sum()

    result = sweep_batch_sizes(broken, make_batch, **QUICK)
    assert result.rows[-1].batch_size == 4
    assert result.rows[-1].status == "error"
    assert result.rows[-1].message == "ValueError: shape mismatch"


def test_auto_stops_at_max_batch_and_includes_it():
    result = sweep_batch_sizes(step, make_batch, max_batch=12, **QUICK)
    assert [r.batch_size for r in result.rows] == [1, 2, 4, 8, 12]
    assert all(r.ok for r in result.rows)


def latency_workload():
    """A fake clock where a batch of b samples takes 1 ms + 0.01 ms * b."""
    clock = FakeClock()

    def timed_step(batch_size):
        clock.advance(1e-3 + 1e-5 * batch_size)

    return clock, timed_step


def test_recommends_smallest_batch_within_five_percent_of_best():
    clock, timed_step = latency_workload()
    sizes = [256, 512, 1024, 2048, 4096, 8192]
    result = sweep_batch_sizes(timed_step, lambda b: b, sizes, clock=clock, **QUICK)
    # throughput b / (1 + 0.01 b) per ms: 8192 is best (98.8/ms); 2048 gives 95.3 >= 0.95 * best
    assert result.best.batch_size == 8192
    assert result.recommended.batch_size == 2048
    assert result.largest_fit.batch_size == 8192
    assert result[1024].mean_ms == pytest.approx(1 + 0.01 * 1024)
    assert result[1024].throughput == pytest.approx(1024 / (1 + 0.01 * 1024) * 1e3)
    text = str(result)
    assert "Recommended batch size: 2048" in text and "best" in text


def test_list_is_sorted_and_deduplicated():
    result = sweep_batch_sizes(step, make_batch, [8, 2, 8, 4], **QUICK)
    assert [r.batch_size for r in result.rows] == [2, 4, 8]


def test_to_dataframe_and_dict():
    result = sweep_batch_sizes(step, make_batch, [1, 2], **QUICK)
    df = result.to_dataframe()
    assert list(df["batch_size"]) == [1, 2]
    assert {"status", "throughput", "median_ms", "peak_memory"} <= set(df.columns)
    data = result.to_dict()
    assert len(data["rows"]) == 2
    # no best when no point can be trusted (a busy machine): never a confident wrong one
    assert data["best"] in (1, 2) or not any(r.reliable for r in result.rows), data


class RecordingExecutor(Executor):
    """Runs each submitted call at once and remembers what it was asked for."""

    def __init__(self):
        self.submitted = []

    def submit(self, fn, /, *args, **kwargs):
        self.submitted.append(args[2])  # measure_point(step, make_batch, batch_size, ...)
        future = Future()
        future.set_result(fn(*args, **kwargs))
        return future


def test_any_executor_runs_the_points():
    executor = RecordingExecutor()
    result = sweep_batch_sizes(step, make_batch, [1, 2, 4], executor=executor, **QUICK)
    assert executor.submitted == [1, 2, 4]
    assert [r.status for r in result.rows] == ["ok"] * 3
    auto = RecordingExecutor()
    sweep_batch_sizes(step, make_batch, executor=auto, max_batch=4, **QUICK)
    assert auto.submitted == [1, 2, 4]


def test_parallel_points_on_one_machine_warn():
    with ThreadPoolExecutor(max_workers=2) as pool:
        with pytest.warns(EveryOBenchmarkWarning, match="in parallel"):
            result = sweep_batch_sizes(step, make_batch, [1, 2, 4], executor=pool, **QUICK)
    assert all(r.ok for r in result.rows)


def test_one_worker_pool_does_not_warn():
    # the warning is attributed to the caller (this module), which the "error:::everyo" filter
    # does not cover: make it an error here
    with warnings.catch_warnings():
        warnings.simplefilter("error", EveryOBenchmarkWarning)
        with ThreadPoolExecutor(max_workers=1) as pool:
            sweep_batch_sizes(step, make_batch, [1, 2], executor=pool, **QUICK)


def test_progress_bar(capsys):
    options = {**QUICK, "progress": True}
    sweep_batch_sizes(step, make_batch, [1, 2], **options)
    assert "batch-size sweep" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((step, make_batch, [0, 4]), {}, "positive integers"),
        ((step, make_batch, [-2]), {}, "positive integers"),
        ((step, make_batch, []), {}, "empty"),
        ((step, make_batch, "all"), {}, "'auto' or a list"),
        ((step, make_batch), {"repeat": 0}, "repeat"),
        ((step, make_batch), {"warmup": -1}, "warmup"),
        ((step, make_batch), {"max_batch": 0}, "max_batch"),
        ((step, make_batch), {"mode": "eval"}, "mode"),
        ((step, make_batch), {"memory_limit": -5}, "memory_limit"),
        ((step, make_batch), {"executor": object()}, "Executor"),
        ((42, make_batch), {}, "model or a step function"),
        ((step, None), {}, "make_batch"),
    ],
)
def test_bad_inputs_are_clear_errors(args, kwargs, message):
    with pytest.raises(EveryOBenchmarkError, match=message):
        sweep_batch_sizes(*args, **{**QUICK, **kwargs})


def test_empty_result_has_no_recommendation():
    result = SweepResult(rows=[SweepRow(1, "oom", "MemoryError: no")])
    assert result.best is None and result.recommended is None and result.largest_fit is None
    assert "oom" in str(result)


def test_process_pool_runs_points_in_another_process():
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork")  # the test module is importable in the child
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        result = sweep_batch_sizes(
            step, make_batch, [1, 8], executor=pool, memory_limit=int(PER_SAMPLE * 4.5), **QUICK
        )
    assert [r.status for r in result.rows] == ["ok", "oom"]
    assert result[1].peak_memory == pytest.approx(PER_SAMPLE, rel=0.05)


def test_numpy_integer_batch_sizes_and_counts_are_accepted_as_plain_ints():
    # 2 ** np.arange(3) is how one writes a sweep's sizes in a notebook
    result = sweep_batch_sizes(
        step,
        make_batch,
        2 ** np.arange(3),
        warmup=np.int64(0),
        repeat=np.int64(2),
        progress=False,
        record_environment=False,
        recheck=False,
    )
    assert [r.batch_size for r in result.rows] == [1, 2, 4]
    assert all(type(r.batch_size) is int for r in result.rows)
    with pytest.raises(EveryOBenchmarkError, match="positive integers"):
        sweep_batch_sizes(step, make_batch, np.array([4, 0]), **QUICK)


@pytest.mark.parametrize("one", [8, np.int64(8)])
def test_one_number_as_batch_sizes_is_a_clear_error(one):
    # list(8) raised a bare "TypeError: 'int' object is not iterable"
    with pytest.raises(EveryOBenchmarkError, match=r"a list of sizes, got .*8.*pass \[8\]"):
        sweep_batch_sizes(step, make_batch, one, **QUICK)
