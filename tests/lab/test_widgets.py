"""The dashboard widget without a browser: synced state, the messages it sends, export, picker."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

pytest.importorskip("anywidget")

from everyo.profiler import Profiler, record_function, runs  # noqa: E402
from everyo_lab import Dashboard  # noqa: E402
from everyo_lab.widgets.dashboard import WIDGET_MIME  # noqa: E402
from everyo_lab.widgets.export import trace_file_name  # noqa: E402


class Recording(Dashboard):
    """A dashboard that keeps what it would send to the browser."""

    def send(self, content, buffers=None):
        self.__dict__.setdefault("sent", []).append((content, buffers or []))

    def messages(self, kind):
        return [c for c, _ in self.__dict__.get("sent", []) if c.get("type") == kind]


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


def test_state_after_refresh_is_the_report_and_the_events_go_as_one_message():
    run = profiled("state")
    board = Recording(run)
    report = board.shown_report
    assert report["label"] == "state" and report["status"] == "completed"
    assert {"step", "inner"} <= {r["name"] for r in report["rows"]}
    assert all(0.0 <= r["share"] <= 1.0 for r in report["rows"])
    json.dumps(report)  # plain JSON for the comm
    (events,) = board.messages("events")
    assert events["n"] == 40 and events["complete"] and events["run"] == run.id
    assert board.run_id == run.id
    assert board.icicle["data"]  # the final view has its icicle
    assert "state" in repr(board) and len(repr(board)) < 200


def test_saved_state_holds_no_events_and_no_library():
    run = profiled("weight", n=5000)  # 10,000 events
    board = Recording(run)
    state = {k: v for k, v in board.get_state().items() if k != "_esm"}
    text = json.dumps(state, default=str)
    assert len(text) < 50_000, len(text)
    assert "plotly.js v" not in text
    assert len(board._esm) < 108_000  # the widget's own front end stays small


def test_live_refresh_sends_only_new_events_and_a_live_report():
    p = Profiler(label="growing").start()
    try:
        work(5)
        p.flush()
        board = Recording(p.run)
        work(5)
        p.flush()
        t0 = time.thread_time()
        catch_up = board.refresh(live=True)
        took = time.thread_time() - t0
        # the CPU seconds it spent on the new events, which the refresher's pacing counts apart
        assert isinstance(catch_up, float) and 0.0 <= catch_up <= took
        assert board.shown_report["live"] and board.shown_report["status"] == "running"
        assert [m["n"] for m in board.messages("events")] == [10, 10]
        assert [r["calls"] for r in board.shown_report["rows"] if r["name"] == "step"] == [10]
        assert not board.icicle  # the icicle waits for the end
    finally:
        p.stop()
    assert board.refresh() is None  # not live: nothing for a pacing to count
    assert board.shown_report["status"] == "completed" and not board.shown_report["live"]
    assert board.messages("events")[-1]["complete"]


def test_table_options_recompute_the_rows():
    board = Recording(profiled("table"))
    board.sort_by = "calls"
    board.descending = False
    calls = [r["calls"] for r in board.shown_report["rows"]]
    assert calls == sorted(calls)
    board.group_by = "path"
    assert board.shown_report["group_by"] == "path"


def test_a_header_click_reorders_the_rows_held_without_summarising_again(monkeypatch):
    """The browser re-sorts at once (the table's sort orders); the kernel then re-orders the
    rows it holds, with no summary of the run (a whole build_report before)."""
    from everyo.profiler.analysis import run_analysis as analysis

    board = Recording(profiled("resort"))
    summaries = []
    real = analysis.summarize
    monkeypatch.setattr(analysis, "summarize", lambda *a, **k: summaries.append(1) or real(*a, **k))
    before = board.shown_report
    board.sort_by = "calls"
    board.descending = False
    after = board.shown_report
    assert summaries == [] and after["seq"] > before["seq"]
    assert sorted(map(str, after["rows"])) == sorted(map(str, before["rows"]))
    calls = [r["calls"] for r in after["rows"]]
    assert calls == sorted(calls) and (after["sort_by"], after["descending"]) == ("calls", False)
    board.group_by = "path"  # a new grouping is a new summary
    assert summaries and board.shown_report["group_by"] == "path"
    board.sort_by = "flops"  # a column the rows lack: built anew, sorted by total, said so
    board.sort_by = "self_ms"  # and from there, built anew: the note goes
    assert not any(n.startswith("sorted by total_ms") for n in board.shown_report["notes"])
    assert board.shown_report["sort_by"] == "self_ms"


def test_a_finished_run_is_read_once_for_every_view_of_the_refresh(monkeypatch):
    """The report, the icicle, the comparison and the why link of the final refresh read one
    snapshot (each took its own before); the comparison keeps the run, not that snapshot."""
    before, after = profiled("one-a"), profiled("one-b")
    reads = []
    real = type(after).snapshot
    monkeypatch.setattr(type(after), "snapshot", lambda r: reads.append(r.label) or real(r))
    board = Recording(after, compare=before)
    assert board.shown_report["rows"] and board.icicle["data"] and board.comparison
    assert reads.count("one-b") == 1, reads
    assert board.comparison_view.run_b is after


def test_sorting_by_the_label_column_sorts_by_label():
    board = Recording(profiled("labels"))
    board.sort_by = "label"  # what clicking the first column's header sends
    board.descending = False
    labels = [r["label"] for r in board.shown_report["rows"]]
    assert labels == sorted(labels) and board.shown_report["sort_by"] == "label"


def test_group_by_shape_without_shapes_says_they_were_not_recorded():
    """Not a table grouped some other way under the "input shapes" header (issue 33)."""
    with Profiler(label="noshapes", record_shapes=False) as p:
        work(3)
    board = Recording(p.run)
    board.group_by = "shape"  # what the select does; the run has no shapes to group by
    assert board.shown_report["rows"] == [] and board.shown_report["group_by"] == "shape"
    assert any(n.startswith("shapes were not recorded") for n in board.shown_report["notes"])
    assert board.shown_report["hot_spots"]


def test_top_keeps_the_first_rows_of_the_new_order():
    board = Recording(profiled("top"), top=1)
    assert [r["name"] for r in board.shown_report["rows"]] == ["step"]
    board.descending = False
    assert [r["name"] for r in board.shown_report["rows"]] == ["inner"]


def test_a_theme_change_costs_the_kernel_no_rebuild():
    """The browser recolours the icicle from the ``themes`` trait (js/src/sections.js
    themedLayout): the kernel keeps its figure and only refuses an unknown theme."""
    from everyo_lab.views.colors import theme_colors

    board = Recording(profiled("theme"))
    figure = board.icicle
    board.theme = "dark"  # what js/src/theme.js does in a dark JupyterLab
    assert board.icicle is figure
    assert board.themes["dark"]["paper_bgcolor"] == theme_colors("dark")["paper_bgcolor"]
    assert board.themes["dark"]["paper_bgcolor"] != board.themes["light"]["paper_bgcolor"]
    board.theme = "purple"  # not a theme: ignored
    assert board.theme == "dark"


def test_plotly_is_sent_when_asked_and_only_then():
    board = Recording(profiled("lib"))
    assert not board.messages("plotly")
    board._on_message(board, {"type": "plotly"}, [])
    ((content, buffers),) = [m for m in board.sent if m[0]["type"] == "plotly"]
    assert content["version"].count(".") == 2
    assert bytes(buffers[0][:200]).lstrip().startswith(b"/**")
    assert b"plotly.js v" in bytes(buffers[0][:200])


def test_without_plotly_the_page_is_told_why(monkeypatch):
    from everyo.errors import EveryOConfigError
    from everyo_lab.widgets import plotly_asset

    def missing():
        raise EveryOConfigError("plotly is not installed")

    monkeypatch.setattr(plotly_asset, "plotly_js", missing)
    board = Recording(profiled("nolib"))
    board._on_message(board, {"type": "plotly"}, [])
    assert board.messages("plotly") == [{"type": "plotly", "error": "plotly is not installed"}]


def test_malformed_requests_are_ignored():
    board = Recording(profiled("odd"))
    board._stream.raw = False
    for content in ({"type": "detail"}, {"type": "detail", "x0": "a", "x1": 1}, "text", None):
        board._on_message(board, content, [])
    assert not board.messages("bars")


def test_resend_and_detail_requests():
    board = Recording(profiled("again", n=50))
    board._on_message(board, {"type": "resend"}, [])
    assert [m["reset"] for m in board.messages("events")] == [True, True]
    board._on_message(board, {"type": "detail", "x0": 0, "x1": 1, "width": 500}, [])
    assert not board.messages("bars")  # the browser holds every event: nothing to add
    board._stream.raw = False  # as for a run past RAW_LIMIT
    board._on_message(board, {"type": "detail", "x0": 0, "x1": 1, "width": 500}, [])
    assert board.messages("bars")[-1]["window"] == [0.0, 1.0]


def test_mime_bundle_and_static_rendering_share_the_report():
    board = Recording(profiled("bundle"))
    bundle = board._repr_mimebundle_()
    assert bundle[WIDGET_MIME]["model_id"] == board.model_id
    assert "everyo-static" in bundle["text/html"] and "step" in bundle["text/plain"]
    share = next(r["share"] for r in board.shown_report["rows"] if r["name"] == "step")
    assert f"{100 * share:.1f}%" in bundle["text/html"]


def test_export_writes_a_valid_trace_and_sends_it(tmp_path):
    board = Recording(profiled("my run/1"), export_dir=tmp_path)
    board._on_message(board, {"type": "export"}, [])
    path = tmp_path / trace_file_name("my run/1")  # my_run_1-<hash of the label>.trace.json
    assert path.name.startswith("my_run_1-") and json.loads(path.read_text())["traceEvents"]
    ((content, buffers),) = [m for m in board.sent if m[0]["type"] == "download"]
    assert content["filename"] == path.name and bytes(buffers[0]) == path.read_bytes()
    assert f"wrote {path.name}" in board.export_status and not board.export_busy


def test_export_without_run_or_to_an_unwritable_folder_reports_next_to_the_button(tmp_path):
    board = Recording(None, export_dir=tmp_path)
    board._on_message(board, {"type": "export"}, [])
    assert board.export_status.startswith("export failed") and "profile a cell" in (
        board.export_status
    )
    board = Recording(profiled("unwritable"), export_dir=tmp_path / "missing")
    board._on_message(board, {"type": "export"}, [])
    assert board.export_status.startswith("export failed") and "missing" in board.export_status


def test_trace_file_name_is_safe():  # more in test_export_names.py
    assert trace_file_name("train") == "train.trace.json"
    assert trace_file_name("my run/1").startswith("my_run_1-")
    assert trace_file_name("../x").startswith("x-")
    assert trace_file_name("") == "run.trace.json"


def test_picker_lists_every_run_and_new_ones():
    first = profiled("first")
    board = Recording(None, picker=True)
    try:
        assert [r["label"] for r in board.runs] == ["first"]
        assert board.run is first and board.selected == first.id
        second = profiled("second")
        assert [r["label"] for r in board.runs] == ["first", "second"]
        board.selected = second.id  # the user picks it in the front end
        assert board.run is second and board.run_id == second.id
        assert board.shown_report["label"] == "second"
        texts = board.shown_report["texts"]  # the option reads as the header does
        entry = next(r for r in board.runs if r["id"] == second.id)
        assert entry["text"] == f"second · completed · {texts['wall']} · {texts['events']}"
    finally:
        board.close()
    profiled("third")  # closed: no longer listening
    assert len(board.runs) == 2


def test_empty_dashboard_without_runs():
    board = Recording(None, picker=True)
    try:
        assert board.run is None and board.report == {}
        assert "no runs" in board._repr_mimebundle_()["text/plain"]
    finally:
        board.close()


def test_load_ext_does_not_import_plotly_python():
    code = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance().extension_manager.load_extension('everyo_lab')\n"
        "print(sorted(m for m in ('plotly', 'jsonschema', 'pandas') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


class StateRecording(Recording):
    """A recording dashboard that also notes which traits ipywidgets syncs to the browser."""

    def send_state(self, key=None):
        self.__dict__.setdefault("synced", []).append(key)
        return super().send_state(key)


def test_each_report_reaches_the_browser_once_numbered_a_live_ones_with_its_events():
    p = Profiler(label="one-message").start()
    try:
        board = StateRecording(p.run)
        board.__dict__["synced"] = []
        work(5)
        p.flush()
        board.refresh(live=True)
        events = board.messages("events")
        assert len(events) == 1 and events[0]["n"] == 10
        assert events[0]["report"] == board.shown_report and board.shown_report["live"]
        assert board.__dict__["synced"] == []  # the report went with the events, once
        assert board.report.get("seq", 0) < events[0]["report"]["seq"]  # the trait is older
        board.refresh(live=True)  # nothing new: the report goes in a message of its own
        (alone,) = board.messages("report")
        assert alone["run"] == p.run.id and alone["report"]["live"]
        assert len(board.messages("events")) == 1 and board.__dict__["synced"] == []
    finally:
        p.stop()
    board.refresh()  # the final report is the widget's state: synced as a trait
    assert not board.shown_report["live"] and "report" in board.__dict__["synced"]
    assert "report" not in board.messages("events")[-1]
    assert board.report == board.shown_report and board.report["seq"] > alone["report"]["seq"]


def test_a_sort_column_the_rows_lack_sorts_by_total_and_says_so():
    """Issue 33: no silent retry with other options; the notes name the fallback."""
    board = Recording(profiled("nosort"))
    board.sort_by = "flops"  # recorded without record_ops: no such column
    report = board.shown_report
    assert report["sort_by"] == "total_ms" and report["rows"]
    assert "sorted by total_ms: these rows have no flops column" in report["notes"]
