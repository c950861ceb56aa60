"""`python -m everyo doctor`: one line per check, a fix for each problem, exit 1 only on failure."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from everyo.__main__ import main
from everyo.bench.environment import environment
from everyo.cli import doctor

ROOT = Path(__file__).resolve().parents[1]
TAGS = ("[ok]", "[info]", "[warn]", "[FAIL]")


def _fail_import_of(monkeypatch, *names: str) -> None:
    real = doctor.import_module

    def fake(name):
        if name in names:
            raise ImportError(f"No module named {name!r}")
        return real(name)

    monkeypatch.setattr(doctor, "import_module", fake)


def _run_doctor(monkeypatch, capsys, checks) -> tuple[int, str]:
    monkeypatch.setattr(doctor, "CHECKS", list(checks))
    code = main(["doctor"])
    return code, capsys.readouterr().out


def _assert_each_problem_has_a_fix(out: str) -> None:
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(("[warn]", "[FAIL]", "[info]")):
            assert lines[i + 1].strip().startswith("fix: "), line


def test_doctor_here_exits_0_and_warns_about_cuda(monkeypatch):
    monkeypatch.delenv("EVERYO_DISABLE_CUDA", raising=False)  # same view as the subprocess
    env = dict(os.environ)
    done = subprocess.run(
        [sys.executable, "-m", "everyo", "doctor"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    checks = [line for line in done.stdout.splitlines() if line.startswith(TAGS)]
    assert len(checks) == len(doctor.CHECKS)
    cuda = next(line for line in checks if "CUDA device" in line)
    expected = "[ok]" if environment()["gpus"] else "[warn]"
    assert cuda.startswith(expected), cuda
    assert any(line.startswith("[ok]") and "NumPy" in line for line in checks)
    _assert_each_problem_has_a_fix(done.stdout)


def test_numpy_import_failure_is_required_and_exits_1(monkeypatch, capsys):
    _fail_import_of(monkeypatch, "numpy")
    code, out = _run_doctor(
        monkeypatch, capsys, [doctor.check_python, doctor.check_numpy, doctor.check_cupy]
    )
    assert code == 1
    assert "[FAIL] NumPy: cannot import: ImportError" in out
    assert 'fix: pip install "numpy>=1.24"' in out
    assert "1 failed" in out


def test_old_python_fails(monkeypatch, capsys):
    monkeypatch.setattr(doctor, "python_version", lambda: (3, 9, 18))
    code, out = _run_doctor(monkeypatch, capsys, [doctor.check_python])
    assert code == 1
    assert "[FAIL] Python: 3.9.18 is older than 3.10" in out
    assert "fix: install Python 3.10 or newer" in out


def test_missing_optional_pieces_warn_and_exit_0(monkeypatch, capsys):
    _fail_import_of(monkeypatch, "cupy", "plotly", "threadpoolctl")
    monkeypatch.delenv("EVERYO_DISABLE_CUDA", raising=False)
    checks = [
        doctor.check_numpy,
        doctor.check_threadpoolctl,
        doctor.check_cupy,
        doctor.check_cuda_device,
        doctor.lab_check("plotly", 6),
    ]
    code, out = _run_doctor(monkeypatch, capsys, checks)
    assert code == 0
    assert "[warn] CuPy: not installed" in out
    assert "[warn] CUDA device: none visible" in out
    assert '"everyo[cuda12]"' in out
    assert "[warn] plotly (lab): cannot import" in out
    assert 'fix: pip install "everyo[lab]"' in out
    assert "fix: pip install threadpoolctl" in out  # a dependency, not an extra
    assert "1 ok, 4 warnings, 0 failed" in out
    _assert_each_problem_has_a_fix(out)


def test_lab_versions_below_the_minimum_warn(monkeypatch):
    old = types.ModuleType("ipywidgets")
    old.__version__ = "7.8.1"
    monkeypatch.setitem(sys.modules, "ipywidgets", old)
    result = doctor.lab_check("ipywidgets", 8)()
    assert (result.status, result.detail) == ("warn", "7.8.1 is older than 8")


def test_lab_check_without_import_reads_installed_metadata():
    assert doctor.lab_check("pytest", load=False)().status == "ok"
    missing = doctor.lab_check("surely-not-installed-everyo-pkg", load=False)()
    assert missing.status == "warn" and missing.fix == doctor.LAB_FIX


def _cupy(device_count) -> types.ModuleType:
    import numpy as np

    cupy = types.ModuleType("cupy")
    cupy.__version__ = "13.6.0"
    cupy.arange = np.arange
    cupy.cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(
            getDeviceCount=device_count,
            getDeviceProperties=lambda i: {"name": b"NVIDIA H200"},
        )
    )
    return cupy


def test_cuda_device_states(monkeypatch):
    monkeypatch.delenv("EVERYO_DISABLE_CUDA", raising=False)
    monkeypatch.setitem(sys.modules, "cupy", _cupy(lambda: 1))
    ok = doctor.check_cuda_device()
    assert ok.status == "ok" and "NVIDIA H200" in ok.detail
    monkeypatch.setitem(sys.modules, "cupy", _cupy(lambda: 0))
    assert doctor.check_cuda_device().status == "warn"

    def no_driver():
        raise RuntimeError("cudaErrorInsufficientDriver")

    monkeypatch.setitem(sys.modules, "cupy", _cupy(no_driver))
    broken = doctor.check_cuda_device()
    assert broken.status == "warn" and "cudaErrorInsufficientDriver" in broken.detail
    assert "nvidia-smi" in broken.fix


def test_disable_cuda_is_reported_as_info(monkeypatch, capsys):
    monkeypatch.setenv("EVERYO_DISABLE_CUDA", "1")
    code, out = _run_doctor(
        monkeypatch, capsys, [doctor.check_cuda_device, doctor.check_disable_cuda]
    )
    assert code == 0
    assert "[info] EVERYO_DISABLE_CUDA: set to '1'" in out
    assert "[info] CUDA device: not checked" in out
    _assert_each_problem_has_a_fix(out)


def test_missing_chromium_warns(monkeypatch, tmp_path):
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    monkeypatch.setattr(doctor, "CHROMIUM", tmp_path / "chromium")
    result = doctor.check_chromium()
    assert result.status == "warn" and "apt-get install chromium" in result.fix


def test_a_check_that_raises_is_a_failure_and_the_rest_still_run(monkeypatch, capsys):
    def check_exploding():
        raise ValueError("boom")

    code, out = _run_doctor(monkeypatch, capsys, [check_exploding, doctor.check_python])
    assert code == 1
    assert "[FAIL] exploding: the check itself raised ValueError: boom" in out
    assert "[ok]   Python:" in out


@pytest.mark.parametrize("status", ["ok", "info", "warn", "fail"])
def test_format_result_tags(status):
    line = doctor.format_result(doctor.CheckResult("X", status, "detail", "do this"))
    tag = {"ok": "[ok]  ", "info": "[info]", "warn": "[warn]", "fail": "[FAIL]"}[status]
    assert line.startswith(f"{tag} X: detail")
    assert ("fix: do this" in line) == (status != "ok")


@pytest.mark.parametrize(
    ("verdict", "others", "status", "says"),
    [
        ("quiet", 0.0, "[ok]", "threads='auto' leaves them while the machine is quiet"),
        ("busy", 1.0, "[warn]", "threads='auto' (the default of benchmark(), sweeps"),
        ("contended", 1.8, "[warn]", "would limit BLAS to 1 thread here"),
        ("unknown", None, "[info]", "pip install psutil"),
    ],
)
def test_machine_load_reports_the_load_the_threads_and_advice(
    monkeypatch, capsys, verdict, others, status, says
):
    from everyo import machine_state, thread_policy
    from everyo.machine_state import MachineState

    reason = f"other processes used {others} of 2 cores; 2 BLAS threads"
    state = MachineState(verdict, reason, others_cores=others, usable_cores=2, blas_threads=2)
    monkeypatch.setattr(machine_state, "current_load", lambda window_s=0.1: state)
    two = lambda: {"blas": 2, "openmp": None}  # noqa: E731
    monkeypatch.setattr(machine_state, "threads_in_use", two)
    # choose_threads reads them through its own import: left alone, the advice depended on
    # the host's BLAS threads (OPENBLAS_NUM_THREADS=1 gave "already uses 2 threads")
    monkeypatch.setattr(thread_policy, "threads_in_use", two)
    code, out = _run_doctor(monkeypatch, capsys, [doctor.check_machine_load])
    assert code == 0  # a busy machine is a warning, never a failure
    line = " ".join(out.split())
    assert line.startswith(f"{status} machine load: {verdict}: {reason}")
    assert says in line
    _assert_each_problem_has_a_fix(out)
