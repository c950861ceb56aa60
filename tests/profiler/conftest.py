"""Fixtures of the profiler tests."""

from __future__ import annotations

import pytest
from profiler_fakes import FakeClock

from everyo.profiler import RunRegistry


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def registry() -> RunRegistry:
    """A private run registry, so tests neither fill nor read the kernel-wide one."""
    return RunRegistry()


# Test modules with ``pytestmark = pytest.mark.usefixtures("recorder_impl")`` run every test
# once per recorder: the compiled module-call path (where it was built) and the pure-Python one.
def _implementations() -> list:
    from everyo.profiler.recording import recorder

    impls = ["python"]
    if recorder.CRecorder is not None:
        impls.insert(0, "c")
    return impls


def pytest_generate_tests(metafunc):
    if "recorder_impl" in metafunc.fixturenames:
        metafunc.parametrize("recorder_impl", _implementations(), indirect=True)


@pytest.fixture
def recorder_impl(request, monkeypatch):
    from everyo.profiler.recording import recorder

    cls = recorder.CRecorder if request.param == "c" else recorder.PythonRecorder
    monkeypatch.setattr(recorder, "Recorder", cls)
    return request.param
