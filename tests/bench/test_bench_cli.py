"""`python -m everyo bench SPEC`: baselines, the regression gate's exit codes, bad SPECs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from everyo.__main__ import main
from everyo.bench import load
from everyo.cli.bench import resolve_spec
from everyo.errors import EveryOBenchmarkError

ROOT = Path(__file__).resolve().parents[2]
QUICK = ["--warmup", "1", "--repeat", "15"]


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
    assert load(baseline).n == 15

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


def test_json_output_in_process(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "r.json"
    spec = "tests.bench.sample_workloads:fast_fn"
    code = main(["bench", spec, "--json", str(out), "--warmup", "0", "--repeat", "3"])
    assert code == 0
    data = json.loads(out.read_text())
    assert data["name"] == spec and len(data["times_s"]) == 3
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
    assert main([*args, "--warmup", "0", "--repeat", "2"]) == 3
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
    quick = ["--warmup", "0", "--repeat", "5"]
    assert main(["bench", spec, "--save-baseline", str(baseline), *quick]) == 0
    assert main(["bench", spec, "--baseline", str(baseline), "--threshold", "500%", *quick]) == 0
    assert "threshold 500.0%" in capsys.readouterr().out
    assert main(["bench", spec, "--baseline", str(baseline), "--threshold", "0.10", *quick]) == 2
    err = capsys.readouterr().err
    assert "--threshold 0.10 is in percent" in err and "--threshold 10 (or 10%)" in err


def test_baseline_from_another_machine_says_so_next_to_the_verdict(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    baseline = tmp_path / "fast.json"
    spec = "tests.bench.sample_workloads:fast_fn"
    quick = ["--warmup", "0", "--repeat", "5"]
    assert main(["bench", spec, "--save-baseline", str(baseline), *quick]) == 0
    capsys.readouterr()
    assert main(["bench", spec, "--baseline", str(baseline), "--threshold", "500", *quick]) == 0
    same = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Verdict")]
    assert same == ["Verdict: OK"]  # this machine's own baseline: no note

    data = json.loads(baseline.read_text())
    data["environment"]["cpu"]["model"] = "Imaginary CPU 9000"
    data["environment"]["gpus"] = [{"name": "Imaginary GPU"}]
    baseline.write_text(json.dumps(data))
    assert main(["bench", spec, "--baseline", str(baseline), "--threshold", "500", *quick]) == 0
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


def test_a_baseline_saved_on_a_contended_machine_warns(tmp_path, monkeypatch, capsys):
    from everyo.bench import timing
    from everyo.machine_state import MachineState

    class ContendedWatch:
        def __init__(self, **kwargs):
            pass

        def start(self):
            return self

        def stop(self):
            reason = "other processes used 1.8 of 2 cores; 2 BLAS threads"
            return MachineState("contended", reason, others_cores=1.8, usable_cores=2)

    monkeypatch.setattr(timing, "MachineWatch", ContendedWatch)
    (tmp_path / "work_mod.py").write_text("def work():\n    return sum(range(100))\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["bench", "work_mod:work", "--save-baseline", "b.json", "--repeat", "5"]) == 0
    out = capsys.readouterr().out
    assert "Baseline saved to b.json" in out
    assert "warning: this baseline was measured on a contended machine" in out
    assert "inconclusive (exit code 4)" in out
    assert load(tmp_path / "b.json").machine_state.verdict == "contended"


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
