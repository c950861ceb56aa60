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


def test_cpu_runs_have_no_device_column_without_cupy():
    import sys

    if "cupy" in sys.modules:
        pytest.skip("CuPy is imported in this process")
    import importlib.util

    with profile() as p:
        eo.Linear(2, 2, seed=0)(eo.zeros(1, 2))
    has_cupy = importlib.util.find_spec("cupy") is not None
    assert (p.run.snapshot().device_ns is not None) == has_cupy
    assert p.run.options["cuda_timing"] == has_cupy


def test_device_times_find_their_store_rows_across_flush_blocks():
    from types import SimpleNamespace

    from everyo.profiler.profiler import _row_of

    # a thread's events 0-2 went to store rows 10-12, events 3-4 to rows 20-21; 5 never flushed
    t = SimpleNamespace(blocks=[(0, 10, 3), (3, 20, 2)])
    firsts: dict = {}
    assert [_row_of(t, i, firsts) for i in range(6)] == [10, 11, 12, 20, 21, -1]
