"""One bad run never breaks the dashboard for every run (issue 36, fault 7): a run whose start
time no date can show (built by hand; ``load()`` refuses such files) still lists, reports and
renders, and a picker open while runs arrive never makes ``load()`` raise."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("anywidget")

from everyo.errors import EveryOProfilerWarning  # noqa: E402
from everyo.profiler import Profiler, load, record_function, runs  # noqa: E402
from everyo_lab.views.report import build_report  # noqa: E402
from everyo_lab.widgets.dashboard import dashboard  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_runs():
    runs.clear()
    yield
    runs.clear()


def _run(label):
    with Profiler(label=label) as p:
        with record_function("step"):
            pass
    return p.run


@pytest.mark.parametrize("start_time", ["yesterday", math.nan, 1e20, None], ids=repr)
def test_a_run_with_a_start_no_date_can_show_still_reports(start_time):
    run = _run("odd")
    run.start_time = start_time
    report = build_report(run)
    assert report.events == 1
    assert report.start_iso in ("unknown", "") or start_time is None


def test_the_picker_lists_and_shows_every_run_when_one_is_bad(tmp_path):
    good, exported = _run("good"), _run("exported")
    bad = _run("bad")
    bad.start_time = "yesterday"
    board = dashboard()
    assert board.run is bad
    assert {e["label"] for e in board.runs} == {"good", "exported", "bad"}
    assert next(e for e in board.runs if e["label"] == "bad")["start_time"] == 0.0
    board.selected = good.id
    assert board.run is good and board.report["events"] == 1
    # a file loaded and registered while the picker is open
    from everyo.profiler.export.events import export_json

    file = export_json(exported, tmp_path / "t.json")
    loaded = load(file, register=True)
    assert loaded in runs
    assert loaded.id in {e["id"] for e in board.runs}
    board.close()


def test_a_run_whose_report_fails_is_named_and_the_picker_keeps_working():
    good, broken = _run("good"), _run("broken")

    def fail(*_args, **_kwargs):
        raise RuntimeError("disk gone")

    broken.events_since = broken.snapshot = fail  # any fault of one run
    with pytest.warns(EveryOProfilerWarning, match="cannot show run 'broken'"):
        board = dashboard()
    assert "disk gone" in board.export_status
    board.selected = good.id
    assert board.run is good and board.report["events"] == 1
    board.close()
