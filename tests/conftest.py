"""Shared fixtures: every test must leave no profiler running."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

os.environ.setdefault("EVERYO_TEST", "1")

try:  # one BLAS thread: CI has 2 cores, and oversubscribed BLAS makes small ops erratic
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")
except ImportError:  # pragma: no cover - threadpoolctl is in the dev extra
    pass


def _check_every_exported_trace() -> None:
    """Every Chrome trace the suite writes must nest exactly as viewers read it (issue 33).

    Wrapped here, at import, so that test modules importing the writer get the checked one."""
    from trace_nesting import assert_trace_nests

    from everyo.profiler.export import chrome

    write = chrome.export_chrome_trace

    def export_and_check(run, path, **options):
        written = write(run, path, **options)
        assert_trace_nests(written)
        return written

    export_and_check.__doc__ = write.__doc__
    chrome.export_chrome_trace = export_and_check


_check_every_exported_trace()


def _quiet_machine_by_default():
    """The machine reads as quiet unless a test is marked ``real_machine``: like a fake clock,
    so that what other processes on the test machine do cannot change a test's notes, verdicts
    or recommendations. Patched at import, not per test: module-scoped fixtures build runs
    (and read the machine) before any function-scoped fixture runs."""
    import time

    from everyo import machine_state

    real = machine_state._read

    def quiet_reading():
        return machine_state.Reading(time.monotonic(), 0.0, 0.0, 0, "proc")

    machine_state._read = quiet_reading
    return machine_state, real


_MACHINE_STATE, _REAL_READ = _quiet_machine_by_default()


@pytest.fixture(autouse=True)
def _real_machine_when_marked(request, monkeypatch):
    """Tests marked ``real_machine`` read the real load (the reader's own tests patch it)."""
    if request.node.get_closest_marker("real_machine"):
        monkeypatch.setattr(_MACHINE_STATE, "_read", _REAL_READ)


def _gpu_available() -> bool:
    if os.environ.get("EVERYO_DISABLE_CUDA") == "1":
        return False
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


GPU = _gpu_available()


def _torch_gpu_available() -> bool:
    """A CUDA GPU that torch sees (its tests need no CuPy); torch is imported only when asked."""
    if os.environ.get("EVERYO_DISABLE_CUDA") == "1":
        return False
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if GPU:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU with CuPy; none is present")
    torch_gpu = None
    for item in items:
        if "gpu" not in item.keywords:
            continue
        if "torch" in item.module.__name__:  # a PyTorch test: torch's CUDA, not CuPy's
            torch_gpu = _torch_gpu_available() if torch_gpu is None else torch_gpu
            if torch_gpu:
                continue
        item.add_marker(skip)


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def device_name(request):
    """Parametrise a test over devices: cpu always, cuda where a GPU is present."""
    return request.param


@pytest.fixture(autouse=True)
def _no_profiler_left_active():
    from everyo.profiler.recording import hooks

    def clean_up():
        leaked = hooks.holder() or hooks.active
        hooks.set_active(None)
        if hooks.holder() is not None:
            hooks.release(hooks.holder())
        return leaked

    clean_up()  # a previous test leaked; clean up so only that one fails
    yield
    leaked = clean_up()
    if leaked is not None:
        pytest.fail(f"test left a profiler active: {leaked!r}")


@pytest.fixture(scope="session")
def benchmark_script():
    """``benchmark_script("name")``: the module ``benchmarks/name.py``, imported from its file
    (the scripts are not a package)."""
    folder = Path(__file__).resolve().parents[1] / "benchmarks"

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
