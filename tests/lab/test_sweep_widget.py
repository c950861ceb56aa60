"""``SweepWidget`` driven from Python with a fake workload: start, stop after two points, an error
at one point, the outputs, the messages its buttons send, and what it keeps in widget state."""

from __future__ import annotations

import csv
import json
import threading

import numpy as np
import pytest

pytest.importorskip("anywidget")

import everyo as eo  # noqa: E402
from everyo.errors import EveryOBenchmarkError  # noqa: E402
from everyo_lab import SweepWidget, sweeps  # noqa: E402
from everyo_lab.widgets.sweep_widget import STOP_IN_CELL  # noqa: E402

QUICK = {"warmup": 0, "repeat": 2}


def make_batch(batch_size):
    return np.ones((batch_size, 8))


def step(x):
    return float(x.sum())


class Sent(list):
    """Messages the widget sent to the front end (as (header, buffers))."""

    def __call__(self, msg, buffers=None):
        self.append((msg, buffers or []))


def _widget(**kwargs) -> SweepWidget:
    options = {"batch_sizes": [1, 2, 4, 8], **QUICK, **kwargs}
    w = SweepWidget(options.pop("step", step), make_batch, **options)
    w.send = Sent()
    return w


def test_run_paints_each_point_and_ends_completed():
    w = _widget(label="paint")
    reports = []
    w.observe(lambda change: reports.append(change["new"]), "report")
    result = w.run()
    assert [r.batch_size for r in result.rows] == [1, 2, 4, 8] and not result.stopped
    assert w.status == "completed" and not w.running
    # one report when each point starts and one when it ends, then the final one
    running = [r for r in reports if r["status"] == "running"]
    assert [len(r["rows"]) for r in running if r["progress"] is None] == [0, 1, 2, 3, 4]
    # (a point re-measured at the end, on a busy machine, adds a "rechecking" progress)
    starts = [r["progress"] for r in running if r["progress"] and not r["progress"]["rechecking"]]
    assert [(p["index"], p["total"], p["batch_size"]) for p in starts] == [
        (1, 4, 1), (2, 4, 2), (3, 4, 4), (4, 4, 8)
    ]  # fmt: skip
    assert w.charts["throughput"]["data"][0]["x"] == [1, 2, 4, 8]
    assert w.report["recommendation"]["recommended"] in (1, 2, 4, 8)
    assert sweeps["paint"] is w


def test_a_sweep_in_the_cell_turns_stop_off_and_says_to_interrupt_instead():
    """In the cell's thread (``run()``, ``%everyo_sweep``) the kernel reads the Stop button's
    message only after the sweep: the button is off, and its hint says how to stop."""
    hints = []

    def step_seeing_hint(x):
        hints.append(w.stop_hint)
        return float(x.sum())

    w = _widget(label="in-cell", step=step_seeing_hint)
    assert w.stop_hint == ""
    w.run()
    assert set(hints) == {STOP_IN_CELL} and "interrupt the kernel" in STOP_IN_CELL
    assert w.stop_hint == ""  # the sweep ended: Run is back, with no hint
    w.start()
    w.wait(30)
    assert w.stop_hint == ""  # on its own thread, Stop works


def test_background_sweep_stopped_after_two_points_keeps_them():
    w = _widget(batch_sizes=[1, 2, 4, 8, 16, 32])

    def stop_after_two(change):
        if len(change["new"]["rows"]) == 2:
            w.stop()

    w.observe(stop_after_two, "report")
    w.start()
    result = w.wait(timeout=60)
    assert [r.batch_size for r in result.rows] == [1, 2] and result.stopped
    assert w.status == "stopped" and not w.running
    assert w.report["status"] == "stopped" and len(w.report["rows"]) == 2
    assert w.charts["throughput"]["data"][0]["x"] == [1, 2]
    # the widget is usable again: a new sweep starts from nothing
    w.unobserve(stop_after_two, "report")
    w.start()
    assert len(w.wait(timeout=60).rows) == 6 and w.status == "completed"


def test_an_error_at_one_point_is_shown_on_that_point_and_the_sweep_goes_on():
    def flaky(x):
        if x.shape[0] == 4:
            raise ValueError("no kernel for 4")
        return float(x.sum())

    w = _widget(step=flaky)
    w.start()
    result = w.wait(timeout=60)
    assert [r.status for r in result.rows] == ["ok", "ok", "error", "ok"]
    assert w.status == "completed"
    marks = w.report["marks"]
    assert marks == [
        {
            "batch_size": 4,
            "status": "error",
            "label": "error",
            "message": "ValueError: no kernel for 4",
        }
    ]
    assert w.charts["latency"]["data"][-1]["x"] == [4]
    assert "no kernel for 4" in w.static_bundle()["text/html"]


def test_a_sweep_that_raises_marks_the_widget_failed_and_keeps_it_usable():
    calls = []

    def on_point_bomb(_):
        calls.append(1)
        raise RuntimeError("drawing failed")

    w = _widget()
    w._on_point = on_point_bomb  # an exception outside the points ends that sweep
    w.start()
    w.wait(timeout=60)
    assert w.status == "failed" and "RuntimeError: drawing failed" in w.report["error"]
    assert not w.running and calls


def test_interrupt_in_run_keeps_the_finished_points_and_raises_again():
    def interrupted(x):
        if x.shape[0] == 4:
            raise KeyboardInterrupt
        return float(x.sum())

    w = _widget(step=interrupted)
    with pytest.raises(KeyboardInterrupt):
        w.run()
    assert w.status == "stopped" and [r.batch_size for r in w.result.rows] == [1, 2]
    assert w.result.stopped and w.report["status"] == "stopped"


def test_running_twice_and_bad_arguments_are_clear_errors():
    gate = threading.Event()

    def slow(x):
        gate.wait(10)
        return 0.0

    w = _widget(step=slow)
    w.start()
    try:
        with pytest.raises(EveryOBenchmarkError, match="running already"):
            w.start()
        with pytest.raises(EveryOBenchmarkError, match="running already"):
            w.run()
    finally:
        w.stop()
        gate.set()
        w.wait(timeout=30)
    with pytest.raises(EveryOBenchmarkError, match="batch sizes must be positive"):
        SweepWidget(step, make_batch, batch_sizes=[0, 4])
    with pytest.raises(EveryOBenchmarkError, match="needs a step function"):
        SweepWidget(eo.Sequential(eo.Linear(8, 2)), make_batch, mode="train")
    with pytest.raises(EveryOBenchmarkError, match="make_batch must be a function"):
        SweepWidget(step, 3)


def test_buttons_run_stop_and_export_through_messages(tmp_path):
    w = _widget(label="buttons", export_dir=tmp_path)
    w._on_message(w, {"type": "run"}, [])
    w.wait(timeout=60)
    assert w.status == "completed"
    w._on_message(w, {"type": "stop"}, [])  # harmless when nothing runs
    w._on_message(w, {"type": "export", "format": "csv"}, [])
    w._on_message(w, {"type": "export", "format": "json"}, [])
    w._on_message(w, {"type": "export", "format": "xlsx"}, [])  # not a button: ignored
    w._on_message(w, "junk", [])
    downloads = [(m, b) for m, b in w.send if m.get("type") == "download"]
    assert [m["filename"] for m, _ in downloads] == ["buttons.sweep.csv", "buttons.sweep.json"]
    rows = list(csv.DictReader((tmp_path / "buttons.sweep.csv").read_text().splitlines()))
    assert [int(r["batch_size"]) for r in rows] == [1, 2, 4, 8]
    assert downloads[0][1][0] == (tmp_path / "buttons.sweep.csv").read_bytes()
    saved = json.loads(downloads[1][1][0])
    assert saved["format"] == "everyo.sweep" and len(saved["rows"]) == 4
    assert w.export_status.startswith("wrote buttons.sweep.json")


def test_export_to_an_unwritable_place_is_reported_next_to_the_buttons(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    w = _widget(export_dir=blocker / "sub")
    w.run()
    w._on_message(w, {"type": "export", "format": "csv"}, [])
    assert w.export_status.startswith("export failed:")


def test_plotly_is_sent_when_asked():
    w = _widget()
    w._on_message(w, {"type": "plotly"}, [])
    (msg, buffers), = [(m, b) for m, b in w.send if m["type"] == "plotly"]  # fmt: skip
    assert buffers and len(buffers[0]) > 1_000_000 and msg["version"]


def test_state_is_small_and_holds_no_library():
    w = _widget()
    w.run()
    state = w.get_state()
    state.pop("_esm", None)
    text = json.dumps(state, default=str)
    assert len(text) < 30_000, len(text)
    assert "plotly.js v" not in text


def test_outputs_widget_and_a_static_twin_that_hides_while_live():
    w = _widget(label="outputs")
    bundle = w.mime_bundle()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == w.model_id
    assert bundle["text/plain"].startswith("Batch-size sweep · outputs (inference, ready)")
    w.run()
    static = w.static_bundle(hide_when_live=True)
    assert ":has(.everyo-sweep)" in static["text/html"]
    assert ".everyo-static" not in static["text/html"]  # the dashboard's rules stay its own
    assert static["text/html"].count('class="everyo-sweep-chart"') == 3
    assert "recommended" in static["text/plain"]
    assert repr(w) == "SweepWidget(label='outputs', status='completed', points=4)"


def test_theme_from_the_front_end_recolours_the_charts():
    w = _widget()
    w.run()
    light = w.charts["throughput"]["layout"]["paper_bgcolor"]
    w.theme = "dark"
    assert w.charts["throughput"]["layout"]["paper_bgcolor"] != light
    w.theme = "neon"
    assert w.theme == "dark"


def test_device_moves_the_model_and_is_checked_at_once():
    model = eo.Sequential(eo.Linear(8, 2, seed=0))
    w = SweepWidget(model, lambda n: eo.ones(n, 8), batch_sizes=[1, 2], device="cpu", **QUICK)
    w.send = Sent()
    assert [r.status for r in w.run().rows] == ["ok", "ok"]
    with pytest.raises(Exception, match="device"):
        SweepWidget(model, make_batch, device="tpu")
