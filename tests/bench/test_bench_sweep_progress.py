"""sweep_batch_sizes(on_point=, stop=, device=): what a live view draws from, and how it stops.

One sweep loop serves the plain call, the widget and the magic: these options report each point
as it starts and ends, stop between points keeping the finished ones, and an interrupt carries
the finished points out with it.
"""

from __future__ import annotations

import csv
import io
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import everyo as eo
from everyo.bench import SweepResult, SweepRow, sweep_batch_sizes
from everyo.bench.sweep import check_sweep_options
from everyo.errors import EveryOBenchmarkError

QUICK = {"warmup": 0, "repeat": 2, "progress": False, "record_environment": False}


def make_batch(batch_size):
    return np.ones((batch_size, 16))


def step(x):
    return float(x.sum())


def test_on_point_reports_each_start_and_end_in_order():
    seen = []
    sweep_batch_sizes(step, make_batch, [4, 1, 2], on_point=seen.append, **QUICK)
    # (on a busy machine a point may break from its neighbours and be re-measured at the end:
    # that report says so, see test_sweep_check.py)
    seen = [p for p in seen if not p.rechecking]
    assert [(p.index, p.total, p.batch_size, p.done) for p in seen] == [
        (1, 3, 1, False),
        (1, 3, 1, True),
        (2, 3, 2, False),
        (2, 3, 2, True),
        (3, 3, 4, False),
        (3, 3, 4, True),
    ]
    ends = [p for p in seen if p.done]
    assert [len(p.rows) for p in ends] == [1, 2, 3] and ends[-1].rows[-1] is ends[-1].row
    assert all(p.elapsed_s >= 0 for p in ends) and all(p.elapsed_s == 0 for p in seen[::2])


def test_auto_sweep_reports_no_total_and_skipped_points_are_reported_too():
    seen = []
    sweep_batch_sizes(step, make_batch, max_batch=4, on_point=seen.append, **QUICK)
    assert {p.total for p in seen} == {None} and [p.batch_size for p in seen if p.done] == [1, 2, 4]
    seen.clear()
    limited = sweep_batch_sizes(
        step, make_batch, [1, 4096, 8192], memory_limit=200_000, on_point=seen.append, **QUICK
    )
    assert [r.status for r in limited.rows] == ["ok", "oom", "skipped"]
    assert [(p.batch_size, p.row.status) for p in seen if p.done][-1] == (8192, "skipped")


def test_stop_event_ends_the_sweep_after_two_points_keeping_them():
    stop = threading.Event()

    def on_point(p):
        if p.done and p.index == 2:
            stop.set()

    result = sweep_batch_sizes(
        step, make_batch, [1, 2, 4, 8], on_point=on_point, stop=stop, **QUICK
    )
    assert [r.batch_size for r in result.rows] == [1, 2] and result.stopped
    assert "Stopped after 2 points" in str(result)
    assert result.to_dict()["stopped"] is True


def test_stop_function_and_a_sweep_that_is_never_stopped():
    calls = []
    result = sweep_batch_sizes(
        step, make_batch, [1, 2], stop=lambda: calls.append(1) and False, **QUICK
    )
    # polled before each point, and again before each re-measuring round when a noisy
    # machine made a point look like an outlier (so at least twice, not exactly)
    assert not result.stopped and len(result.rows) == 2 and len(calls) >= 2
    auto = sweep_batch_sizes(step, make_batch, stop=lambda: True, **QUICK)
    assert auto.rows == [] and auto.stopped and auto.recommended is None


def test_stop_with_an_executor_keeps_the_points_already_collected():
    stop = threading.Event()

    def on_point(p):
        if p.done:
            stop.set()

    with ThreadPoolExecutor(max_workers=1) as pool:
        result = sweep_batch_sizes(
            step, make_batch, [1, 2, 4], executor=pool, on_point=on_point, stop=stop, **QUICK
        )
    assert [r.batch_size for r in result.rows] == [1] and result.stopped


def test_interrupt_carries_the_finished_points_and_cleans_up():
    model = eo.Sequential(eo.Linear(16, 4, seed=0))
    model.train()
    calls = []

    def make(batch_size):
        if batch_size == 4:
            raise KeyboardInterrupt
        calls.append(batch_size)
        return eo.ones(batch_size, 16)

    with pytest.raises(KeyboardInterrupt) as info:
        sweep_batch_sizes(model, make, [1, 2, 4, 8], **QUICK)
    partial = info.value.sweep_result
    assert isinstance(partial, SweepResult) and partial.stopped
    assert [r.batch_size for r in partial.rows] == [1, 2] and calls == [1, 2]
    assert model.training  # restored after the interrupt


def test_device_moves_model_and_batch_tensors():
    model = eo.Sequential(eo.Linear(16, 4, seed=0))
    seen = []

    def make(batch_size):
        return (eo.ones(batch_size, 16), {"x": eo.ones(batch_size, 16)}, np.ones(3))

    def probe(batch):
        seen.append(batch)
        return model(batch[0])

    result = sweep_batch_sizes(probe, make, [2], device="cpu", **QUICK)
    assert result.rows[0].ok
    first = seen[0]
    assert (
        isinstance(first, tuple) and isinstance(first[1], dict) and isinstance(first[2], np.ndarray)
    )
    assert str(first[0].device) == "cpu" and str(first[1]["x"].device) == "cpu"


def test_rows_have_a_p5_and_results_write_csv(tmp_path):
    result = sweep_batch_sizes(step, make_batch, [1, 2], **QUICK)
    row = result.rows[0]
    assert row.p5_ms is not None and row.min_ms <= row.p5_ms <= row.median_ms <= row.p95_ms
    result.rows.append(SweepRow(4, "error", "ValueError: bad, really"))
    path = result.to_csv(tmp_path / "out" / "sweep.csv")
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert [r["batch_size"] for r in rows] == ["1", "2", "4"]
    assert rows[2]["message"] == "ValueError: bad, really" and rows[2]["median_ms"] == ""
    assert float(rows[0]["p5_ms"]) == pytest.approx(row.p5_ms)
    saved = json.loads(result.to_json(tmp_path / "sweep.json").read_text())
    assert saved["rows"][0]["p5_ms"] == pytest.approx(row.p5_ms)


def test_bad_stop_and_early_checks_are_clear_errors():
    with pytest.raises(EveryOBenchmarkError, match="stop must be a threading.Event"):
        sweep_batch_sizes(step, make_batch, [1], stop=3, **QUICK)
    assert check_sweep_options(step, make_batch, [8, 1, 8]) == [1, 8]
    assert check_sweep_options(step, make_batch) is None
    with pytest.raises(EveryOBenchmarkError, match="needs a step function"):
        check_sweep_options(eo.Sequential(eo.Linear(2, 2)), make_batch, mode="train")
    with pytest.raises(EveryOBenchmarkError, match="memory_limit"):
        check_sweep_options(step, make_batch, memory_limit=-1)
