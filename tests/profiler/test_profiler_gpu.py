"""CUDA: device time per module event from CUDA events, CuPy pool counters (GPU machines only)."""

from __future__ import annotations

import numpy as np
import pytest

import everyo as eo
from everyo.profiler import profile


@pytest.mark.gpu
def test_cuda_module_events_get_device_time_resolved_at_stop(tmp_path):
    from everyo.core.device import device

    dev = device("cuda", strict=True)
    model = eo.Sequential(eo.Linear(256, 1024, seed=0), eo.ReLU(), eo.Linear(1024, 256, seed=1))
    model.to(dev)
    x = eo.tensor(np.ones((512, 256), np.float32)).to(dev)
    with profile(profile_memory=True) as p:
        for _ in range(5):
            model(x)
    assert p.run.options["cuda_timing"] is True
    batch = p.run.snapshot()
    modules = batch.kind == "module"
    assert (batch.device_ns[modules] > 0).all()
    rows = {r["name"]: r for r in p.summary()}
    assert rows["Linear"]["device_ms"] > 0 and rows["Linear"]["host_only"] is False
    assert "cuda pool bytes" in p.run.counters
    assert p.run.memory["cuda_pool_total_bytes"] > 0
    p.export_chrome_trace(tmp_path / "gpu.json")
    from everyo.profiler import load

    assert (load(tmp_path / "gpu.json").snapshot().device_ns[modules] > 0).all()


def test_cpu_runs_have_no_device_column_without_cuda_tensors():
    import sys

    if "cupy" in sys.modules:
        pytest.skip("CuPy is imported in this process")
    with profile() as p:
        eo.Linear(2, 2, seed=0)(eo.zeros(1, 2))
    assert p.run.snapshot().device_ns is None
    assert p.run.options["cuda_timing"] is False


class _FakeEvent:
    clock = [0]

    def record(self):
        _FakeEvent.clock[0] += 1000
        self.t = _FakeEvent.clock[0]


def _fake_cupy():
    from types import SimpleNamespace

    runtime = SimpleNamespace(getDeviceCount=lambda: 1, deviceSynchronize=lambda: None)
    cuda = SimpleNamespace(
        Event=_FakeEvent, runtime=runtime, get_elapsed_time=lambda a, b: (b.t - a.t) / 1e6
    )
    return SimpleNamespace(cuda=cuda)


class _Arr:
    def __init__(self, kind):
        from types import SimpleNamespace

        self.device = SimpleNamespace(type=kind)
        self.shape = (2, 2)


def test_cupy_installed_but_unused_keeps_the_plain_path_until_a_cuda_call(monkeypatch):
    """CuPy installed (here: a fake, imported lazily by the engine) costs CPU-only profiling
    nothing; the first module call on a CUDA tensor turns device timing on for the rest."""
    import sys

    from profiler_fakes import FakeModule

    import everyo.profiler.recording.gpu as gpu
    from everyo.profiler import Profiler, RunRegistry
    from everyo.profiler.recording import hooks

    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    monkeypatch.setattr(gpu, "_CUPY_INSTALLED", True)  # find_spec("cupy") would find it
    model = FakeModule(FakeModule())
    p = Profiler(registry=RunRegistry())
    with p:
        model(_Arr("cpu"))
        rec = hooks.active
        assert "module_call" not in vars(rec)  # the class's inlined recording path
        monkeypatch.setitem(sys.modules, "cupy", _fake_cupy())  # the engine imports CuPy
        model(_Arr("cuda"))
        assert vars(rec)["module_call"] == rec._module_call_full  # the general path
    assert p.run.options["cuda_timing"] is True
    device_ns = p.run.snapshot().device_ns.tolist()
    assert device_ns[:2] == [-1, -1]  # the CPU calls before
    assert all(ns > 0 for ns in device_ns[2:])
    assert [e.depth for e in p.events] == [1, 0, 1, 0]


def test_device_times_find_their_store_rows_across_flush_blocks():
    from types import SimpleNamespace

    from everyo.profiler.recording.store_writer import store_rows

    # a thread's events 0-2 went to store rows 10-12, events 3-4 to rows 20-21; 5 never flushed
    t = SimpleNamespace(blocks=[(0, 10, 3), (3, 20, 2)])
    assert store_rows([(t, i) for i in range(6)]).tolist() == [10, 11, 12, 20, 21, -1]
