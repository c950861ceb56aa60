"""everyo.environment(), format_environment() and `python -m everyo info [--json]`."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import everyo
from everyo.__main__ import main
from everyo.environment_record import blas_info, environment, format_environment

ROOT = Path(__file__).resolve().parents[1]
# The module that holds the probes (everyo.bench.environment re-exports its public names).
env_mod = sys.modules["everyo.environment_record"]
KEYS = {"everyo", "python", "numpy", "os", "cpu", "memory", "cuda", "gpus", "git"}


def test_environment_is_a_json_serialisable_record_of_this_process():
    env = everyo.environment()
    assert set(env) == KEYS
    assert json.loads(json.dumps(env)) == env
    assert env["everyo"]["version"] == everyo.__version__
    assert env["python"]["version"] == platform.python_version()
    assert env["python"]["executable"] == sys.executable
    assert env["numpy"]["version"] == np.__version__
    assert env["cpu"]["logical_cores"] == os.cpu_count()
    assert isinstance(env["gpus"], list)
    assert env["os"]["system"] == platform.system()


def test_environment_is_exported_from_bench():
    assert everyo.bench.environment is environment
    assert "environment" in everyo.bench.__all__


def _git(cwd: Path, *args: str) -> str:
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    done = subprocess.run(["git", *ident, *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _repo(path: Path) -> str:
    path.mkdir(exist_ok=True)
    _git(path, "init", "-q")
    (path / "a.txt").write_text("one")
    _git(path, "add", "a.txt")
    _git(path, "commit", "-q", "-m", "first")
    return _git(path, "rev-parse", "HEAD")


def test_git_commit_and_dirty_flag_of_the_working_directory(tmp_path, monkeypatch):
    head = _repo(tmp_path)
    monkeypatch.chdir(tmp_path)
    git = environment()["git"]
    assert git == {"commit": head, "dirty": None, "root": str(tmp_path)}  # dirty: not asked
    assert environment(git_status=True)["git"]["dirty"] is False
    (tmp_path / "a.txt").write_text("two")
    assert environment(git_status=True)["git"]["dirty"] is True


def test_the_commit_is_read_from_a_subfolder_packed_refs_and_a_detached_head(tmp_path, monkeypatch):
    head = _repo(tmp_path)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert environment()["git"]["commit"] == head
    _git(tmp_path, "pack-refs", "--all")  # the branch now lives in .git/packed-refs only
    assert environment()["git"]["commit"] == head
    _git(tmp_path, "checkout", "-q", "--detach")
    assert environment()["git"]["commit"] == head


def test_the_commit_of_a_linked_worktree(tmp_path, monkeypatch):
    _repo(tmp_path / "main")
    _git(tmp_path / "main", "worktree", "add", "-q", "-b", "other", str(tmp_path / "wt"))
    (tmp_path / "wt" / "b.txt").write_text("b")
    _git(tmp_path / "wt", "add", "b.txt")
    _git(tmp_path / "wt", "commit", "-q", "-m", "second")
    monkeypatch.chdir(tmp_path / "wt")
    git = environment()["git"]
    assert git["commit"] == _git(tmp_path / "wt", "rev-parse", "HEAD")
    assert git["root"] == str(tmp_path / "wt")


def test_recording_the_commit_runs_no_hook_of_the_repository(tmp_path, monkeypatch):
    """A repository's core.fsmonitor hook runs on `git status`; exports must not run it."""
    import everyo.profiler as ep

    head = _repo(tmp_path / "repo")
    marker = tmp_path / "hook-ran"
    hook = tmp_path / "fsmonitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    hook.chmod(0o755)
    _git(tmp_path / "repo", "config", "core.fsmonitor", str(hook))
    _git(tmp_path / "repo", "status")  # the hook is live: plain git status runs it
    assert marker.exists()
    marker.unlink()
    monkeypatch.chdir(tmp_path / "repo")
    assert environment()["git"]["commit"] == head
    with ep.profile(registry=ep.RunRegistry()) as p:
        with ep.record_function("work"):
            pass
    p.export_chrome_trace(tmp_path / "t.json")
    assert not marker.exists()
    p.export_json(tmp_path / "r.json", format="raw")
    assert (
        json.loads((tmp_path / "r.json").read_text())["run"]["environment"]["git"]["commit"] == head
    )
    assert environment(git_status=True)["git"]["dirty"] is False  # asked: fsmonitor stays off
    assert not marker.exists()


def test_git_is_none_outside_a_repo_or_on_an_unborn_branch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert environment()["git"] is None
    _git(tmp_path, "init", "-q")  # a repository without a commit yet
    assert environment()["git"] is None


def test_no_git_process_runs_for_the_commit(tmp_path, monkeypatch):
    head = _repo(tmp_path)
    monkeypatch.chdir(tmp_path)

    def no_process(cmd, **kwargs):
        raise AssertionError(f"ran {cmd}")

    monkeypatch.setattr(subprocess, "run", no_process)
    monkeypatch.setenv("PATH", "")  # and git itself missing: the commit is still read
    assert environment()["git"]["commit"] == head


def test_a_hanging_git_status_gives_dirty_none(tmp_path, monkeypatch):
    head = _repo(tmp_path)
    monkeypatch.chdir(tmp_path)

    def hang(cmd, **kwargs):
        raise subprocess.TimeoutExpired(cmd, kwargs["timeout"])

    monkeypatch.setattr(subprocess, "run", hang)
    assert environment(git_status=True)["git"] == {
        "commit": head,
        "dirty": None,
        "root": str(tmp_path),
    }


def test_blas_falls_back_to_numpy_config_without_threadpoolctl(monkeypatch):
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # makes the import fail
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    blas = blas_info()
    assert blas is not None and blas["source"] == "numpy.show_config"
    assert blas["library"]
    assert blas["threads"] == 3


def test_undetectable_blas_is_none_and_named_in_the_text(monkeypatch):
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)

    def broken(*args, **kwargs):
        raise RuntimeError("no config")

    monkeypatch.setattr(np, "show_config", broken)
    env = environment()
    assert env["numpy"]["blas"] is None
    assert "not detected" in format_environment(env)


def test_cpu_model_from_an_arm_style_cpuinfo(tmp_path, monkeypatch):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nBogoMIPS\t: 50.00\n\nHardware\t: Raspberry Pi 5\n")
    fields = env_mod._read_proc(str(cpuinfo))
    assert fields["processor"] == "0"
    monkeypatch.setattr(env_mod, "_read_proc", lambda path: fields)
    assert environment()["cpu"]["model"] == "Raspberry Pi 5"


def test_memory_falls_back_to_sysconf_without_proc(monkeypatch):
    monkeypatch.setattr(env_mod, "_read_proc", lambda path: {})
    total = environment()["memory"]["total_bytes"]
    assert isinstance(total, int) and total > 0
    assert environment()["cpu"]["model"]  # platform's answer stands in for /proc/cpuinfo


def _fake_cupy(count: int = 1, fail: bool = False) -> types.ModuleType:
    def device_count():
        if fail:
            raise RuntimeError("cudaErrorInsufficientDriver")
        return count

    runtime = types.SimpleNamespace(
        getDeviceCount=device_count,
        runtimeGetVersion=lambda: 12040,
        driverGetVersion=lambda: 12080,
        getDeviceProperties=lambda i: {
            "name": b"NVIDIA H200",
            "totalGlobalMem": 150_000_000_000,
            "major": 9,
            "minor": 0,
            "multiProcessorCount": 132,
        },
    )
    cupy = types.ModuleType("cupy")
    cupy.__version__ = "13.6.0"
    cupy.cuda = types.SimpleNamespace(runtime=runtime)
    cupy.arange = np.arange
    return cupy


def test_gpu_fields_come_from_cupy_when_it_sees_a_device(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(count=2))
    monkeypatch.delenv("EVERYO_DISABLE_CUDA", raising=False)
    monkeypatch.setattr(env_mod.shutil, "which", lambda name: None)  # no nvidia-smi
    env = environment()
    assert json.loads(json.dumps(env)) == env
    assert env["cuda"]["cupy"] == "13.6.0"
    assert env["cuda"]["runtime_version"] == "12.4"
    assert env["cuda"]["cuda_driver_version"] == "12.8"
    assert [g["name"] for g in env["gpus"]] == ["NVIDIA H200", "NVIDIA H200"]
    assert env["gpus"][1] == {
        "index": 1,
        "name": "NVIDIA H200",
        "memory_bytes": 150_000_000_000,
        "compute_capability": "9.0",
        "multiprocessors": 132,
    }
    text = format_environment(env)
    assert "gpu 1" in text and "139.7 GiB" in text and "runtime 12.4" in text


def test_cuda_errors_and_disabling_give_no_gpus(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(fail=True))
    monkeypatch.delenv("EVERYO_DISABLE_CUDA", raising=False)
    env = environment()
    assert env["gpus"] == [] and env["cuda"]["cupy"] == "13.6.0"
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(count=1))
    monkeypatch.setenv("EVERYO_DISABLE_CUDA", "1")
    env = environment()
    assert env["gpus"] == [] and env["cuda"]["disabled"] is True
    assert "EVERYO_DISABLE_CUDA=1" in format_environment(env)


def test_format_environment_aligns_the_value_column():
    lines = format_environment(environment()).splitlines()
    labels = [line.split("  ")[0] for line in lines]
    assert labels[:3] == ["everyo", "python", "numpy"]
    width = max(len(label) for label in labels)
    assert all(line[width : width + 2] == "  " and line[width + 2] != " " for line in lines)


def test_info_json_subprocess_prints_the_record():
    done = subprocess.run(
        [sys.executable, "-m", "everyo", "info", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    env = json.loads(done.stdout)
    assert set(env) == KEYS
    assert env["everyo"]["version"] == everyo.__version__
    assert env["numpy"]["version"] == np.__version__
    assert env["cpu"]["logical_cores"] == os.cpu_count()
    assert isinstance(env["memory"]["total_bytes"], int)
    assert env["git"] is None or len(env["git"]["commit"]) == 40


def test_info_prints_human_text(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("everyo")
    assert f"\nnumpy   {np.__version__}\n" in out
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)


def test_info_piped_into_a_reader_that_stops_early_prints_no_traceback():
    """`python -m everyo info | head -1`: the closed pipe is not an error worth a traceback
    (``true`` exits without reading, so the pipe is closed before anything is written)."""
    done = subprocess.run(
        f"{sys.executable} -m everyo info | true",
        shell=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr


def test_help_lists_every_command_in_plain_text(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "``" not in out  # the docstring's markup does not reach a terminal
    for command in ("info", "doctor", "bench", "profile", "demo"):
        assert f"    {command} " in out


@pytest.mark.parametrize(
    "forced, said",
    [("signal", "python (signal)"), ("thread", "python (thread)"), ("bogus", "bogus (refused)")],
)
def test_the_record_says_which_sampler_everyo_sampler_forces(monkeypatch, capsys, forced, said):
    """Issue 44: with EVERYO_SAMPLER=signal or thread, the record and `info` said `c`."""
    monkeypatch.setenv("EVERYO_SAMPLER", forced)
    assert environment()["everyo"]["profiler_sampler"] == said
    assert main(["info"]) == 0
    assert f"profiler_sampler: {said}" in capsys.readouterr().out
