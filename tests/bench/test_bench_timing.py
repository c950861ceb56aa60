"""benchmark(): timing loop with a fake clock, CUDA synchronisation with a fake device, results."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bench_fakes import FakeClock, FakeCudaTensor, timed_work

import everyo.bench as bench
from everyo.bench import BenchmarkResult, benchmark, load
from everyo.errors import EveryOBenchmarkError, EveryOSerializationError


def run(durations, *args, warmup=0, repeat=None, sync="auto", **options):
    log: list = []
    clock = FakeClock(log=log)
    work = timed_work(clock, durations)
    repeat = len(durations) - warmup if repeat is None else repeat
    result = benchmark(
        work,
        *args,
        warmup=warmup,
        repeat=repeat,
        sync=sync,
        clock=clock,
        synchronize=lambda: log.append("sync"),
        record_environment=False,
        **options,
    )
    return result, log


def test_times_come_from_the_clock_and_skip_warmup():
    result, _ = run([9.0, 9.0, 0.001, 0.003, 0.002], warmup=2)
    assert result.n == 3
    np.testing.assert_allclose(result.times, [0.001, 0.003, 0.002])
    assert result.median == pytest.approx(0.002)
    assert result.mean == pytest.approx(0.002)
    assert result.min == pytest.approx(0.001) and result.max == pytest.approx(0.003)


def test_report_has_the_guides_lines():
    result, _ = run([0.010, 0.020, 0.030], samples=128)
    text = str(result)
    assert "Mean latency: 20.0000 ms" in text
    assert "Median latency: 20.0000 ms" in text
    assert "Minimum latency: 10.0000 ms" in text
    assert "Maximum latency: 30.0000 ms" in text
    assert "Approx. throughput: 6400.00 samples/s" in text  # 128 / 0.020 s
    assert result.throughput == pytest.approx(6400.0)


def test_no_throughput_without_samples():
    result, _ = run([0.01, 0.01])
    assert result.throughput is None
    assert "throughput" not in str(result)


def test_min_time_keeps_timing_until_the_budget():
    result, _ = run([0.125] * 50, repeat=2, min_time=1.0)
    # the budget counts from the first timed call; 8 calls of 0.125 s fill one second
    assert result.n == 8


def test_min_time_never_cuts_repeat_short():
    result, _ = run([0.1] * 5, repeat=5, min_time=0.05)
    assert result.n == 5


def test_cpu_work_is_not_synchronised():
    result, log = run([0.01, 0.01], np.ones(3), warmup=1)
    assert "sync" not in log
    assert not result.synchronized


def test_gpu_argument_synchronises_both_edges_of_each_timed_call():
    result, log = run([0.5, 0.01, 0.01], FakeCudaTensor(), warmup=1)
    assert result.synchronized
    # warmup is not timed; then sync, start clock, call, sync, stop clock for each timed call
    assert log == ["call"] + ["sync", "clock", "call", "sync", "clock"] * 2


def test_gpu_result_without_warmup_is_detected_on_the_first_call():
    log: list = []
    clock = FakeClock(log=log)
    durations = iter([0.01, 0.01])

    def make_gpu_tensor():
        log.append("call")
        clock.advance(next(durations))
        return FakeCudaTensor()

    result = benchmark(
        make_gpu_tensor,
        warmup=0,
        repeat=2,
        clock=clock,
        synchronize=lambda: log.append("sync"),
        record_environment=False,
    )
    assert result.synchronized
    assert log == ["clock", "call", "sync", "clock", "sync", "clock", "call", "sync", "clock"]


def test_sync_false_never_synchronises_gpu_work():
    _, log = run([0.01], FakeCudaTensor(), sync=False)
    assert "sync" not in log


def test_sync_true_synchronises_cpu_work():
    _, log = run([0.01], sync=True)
    assert log.count("sync") == 2


def test_gpu_tensor_inside_a_container_is_found():
    _, log = run([0.01], {"inputs": [np.ones(2), FakeCudaTensor()]})
    assert log.count("sync") == 2


def test_describes_workload_and_names_it():
    result, _ = run([0.01], np.zeros((128, 32), dtype=np.float32))
    assert result.workload["args"] == ["ndarray(128, 32) float32"]
    assert "timed_work" in result.name
    named, _ = run([0.01], name="forward")
    assert named.name == "forward"


def test_real_clock_and_environment():
    result = benchmark(np.add, 1.0, 2.0, warmup=1, repeat=3)
    assert result.n == 3 and np.all(result.times > 0)
    assert result.environment["everyo"]["version"]


def test_kwargs_are_passed_to_the_callable():
    seen = []
    benchmark(lambda **kw: seen.append(kw), warmup=0, repeat=1, axis=1, record_environment=False)
    assert seen == [{"axis": 1}]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"repeat": 0}, "repeat must be an integer >= 1"),
        ({"repeat": 2.5}, "repeat"),
        ({"warmup": -1}, "warmup must be an integer >= 0"),
        ({"samples": 0}, "samples"),
        ({"min_time": -1.0}, "min_time"),
        ({"sync": "sometimes"}, "sync"),
    ],
)
def test_bad_options_raise_clear_errors(options, message):
    with pytest.raises(EveryOBenchmarkError, match=message):
        benchmark(np.add, 1, 2, **options)


def test_non_callable_is_rejected():
    with pytest.raises(EveryOBenchmarkError, match="needs a callable"):
        benchmark(np.zeros(3))


def test_json_round_trip(tmp_path):
    result, _ = run([0.010, 0.020, 0.030], samples=8)
    result.environment = {"python": {"version": "3.11"}}
    path = result.to_json(tmp_path / "sub" / "baseline.json")
    data = json.loads(path.read_text())
    assert data["stats_ms"]["median"] == pytest.approx(20.0)
    again = load(path)
    np.testing.assert_array_equal(again.times, result.times)
    assert (again.name, again.samples, again.environment) == (
        result.name,
        8,
        {"python": {"version": "3.11"}},
    )
    assert BenchmarkResult.load(path).to_dict() == result.to_dict()


def test_a_failed_save_leaves_no_file_behind(tmp_path):
    result, _ = run([0.010, 0.020])
    result.to_json(tmp_path / "baseline.json")
    before = (tmp_path / "baseline.json").read_text()
    result.environment = {"device": object()}  # not JSON-serialisable: fails mid-write
    with pytest.raises(TypeError):
        result.to_json(tmp_path / "baseline.json")
    assert [p.name for p in tmp_path.iterdir()] == ["baseline.json"]  # no temporary file
    assert (tmp_path / "baseline.json").read_text() == before  # the old baseline is intact


def test_loading_a_foreign_file_is_a_clear_error(tmp_path):
    (tmp_path / "x.json").write_text('{"hello": 1}')
    with pytest.raises(EveryOSerializationError, match="not an everyo benchmark"):
        load(tmp_path / "x.json")
    (tmp_path / "y.json").write_text("{not json")
    with pytest.raises(EveryOSerializationError, match="not valid JSON"):
        load(tmp_path / "y.json")


def test_exported_names():
    assert bench.benchmark is benchmark
    assert callable(bench.environment)


def test_numpy_integers_are_counts_and_the_saved_result_holds_plain_ints(tmp_path):
    # a count read from an array (np.int64) is an integer; the JSON result holds a plain int
    result = benchmark(
        np.add,
        1,
        2,
        warmup=np.int64(1),
        repeat=np.int32(3),
        samples=np.int64(4),
        record_environment=False,
    )
    assert (result.warmup, result.n, result.samples) == (1, 3, 4)
    assert all(type(v) is int for v in (result.warmup, result.repeat, result.samples))
    result.to_json(tmp_path / "r.json")
    saved = json.loads((tmp_path / "r.json").read_text())
    assert (saved["warmup"], saved["repeat"], saved["samples"]) == (1, 3, 4)
    with pytest.raises(EveryOBenchmarkError, match="repeat must be an integer >= 1"):
        benchmark(np.add, 1, 2, repeat=np.True_)


def test_min_time_takes_numpy_numbers_and_refuses_a_bool(tmp_path):
    # np.float32(0.001) and np.int64(0) were refused as "not a number of seconds" while
    # np.float64 passed (a float subclass); True passed as 1 second
    for given in (np.float32(0.001), np.int64(0), np.float64(0.001)):
        result = benchmark(np.add, 1, 2, repeat=2, min_time=given, record_environment=False)
        assert type(result.min_time) is float and result.min_time == pytest.approx(given)
        result.to_json(tmp_path / "r.json")
        saved = json.loads((tmp_path / "r.json").read_text())
        assert saved["min_time"] == pytest.approx(float(given))
    with pytest.raises(EveryOBenchmarkError, match="min_time must be a number of seconds"):
        benchmark(np.add, 1, 2, repeat=2, min_time=True)
