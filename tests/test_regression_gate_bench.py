"""The regression gate benchmark (`benchmarks/regression_gate.py`) reads the gate's output as the
gate prints it, refuses unknown scenarios, and runs end to end on its cheapest scenario."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def gate(benchmark_script):
    folder = str(ROOT / "benchmarks")
    sys.path.insert(0, folder)  # the script imports its siblings (contention, gate_workload)
    try:
        yield benchmark_script("regression_gate")
    finally:
        sys.path.remove(folder)


def test_the_truth_is_read_from_the_gates_own_change_line(gate):
    from everyo.bench import BenchmarkResult, check_regression

    base = BenchmarkResult([1e-3, 1.01e-3, 0.99e-3] * 10)
    new = BenchmarkResult([2e-3, 2.02e-3, 1.98e-3] * 10)
    line = next(s for s in str(check_regression(new, base)).splitlines() if "Regression:" in s)
    assert gate.truth_inside(line, 100.0) and not gate.truth_inside(line, 20.0)
    assert not gate.truth_inside("Regression: nothing", 100.0)


def test_an_unknown_scenario_is_refused(gate, capsys):
    with pytest.raises(SystemExit) as exit_info:
        gate.main(["--only", "double,nonsense"])
    assert exit_info.value.code == 2 and "nonsense" in capsys.readouterr().err


def test_the_wall_scenario_prints_a_row_of_the_summary_table():
    from everyo.bench.workers import DEFAULT_PROCESSES

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "regression_gate.py"),
            "--only",
            "wall",
            "--trials",
            "1",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| scenario | load average") and len(rows) == 3
    assert rows[2].startswith(f"| wall time, {DEFAULT_PROCESSES} processes |")
    assert rows[2].count("|") == rows[0].count("|")
