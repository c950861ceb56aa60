"""`machine_differences`: which hardware fields of two environment records differ."""

from __future__ import annotations

import numpy as np

from everyo.bench import BenchmarkResult, check_regression
from everyo.bench.machine import machine_differences

ENV = {
    "cpu": {"model": "Xeon A", "machine": "x86_64", "logical_cores": 8, "usable_cores": 8},
    "memory": {"total_bytes": 16 * 2**30},
    "os": {"system": "Linux", "release": "6.1"},
    "numpy": {"version": "2.0", "blas": {"library": "openblas", "threads": 8}},
    "gpus": [],
}


def _with(**changes):
    env = {k: dict(v) if isinstance(v, dict) else list(v) for k, v in ENV.items()}
    env["numpy"]["blas"] = dict(ENV["numpy"]["blas"])
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        target = env
        for key in parents:
            target = target[key]
        target[leaf] = value
    return env


def test_same_machine_and_missing_records_report_nothing():
    assert machine_differences(ENV, _with()) == []
    assert machine_differences(None, ENV) == [] and machine_differences(ENV, None) == []
    # software versions are not the machine; fields one record lacks are not compared
    assert machine_differences(ENV, _with(numpy__version="2.1", os__release="6.8")) == []
    older = _with()
    del older["cpu"]["usable_cores"]
    assert machine_differences(older, _with(cpu__usable_cores=2)) == []


def test_each_hardware_field_is_named():
    assert machine_differences(ENV, _with(cpu__model="Xeon B")) == ["CPU 'Xeon A' vs 'Xeon B'"]
    assert machine_differences(ENV, _with(cpu__logical_cores=2)) == ["logical cores 8 vs 2"]
    assert machine_differences(ENV, _with(memory__total_bytes=2**30)) == [
        "memory 16.0 GiB vs 1.0 GiB"
    ]
    assert machine_differences(ENV, _with(numpy__blas={"library": "mkl", "threads": 1})) == [
        "BLAS 'openblas' vs 'mkl'",
        "BLAS threads 8 vs 1",
    ]
    assert machine_differences(ENV, _with(gpus=[{"name": "H100"}])) == ["GPUs none vs ['H100']"]


def test_a_baseline_taken_with_subnormal_flushing_switched_is_named():
    # a long-trained model's step takes 2.7x as long without it (docs/engine.md)
    on, off = _with(), _with()
    on["everyo"], off["everyo"] = {"flush_denormal": True}, {"flush_denormal": False}
    assert machine_differences(on, off) == ["subnormal flushing on vs off"]
    assert machine_differences(_with(), off) == []  # a baseline from before it was recorded


def test_check_regression_carries_the_differences_to_its_verdict_line():
    times = np.full(20, 0.01)
    base = BenchmarkResult(times, name="w", environment=ENV)
    new = BenchmarkResult(times, name="w", environment=_with(cpu__model="Xeon B"))
    check = check_regression(new, base)
    assert check.machine_differences == ("CPU 'Xeon A' vs 'Xeon B'",)
    assert "Verdict: OK (baseline from another machine: CPU 'Xeon A' vs 'Xeon B';" in str(check)
    assert check_regression(times, times).machine_differences == ()  # plain arrays: no records


def test_a_baseline_that_differs_only_in_settings_is_not_called_another_machine():
    # the same hardware with flushing switched off (or another BLAS thread count): the verdict
    # line must not send the user looking for another machine
    times = np.full(20, 0.01)
    on, off = _with(), _with()
    on["everyo"], off["everyo"] = {"flush_denormal": True}, {"flush_denormal": False}
    check = check_regression(BenchmarkResult(times, name="w", environment=off),
                             BenchmarkResult(times, name="w", environment=on))  # fmt: skip
    assert check.machine_differences == ("subnormal flushing on vs off",)
    line = next(x for x in str(check).splitlines() if x.startswith("Verdict"))
    assert "another machine" not in line
    assert line.startswith("Verdict: OK (baseline measured with other settings: subnormal ")
    threads = check_regression(BenchmarkResult(times, name="w", environment=_with(
        numpy__blas={"library": "openblas", "threads": 1})), BenchmarkResult(
        times, name="w", environment=ENV))  # fmt: skip
    assert "(baseline measured with other settings: BLAS threads 8 vs 1;" in str(threads)
    # hardware and a setting together: another machine, with both named
    both = _with(cpu__model="Xeon B")
    both["everyo"] = {"flush_denormal": False}
    mixed = check_regression(BenchmarkResult(times, name="w", environment=both),
                             BenchmarkResult(times, name="w", environment=on))  # fmt: skip
    assert (
        "(baseline from another machine: CPU 'Xeon A' vs 'Xeon B'; subnormal flushing on vs "
        "off;" in str(mixed)
    )


def test_docstring_example():
    import doctest

    import everyo.bench.machine

    result = doctest.testmod(everyo.bench.machine)
    assert result.attempted > 0 and result.failed == 0


def test_the_blas_threads_compared_are_those_the_timed_calls_ran_with():
    # benchmark() records its environment after threads= has put the threads back: a baseline
    # timed with threads=1 and a result timed with threads=8 both recorded 8, and the check
    # said nothing of the thread counts that made their times differ
    from everyo.machine_state import MachineState

    def timed_with(blas_threads):
        state = MachineState(
            "quiet", "other processes used 0.0 of 8 cores", usable_cores=8,
            blas_threads=blas_threads, threads_policy=blas_threads, threads_applied=blas_threads,
        )  # fmt: skip
        return BenchmarkResult(
            np.full(20, 0.01), name="w", environment=ENV, machine=state.to_dict()
        )

    check = check_regression(timed_with(8), timed_with(1))
    assert check.machine_differences == ("BLAS threads 1 vs 8",)
    assert "(baseline measured with other settings: BLAS threads 1 vs 8;" in str(check)
    assert check_regression(timed_with(8), timed_with(8)).machine_differences == ()
    # a result without a machine state compares its record's threads, as before
    plain = BenchmarkResult(np.full(20, 0.01), name="w", environment=ENV)
    assert check_regression(plain, timed_with(8)).machine_differences == ()


def test_a_saved_new_result_is_judged_with_its_machine_and_settings(tmp_path):
    # check_regression("new.json", "base.json"): the new side's file was read for its times
    # only, so a contended new measurement got a verdict and its other settings went unnamed
    from everyo.bench.regression import MACHINE_BUSY
    from everyo.machine_state import MachineState

    base = BenchmarkResult(np.full(20, 0.01), name="w", environment=ENV)
    contended = MachineState("contended", "other processes used 7.5 of 8 cores", usable_cores=8)
    new = BenchmarkResult(
        np.full(20, 0.01), name="w", environment=_with(cpu__model="Xeon B"),
        machine=contended.to_dict(),
    )  # fmt: skip
    base.to_json(tmp_path / "base.json")
    new.to_json(tmp_path / "new.json")
    check = check_regression(tmp_path / "new.json", tmp_path / "base.json")
    assert check.verdict == MACHINE_BUSY
    assert check.machine_differences == ("CPU 'Xeon A' vs 'Xeon B'",)
    assert check.new_machine.startswith("contended") and check.name == "w"
