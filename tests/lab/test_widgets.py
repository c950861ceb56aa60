"""Dashboard widgets without a browser: traitlet state after refreshes, export, run picker."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("anywidget")
pytest.importorskip("plotly")

from everyo.profiler import Profiler, record_function, runs  # noqa: E402
from everyo.profiler.run import RunRegistry  # noqa: E402
from everyo_lab import Dashboard, dashboard  # noqa: E402
from everyo_lab.widgets.dashboard import WIDGET_MIME  # noqa: E402
from everyo_lab.widgets.export import ExportButton, trace_file_name  # noqa: E402
from everyo_lab.widgets.figures import bar_count  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_runs():
    runs.clear()
    yield
    runs.clear()


def work(n=20):
    for _ in range(n):
        with record_function("step"):
            with record_function("inner"):
                sum(range(100))


def profiled(label, n=20):
    with Profiler(label=label) as p:
        work(n)
    return p.run


def test_dashboard_state_after_refresh():
    run = profiled("state")
    board = Dashboard(run)
    names = {r["name"] for r in board.table.rows}
    assert {"step", "inner"} <= names
    assert all("share" in r for r in board.table.rows)
    json.dumps(board.table.rows)  # plain JSON for the comm
    assert "state" in board.header.value and "completed" in board.header.value
    assert bar_count(board.flame) == 40
    assert len(board.icicle.data) == 1
    assert "state" in repr(board) and len(repr(board)) < 200


def test_refresh_rereads_a_running_run():
    p = Profiler(label="growing").start()
    try:
        work(5)
        p._flush(p._state(), p._clock())  # hand this thread's buffered events to the store
        board = Dashboard(p.run)
        assert board.flame.layout.meta["events"] == 10
        work(5)
        p._flush(p._state(), p._clock())
        board.refresh(live=True)
        assert board.flame.layout.meta["events"] == 20
        assert "running" in board.header.value
        assert "hot spots (self time): " in board.header.value  # from the live table rows
    finally:
        p.stop()
    board.refresh()
    assert "completed" in board.header.value
    assert sum(len(t.base) for t in board.flame.data) >= 1


def test_live_hot_spots_do_not_depend_on_the_rows_the_table_shows():
    clock = SetClock()
    p = Profiler(label="hot", clock=clock, registry=RunRegistry()).start()
    try:
        with record_function("aaa"):
            clock.now += 10
        with record_function("heavy"):
            clock.now += 10_000_000
        p._flush(p._state(), p._clock())
        board = Dashboard(p.run, top=1, sort_by="name")
        board.table.descending = False
        board.refresh(live=True)
        assert [r["name"] for r in board.table.rows] == ["aaa"]
        assert "hot spots (self time): heavy 10.00 ms, aaa" in board.header.value
    finally:
        p.stop()


class SetClock:
    """Nanoseconds that move only when the test moves them."""

    now = 0

    def __call__(self) -> int:
        return self.now


def test_table_follows_group_by_and_sort():
    board = Dashboard(profiled("grouping"))
    board.table.sort_by = "calls"
    board.table.descending = False
    assert [r["calls"] for r in board.table.rows] == sorted(r["calls"] for r in board.table.rows)
    board.table.group_by = "path"
    assert all("path" in r for r in board.table.rows)


def test_group_by_shape_without_shapes_keeps_the_table():
    with Profiler(label="shapeless", record_shapes=False) as p:
        work(3)
    board = Dashboard(p.run)
    shown = list(board.table.rows)
    board.table.group_by = "shape"  # what the select does; the run has no shapes to group by
    assert board.table.rows == shown and shown


def test_top_keeps_the_first_rows_of_the_new_order():
    board = Dashboard(profiled("top"), top=1, sort_by="name")
    assert [r["name"] for r in board.table.rows] == ["step"]
    board.table.descending = False
    assert [r["name"] for r in board.table.rows] == ["inner"]


def test_theme_reported_by_front_end_retemplates_figures():
    board = Dashboard(profiled("theme"))
    light = board.flame.layout.paper_bgcolor
    board.table.theme = "dark"  # what js/src/theme.js does in a dark JupyterLab
    assert board.theme == "dark"
    assert board.flame.layout.paper_bgcolor != light
    assert board.icicle.layout.paper_bgcolor == board.flame.layout.paper_bgcolor


def test_zoom_recomputes_level_of_detail_for_the_window():
    run = profiled("zoom", n=200)
    board = Dashboard(run)
    full = bar_count(board.flame)
    wall_ms = run.wall_ns / 1e6
    board.flame.layout.xaxis.range = [0.0, wall_ms / 10]  # what a zoom in the browser sends
    assert board._x_range == (0.0, wall_ms / 10)
    assert 0 < bar_count(board.flame) < full
    board.flame.layout.xaxis.autorange = True  # double click: back to everything
    assert board._x_range is None
    assert bar_count(board.flame) == full


def test_mime_bundle_has_widget_html_and_text():
    board = Dashboard(profiled("bundle"))
    bundle = board._repr_mimebundle_()
    assert bundle[WIDGET_MIME]["model_id"] == board.model_id
    assert "<svg" in bundle["text/html"]
    assert "inner" in bundle["text/plain"]


def test_export_writes_a_valid_trace_and_sends_it(tmp_path):
    run = profiled("my run/1")
    button = ExportButton(run, directory=tmp_path)
    sent = []
    button.send = lambda content, buffers=None: sent.append((content, buffers))
    button._on_message(button, {"type": "export"}, [])
    path = tmp_path / "my_run_1.trace.json"
    trace = json.loads(path.read_text())
    assert trace["traceEvents"]
    assert {"step", "inner"} <= {e.get("name") for e in trace["traceEvents"]}
    ((content, buffers),) = sent
    assert content == {"type": "download", "filename": "my_run_1.trace.json"}
    assert bytes(buffers[0]) == path.read_bytes()
    assert button.status.startswith("wrote my_run_1.trace.json") and not button.busy


def test_export_without_run_reports_instead_of_raising(tmp_path):
    button = ExportButton(None, directory=tmp_path)
    button._on_message(button, {"type": "export"}, [])
    assert button.status.startswith("export failed")
    assert list(tmp_path.iterdir()) == []


def test_export_to_an_unwritable_folder_reports_next_to_the_button(tmp_path):
    button = ExportButton(profiled("nowhere"), directory=tmp_path / "missing")
    button.send = lambda content, buffers=None: pytest.fail("nothing may be sent")
    button._on_message(button, {"type": "export"}, [])
    assert button.status.startswith("export failed") and "missing" in button.status
    assert not button.busy


def test_trace_file_name_is_safe():
    assert trace_file_name("train") == "train.trace.json"
    assert trace_file_name("../x y") == "x_y.trace.json"
    assert trace_file_name("") == "run.trace.json"


def test_picker_lists_every_run_and_new_ones():
    first = profiled("first")
    board = dashboard()
    try:
        assert [r["label"] for r in board.picker.runs] == ["first"]
        assert board.run is first and board.picker.selected == first.id
        second = profiled("second")
        assert [r["label"] for r in board.picker.runs] == ["first", "second"]
        board.picker.selected = second.id  # the user picks it in the front end
        assert board.run is second
        assert board.export_button.label == "second"
    finally:
        board.close()
    profiled("third")  # closed: no longer subscribed
    assert len(board.picker.runs) == 2


def test_empty_dashboard_without_runs():
    board = dashboard()
    try:
        assert board.run is None
        assert "No run yet" in board.header.value
        assert "no runs" in board._repr_mimebundle_()["text/plain"]
    finally:
        board.close()


def test_sort_by_a_column_the_run_lacks_falls_back_to_total_time():
    board = Dashboard(profiled("no-flops"), sort_by="flops")
    totals = [r["total_ms"] for r in board.table.rows]
    assert totals == sorted(totals, reverse=True)


def test_a_redraw_of_the_same_figure_sends_only_the_arrays(monkeypatch):
    from everyo_lab.views import flame_figure
    from everyo_lab.widgets.figures import _ARRAYS, apply_figure, new_figure_widget

    fig = flame_figure(profiled("resend").snapshot())
    widget = new_figure_widget(fig)
    sent = []

    def spy(restyle_data=None, relayout_data=None, **_):
        sent.append((restyle_data, relayout_data))

    monkeypatch.setattr(widget, "plotly_update", spy)
    apply_figure(widget, fig, keep_x_range=True)
    [(restyle, relayout)] = sent
    assert relayout == {}  # the layout did not change: no layout key is sent
    assert restyle and set(restyle) <= set(_ARRAYS)  # names, colours, templates stay
