"""A thread policy holds in the thread that measures: OpenBLAS has one thread pool per process,
and threadpoolctl obeys only the thread that first set its size, so a policy applied in a
background thread (the sweep widget, a Dask worker thread) after one applied in the main thread
was ignored while it said it was applied. The real BLAS library here, or a BLAS burner; no
wall-clock thresholds."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from everyo import machine_state as ms
from everyo import thread_limits
from everyo.bench import sweep_batch_sizes
from everyo.thread_policy import ThreadPolicy

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
BURNER = """
import numpy as np
a = np.random.default_rng(0).random((512, 512), dtype=np.float32)
while True:
    a @ a
"""


@pytest.fixture
def two_blas_threads():
    """BLAS on two threads for the test (the suite runs on one: conftest.py), or skip where
    the library cannot have two (one core)."""
    from threadpoolctl import threadpool_limits

    assert thread_limits.held() is None, "an earlier test left a thread limit held"
    with threadpool_limits(limits=2, user_api="blas"):  # (a with block: no thread keeps control)
        before = ms.threads_in_use()["blas"]
        if before is None or before < 2:
            pytest.skip("needs a BLAS library that threadpoolctl sees, on 2 or more threads")
        yield before
        assert thread_limits.held() is None, "a test left a thread limit held"
        assert ms.threads_in_use()["blas"] == before


def in_thread(fn):
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - raised again in the test's thread
            out["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_a_limit_set_in_a_background_thread_holds_after_the_main_thread_set_one(
    two_blas_threads,
):
    ThreadPolicy(1).apply().restore()  # the main thread set a limit once (start_lab, a magic)

    def limited():
        with ThreadPolicy(1) as policy:
            return policy.applied, ms.threads_in_use()["blas"]

    assert in_thread(limited) == (1, 1)


def test_a_policy_restored_in_one_thread_keeps_the_limit_another_thread_measures_with(
    two_blas_threads,
):
    session = ThreadPolicy(1).apply()  # the main thread's, e.g. a profiled cell
    started, release = threading.Event(), threading.Event()
    seen = {}

    def sweep():
        with ThreadPolicy(1):
            started.set()
            release.wait(10)
            seen["while"] = ms.threads_in_use()["blas"]

    worker = threading.Thread(target=sweep)
    worker.start()
    started.wait(10)
    session.restore()  # the main thread's cell ends while the background sweep measures
    release.set()
    worker.join()
    assert seen["while"] == 1


def test_auto_on_a_busy_machine_holds_the_threads_it_leaves(two_blas_threads, monkeypatch):
    from test_machine_state import state_over

    outer = ThreadPolicy(1).apply()
    busy = state_over(1.0, 0.9, threads=1)
    auto = ThreadPolicy("auto", state=busy).apply()  # one thread already: nothing to set
    assert auto.applied is None and thread_limits.held() == 1
    outer.restore()
    assert ms.threads_in_use()["blas"] == 1  # still held by "auto"
    auto.restore()


def test_a_sweep_in_a_background_thread_measures_with_the_threads_it_names(two_blas_threads):
    ThreadPolicy(1).apply().restore()  # the main thread set a limit once (a magic's cell)
    clock = iter(i / 1000 for i in range(100000))
    seen = []  # the BLAS threads in force during each call (a row can only be told them)
    result = in_thread(
        lambda: sweep_batch_sizes(
            lambda batch: seen.append(ms.threads_in_use()["blas"]),
            lambda n: n,
            [1, 2, 4],
            warmup=0,
            repeat=3,
            progress=False,
            record_environment=False,
            clock=lambda: next(clock),
            threads=1,
            recheck=False,
        )
    )
    assert seen and set(seen) == {1}
    for row in result.rows:
        assert row.machine["blas_threads"] == 1, row.machine
    assert result.machine["blas_threads"] == 1


@pytest.fixture
def blas_burner():
    """Another process doing 512x512 float32 matmuls on as many BLAS threads as cores."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    env["OPENBLAS_NUM_THREADS"] = str(os.cpu_count() or 2)
    proc = subprocess.Popen([sys.executable, "-c", BURNER], env=env)
    time.sleep(1.0)  # let its threads spin up
    assert proc.poll() is None, "the BLAS burner did not start"
    yield proc
    proc.terminate()
    proc.wait(timeout=10)


def _mlp():
    import everyo as eo

    model = eo.Sequential(eo.Linear(32, 256, seed=0), eo.ReLU(), eo.Linear(256, 10, seed=1))
    return model, lambda n: eo.randn(n, 32, seed=n)


SEEN: list = []  # the BLAS threads in force during each call: a row can only be told them


class CountingStep:
    """The model's call, noting the BLAS threads in force (module-level: Dask pickles the step
    by reference, so the calls append to this module's list)."""

    def __init__(self, model):
        self.model = model

    def __call__(self, batch):
        SEEN.append(ms.threads_in_use()["blas"])
        return self.model(batch)


def _judged_like_the_main_thread(result) -> None:
    assert result.machine["verdict"] in ("busy", "contended"), result.machine
    for row in result.rows:
        assert row.machine["blas_threads"] == 1, row.machine
        assert row.verdict != "contended", (row.batch_size, row.machine["reason"])


@pytest.mark.slow
@pytest.mark.real_machine
def test_the_sweep_widget_beside_a_blas_burner_measures_with_one_thread(
    two_blas_threads, blas_burner
):
    pytest.importorskip("anywidget")
    from everyo_lab.widgets.sweep_widget import SweepWidget

    model, make_batch = _mlp()
    ThreadPolicy(1).apply().restore()  # the main thread set a limit once (a magic's cell)
    widget = SweepWidget(model, make_batch, batch_sizes=[16, 64, 256], warmup=1, repeat=5)
    widget.start()
    result = widget.wait(120)
    assert widget.status == "completed", widget.status
    _judged_like_the_main_thread(result)


@pytest.mark.slow
@pytest.mark.real_machine
def test_a_dask_sweep_in_worker_threads_beside_a_blas_burner_measures_with_one_thread(
    two_blas_threads, blas_burner
):
    distributed = pytest.importorskip("distributed")
    model, make_batch = _mlp()
    SEEN.clear()
    step = CountingStep(model)
    ThreadPolicy(1).apply().restore()  # the main thread set a limit once (a magic's cell)
    with distributed.Client(
        processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0"
    ) as client:
        result = sweep_batch_sizes(
            step,
            make_batch,
            [16, 64, 256],
            warmup=1,
            repeat=5,
            progress=False,
            record_environment=False,
            executor=client.get_executor(),
        )
    _judged_like_the_main_thread(result)
    assert SEEN and set(SEEN) == {1}
