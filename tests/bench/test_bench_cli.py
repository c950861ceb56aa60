"""`python -m everyo bench SPEC`: baselines, the regression gate's exit codes, bad SPECs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from everyo.__main__ import main
from everyo.bench import BenchmarkResult, load
from everyo.cli.bench import resolve_spec
from everyo.errors import EveryOBenchmarkError

ROOT = Path(__file__).resolve().parents[2]
QUICK = ["--warmup", "1", "--repeat", "15", "--processes", "2"]


def cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "everyo", "bench", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_save_baseline_then_check_passes_and_planted_slowdown_fails(tmp_path):
    baseline = tmp_path / "fast.json"
    saved = cli("tests.bench.sample_workloads:fast_fn", "--save-baseline", str(baseline), *QUICK)
    assert saved.returncode == 0, saved.stderr
    assert "Median latency:" in saved.stdout and "Baseline saved" in saved.stdout
    assert load(baseline).n == 30 and load(baseline).processes == 2
    assert "Processes: 2 (medians" in saved.stdout

    # same code again: both runs sleep 2 ms, so a generous threshold keeps a busy CI machine
    # from failing this; the noise-aware statistics are tested on synthetic samples instead
    again = cli(
        "tests.bench.sample_workloads:fast_fn",
        "--baseline",
        str(baseline),
        "--threshold",
        "50",
        *QUICK,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Verdict: OK" in again.stdout

    slow = cli(
        "tests.bench.sample_workloads:slow_fn",
        "--baseline",
        str(baseline),
        "--threshold",
        "50",
        *QUICK,
    )
    assert slow.returncode == 1, slow.stdout + slow.stderr
    assert "Verdict: REGRESSION" in slow.stdout
    assert "recorded for 'tests.bench.sample_workloads:fast_fn'" in slow.stdout


def test_workers_start_with_one_blas_thread_unless_asked_otherwise(tmp_path):
    """The gate's default: one BLAS thread set in each worker's environment (processes with
    several agreed too little to see a 20 % change here); --threads N and keep still apply."""
    one = cli("tests.bench.sample_workloads:one_blas_thread_fn", "--warmup", "0", "--repeat",
              "2", "--processes", "1")  # fmt: skip
    assert one.returncode == 0, one.stdout + one.stderr
    assert "limited in each worker's environment before NumPy loaded" in one.stdout
    two = cli("tests.bench.sample_workloads:one_blas_thread_fn", "--warmup", "0", "--repeat",
              "2", "--processes", "1", "--threads", "2")  # fmt: skip
    assert two.returncode == 3 and "OPENBLAS_NUM_THREADS is 2" in two.stderr


def test_json_output_in_process(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "r.json"
    spec = "tests.bench.sample_workloads:fast_fn"
    code = main(
        ["bench", spec, "--json", str(out), "--warmup", "0", "--repeat", "3", "--processes", "2"]
    )
    assert code == 0
    data = json.loads(out.read_text())
    assert data["name"] == spec and len(data["times_s"]) == 6
    assert [len(t) for t in data["process_times_s"]] == [3, 3] and data["processes"] == 2
    assert "Mean latency:" in capsys.readouterr().out


@pytest.mark.parametrize(
    "spec, message",
    [
        ("tests.bench.sample_workloads:NOT_CALLABLE", "not a callable"),
        ("tests.bench.sample_workloads:missing", "no attribute"),
        ("no_such_module_xyz:fn", "cannot import"),
        ("justaname", "module:function"),
    ],
)
def test_bad_specs_are_clear_errors(spec, message, monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(EveryOBenchmarkError, match=message):
        resolve_spec(spec)


def test_bad_spec_exits_with_code_two_and_a_message(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    assert main(["bench", "tests.bench.sample_workloads:NOT_CALLABLE"]) == 2
    assert "not a callable" in capsys.readouterr().err


def test_bad_repeat_exits_with_code_two(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    assert main(["bench", "tests.bench.sample_workloads:fast_fn", "--repeat", "0"]) == 2
    assert "repeat must be" in capsys.readouterr().err


def test_missing_baseline_file_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    missing = tmp_path / "nope.json"
    args = ["bench", "tests.bench.sample_workloads:fast_fn", "--baseline", str(missing)]
    assert main([*args, "--warmup", "0", "--repeat", "2"]) == 2
    assert "nope.json" in capsys.readouterr().err


@pytest.mark.parametrize(
    "spec, raised",
    [("broken_fn", "ZeroDivisionError: division by zero"), ("shape_error_fn", "EveryOShapeError")],
)
def test_a_failing_workload_has_its_own_exit_code_and_a_short_message(
    spec, raised, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(ROOT)
    saved = tmp_path / "b.json"
    args = ["bench", f"tests.bench.sample_workloads:{spec}", "--save-baseline", str(saved)]
    assert main([*args, "--warmup", "0", "--repeat", "2", "--processes", "2"]) == 3
    err = capsys.readouterr().err
    assert f"the workload tests.bench.sample_workloads:{spec} raised {raised}" in err
    assert "sample_workloads.py:" in err and "nothing was timed or saved" in err
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert not saved.exists()


def test_exit_codes_for_regression_and_failure_differ_in_a_subprocess(tmp_path):
    failed = cli("tests.bench.sample_workloads:broken_fn", *QUICK)
    assert failed.returncode == 3, failed.stdout + failed.stderr
    assert "ZeroDivisionError" in failed.stderr


def test_threshold_accepts_percent_text_and_refuses_a_fraction(tmp_path, monkeypatch, capsys):
    """``--threshold 10%`` is ``--threshold 10``; ``--threshold 0.10`` (a fraction, as Python
    takes it) would gate at 0.1 %, so it is refused with a message that names the unit."""
    monkeypatch.chdir(ROOT)
    baseline = tmp_path / "fast.json"
    spec = "tests.bench.sample_workloads:fast_fn"
    quick = ["--warmup", "0", "--repeat", "5", "--processes", "2"]
    fake_workers(monkeypatch, [_spread(1e-3, PROCESS_FACTORS) for _ in range(2)])
    assert main(["bench", spec, "--save-baseline", str(baseline), *quick]) == 0
    assert main(["bench", spec, "--baseline", str(baseline), "--threshold", "500%", *quick]) == 0
    assert "threshold 500.0%" in capsys.readouterr().out
    assert main(["bench", spec, "--baseline", str(baseline), "--threshold", "0.10", *quick]) == 2
    err = capsys.readouterr().err
    assert "--threshold 0.10 is in percent" in err and "--threshold 10 (or 10%)" in err


def test_baseline_from_another_machine_says_so_next_to_the_verdict(tmp_path, monkeypatch, capsys):
    from everyo.bench import environment

    monkeypatch.chdir(ROOT)
    baseline = tmp_path / "fast.json"
    spec = "tests.bench.sample_workloads:fast_fn"
    runs = [_spread(1e-3, PROCESS_FACTORS) for _ in range(3)]
    fake_workers(monkeypatch, runs, env=environment())
    assert main(["bench", spec, "--save-baseline", str(baseline)]) == 0
    capsys.readouterr()
    assert main(["bench", spec, "--baseline", str(baseline), "--threshold", "500"]) == 0
    same = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Verdict")]
    assert same == ["Verdict: OK"]  # this machine's own baseline: no note

    data = json.loads(baseline.read_text())
    data["environment"]["cpu"]["model"] = "Imaginary CPU 9000"
    data["environment"]["gpus"] = [{"name": "Imaginary GPU"}]
    baseline.write_text(json.dumps(data))
    assert main(["bench", spec, "--baseline", str(baseline), "--threshold", "500"]) == 0
    verdict = [line for line in capsys.readouterr().out.splitlines() if "Verdict" in line]
    assert len(verdict) == 1 and verdict[0].startswith("Verdict: OK (baseline from another machine")
    assert "CPU 'Imaginary CPU 9000' vs" in verdict[0] and "GPUs ['Imaginary GPU'] vs" in verdict[0]


def test_help_lists_every_exit_code_the_docs_give(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the epilog
    for code, meaning in (
        (0, "measured, no regression"),
        (1, "a regression beyond the threshold"),
        (2, "bad input"),
        (3, "the workload itself raised"),
        (4, "inconclusive: the machine was busy"),
    ):
        assert f"{code} {meaning}" in shown
    docs = (ROOT / "docs" / "shared-machines.md").read_text()
    assert "| 4 | inconclusive: the machine was busy" in docs
    assert "--processes N" in shown and "(default 6)" in shown and "--margin PCT" in shown


def test_a_baseline_saved_on_a_contended_machine_warns(tmp_path, monkeypatch, capsys):
    from everyo.machine_state import MachineState

    reason = "other processes used 1.8 of 2 cores; 2 BLAS threads"
    contended = MachineState("contended", reason, others_cores=1.8, usable_cores=2)
    fake_workers(monkeypatch, [[[1e-3] * 5] * 3], machine=contended)
    monkeypatch.chdir(ROOT)
    spec = "tests.bench.sample_workloads:fast_fn"
    assert main(["bench", spec, "--save-baseline", str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    assert "Baseline saved to" in out
    assert "warning: this baseline was measured on a contended machine" in out
    assert "inconclusive (exit code 4)" in out
    assert load(tmp_path / "b.json").machine_state.verdict == "contended"


def fake_workers(monkeypatch, runs, machine=None, env=None):
    """Replace the worker processes with planted per-process times: each call of
    ``benchmark_in_workers`` returns the next entry of ``runs`` (a list of per-process lists of
    seconds), with ``machine`` as its state; returns the calls' keyword arguments."""
    from everyo.bench import workers

    runs, calls = iter(runs), []

    def planted(spec, *args, **options):
        calls.append(options)
        groups = next(runs)
        return BenchmarkResult(
            times=[t for g in groups for t in g],
            process_times=groups,
            name=options.get("name") or spec,
            machine=None if machine is None else machine.to_dict(),
            process=f"workers-{len(calls)}",
            environment=env,
        )

    monkeypatch.setattr(workers, "benchmark_in_workers", planted)
    return calls


def _spread(centre, factors, n=20):
    """Per-process samples around ``centre * factor`` (1 % jitter within a process)."""
    return [[centre * f * (1 + 0.01 * ((i % 5) - 2)) for i in range(n)] for f in factors]


PROCESS_FACTORS = [1.0, 1.04, 0.97, 1.02, 0.99, 1.01]


@pytest.mark.parametrize(
    "new_factor, code, verdict",
    [(1.0, 0, "OK"), (1.5, 1, "REGRESSION"), (0.6, 0, "IMPROVEMENT"), (1.03, 0, "OK")],
)
def test_the_gate_exit_codes_on_planted_processes(
    new_factor, code, verdict, tmp_path, monkeypatch, capsys
):
    baseline = tmp_path / "b.json"
    runs = [_spread(1e-3, PROCESS_FACTORS), _spread(1e-3 * new_factor, PROCESS_FACTORS)]
    calls = fake_workers(monkeypatch, runs)
    monkeypatch.chdir(ROOT)
    spec = "tests.bench.sample_workloads:fast_fn"
    assert main(["bench", spec, "--save-baseline", str(baseline), "--processes", "6"]) == 0
    assert load(baseline).processes == 6
    args = ["bench", spec, "--baseline", str(baseline), "--threshold", "2", "--processes", "6"]
    assert main(args) == code
    out = capsys.readouterr().out
    assert f"Verdict: {verdict}" in out
    assert "Processes: baseline 6 (spread" in out and "margin 5.0%" in out
    assert [c["processes"] for c in calls] == [6, 6]


def test_the_gate_is_inconclusive_when_processes_disagree(tmp_path, monkeypatch, capsys):
    """+30 % by the calls alone, but the processes scatter by a factor of 2: no regression."""
    baseline = tmp_path / "b.json"
    wild = [1.0, 2.0, 0.6, 1.5, 0.8, 1.2]
    fake_workers(monkeypatch, [_spread(1e-3, wild), _spread(1.3e-3, wild[::-1])])
    monkeypatch.chdir(ROOT)
    spec = "tests.bench.sample_workloads:fast_fn"
    assert main(["bench", spec, "--save-baseline", str(baseline)]) == 0
    assert main(["bench", spec, "--baseline", str(baseline)]) == 0
    assert "Verdict: INCONCLUSIVE" in capsys.readouterr().out


def test_the_gate_exits_4_when_a_side_was_contended(tmp_path, monkeypatch, capsys):
    from everyo.machine_state import MachineState

    baseline = tmp_path / "b.json"
    BenchmarkResult(times=[1e-3] * 20, process_times=[[1e-3] * 10] * 2).to_json(baseline)
    reason = "other processes used 1.8 of 2 cores; 2 BLAS threads"
    busy = MachineState("contended", reason, others_cores=1.8, usable_cores=2)
    fake_workers(monkeypatch, [_spread(2e-3, PROCESS_FACTORS)], machine=busy)
    monkeypatch.chdir(ROOT)
    spec = "tests.bench.sample_workloads:fast_fn"
    assert main(["bench", spec, "--baseline", str(baseline)]) == 4
    assert "Verdict: INCONCLUSIVE: THE MACHINE WAS BUSY" in capsys.readouterr().out


def test_an_aa_on_a_busy_machine_is_inconclusive_not_a_change(tmp_path, monkeypatch, capsys):
    """Issue 43 item 2: baseline and check both busy, the load moved between them (the second
    run's processes all 40 % faster, a tight interval): exit 4, not IMPROVEMENT."""
    from everyo.machine_state import MachineState

    busy = MachineState(
        "busy",
        "other processes used 1.0 of 2 cores; 1 BLAS thread",
        others_cores=1.0,
        own_cores=1.0,
        usable_cores=2,
        window_s=5.0,
    )
    baseline = tmp_path / "b.json"
    fake_workers(
        monkeypatch,
        [_spread(1e-3, PROCESS_FACTORS), _spread(0.6e-3, PROCESS_FACTORS)],
        machine=busy,
    )
    monkeypatch.chdir(ROOT)
    spec = "tests.bench.sample_workloads:fast_fn"
    assert main(["bench", spec, "--save-baseline", str(baseline)]) == 0
    assert main(["bench", spec, "--baseline", str(baseline)]) == 4
    out = capsys.readouterr().out
    assert "Verdict: INCONCLUSIVE: THE MACHINE WAS BUSY" in out
    assert "was measured on a busy machine" in out and "in another run" in out


def test_an_old_baseline_loads_and_says_it_holds_one_process(tmp_path, monkeypatch, capsys):
    """A baseline in the format before processes were kept (format_version 1, no
    process_times_s): it loads, holds one process, and borrows the new side's spread."""
    old = {
        "format": "everyo.benchmark",
        "format_version": 1,
        "name": "tests.bench.sample_workloads:fast_fn",
        "created": 1764979200.0,
        "warmup": 10,
        "repeat": 20,
        "min_time": None,
        "samples": None,
        "synchronized": False,
        "times_s": _spread(1e-3, [1.0])[0],
        "stats_ms": {},
        "throughput": None,
        "workload": {},
        "environment": None,
        "worker": None,
        "outliers": 0,
        "stability": "stable",
        "machine": None,
    }
    baseline = tmp_path / "old.json"
    baseline.write_text(json.dumps(old))
    loaded = load(baseline)
    assert loaded.processes == 1 and loaded.process is None and loaded.process_times is None
    assert "Processes: 1 (this process only" in str(loaded)
    fake_workers(monkeypatch, [_spread(2e-3, PROCESS_FACTORS)])
    monkeypatch.chdir(ROOT)
    spec = "tests.bench.sample_workloads:fast_fn"
    assert main(["bench", spec, "--baseline", str(baseline)]) == 1
    out = capsys.readouterr().out
    assert "baseline 1 (saved before processes were kept" in out
    assert "Verdict: REGRESSION" in out


def test_the_gate_names_the_statistic_it_read_and_refuses_min_of_one_process(
    tmp_path, monkeypatch, capsys
):
    baseline = tmp_path / "b.json"
    runs = [_spread(1e-3, PROCESS_FACTORS), _spread(1e-3, PROCESS_FACTORS)] * 2
    calls = fake_workers(monkeypatch, runs)
    monkeypatch.chdir(ROOT)
    spec = "tests.bench.sample_workloads:fast_fn"
    assert main(["bench", spec, "--save-baseline", str(baseline)]) == 0
    assert main(["bench", spec, "--baseline", str(baseline)]) == 0
    out = capsys.readouterr().out
    assert "Baseline fastest call: " in out and "processes' fastest calls)" in out
    assert main(["bench", spec, "--baseline", str(baseline), "--statistic", "median"]) == 0
    assert "processes' medians)" in capsys.readouterr().out
    n = len(calls)
    args = ["bench", spec, "--baseline", str(baseline), "--statistic", "min", "--processes", "1"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--processes is 1" in err and len(err.strip().splitlines()) == 1
    assert len(calls) == n  # refused before timing


@pytest.mark.parametrize("option", [["--processes", "0"], ["--margin", "0.5"], ["--margin", "x"]])
def test_bad_processes_or_margin_exit_2_before_timing(option, monkeypatch, capsys):
    calls = fake_workers(monkeypatch, [])
    monkeypatch.chdir(ROOT)
    assert main(["bench", "tests.bench.sample_workloads:fast_fn", *option]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and calls == []


def _good_baseline(tmp_path) -> dict:
    path = tmp_path / "good.json"
    assert main(["bench", "tests.bench.sample_workloads:fast_fn", "--save-baseline", str(path),
                 "--warmup", "0", "--repeat", "3"]) == 0  # fmt: skip
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    "damage",
    ["not utf-8", "too deep", "string time", "string repeat", "string machine", "empty times"],
)
def test_a_bad_baseline_file_is_exit_2_with_one_line(tmp_path, monkeypatch, capsys, damage):
    """Issue 44: these gave a bare traceback and exit 1, the documented "regression" code."""
    monkeypatch.chdir(ROOT)
    data = _good_baseline(tmp_path)
    capsys.readouterr()
    bad = tmp_path / "bad.json"
    if damage == "not utf-8":
        bad.write_bytes(json.dumps(data).encode().replace(b'"name"', b'"n\xff\xfeme"'))
    elif damage == "too deep":
        bad.write_text("[" * 100_000 + "]" * 100_000)
    else:
        if damage == "string time":
            data["times_s"][0] = "fast"
        elif damage == "string repeat":
            data["repeat"] = "many"
        elif damage == "string machine":
            data["machine"] = {**(data.get("machine") or {"verdict": "quiet", "reason": ""}),
                               "blas_threads": "many"}  # fmt: skip
        else:
            data["times_s"] = []
        bad.write_text(json.dumps(data))
    args = ["bench", "tests.bench.sample_workloads:fast_fn", "--baseline", str(bad)]
    assert main([*args, "--warmup", "0", "--repeat", "2"]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err or "benchmark result" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_spec_whose_import_raises_is_exit_2_with_one_line(tmp_path, monkeypatch, capsys):
    """Issue 44: `bench mod:fn` whose module raises on import gave a traceback and exit 1."""
    (tmp_path / "raises_on_import.py").write_text("x = 1\nraise RuntimeError('no GPU here')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["bench", "raises_on_import:fn", "--warmup", "0", "--repeat", "2"]) == 2
    err = capsys.readouterr().err
    assert "RuntimeError: no GPU here at raises_on_import.py:2" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
