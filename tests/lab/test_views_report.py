"""The report: one set of numbers per refresh, the same in every renderer."""

from __future__ import annotations

import json
import re

import pytest
from views_runs import (
    empty_run,
    model_run,
    one_slow_call_run,
    regions_run,
    synthetic_run,
    train_run,
)

from everyo.errors import EveryOProfilerError
from everyo.profiler.analysis import run_analysis as analysis
from everyo.profiler.analysis import schema
from everyo_lab.views import (
    OVERLAP_WARNING,
    Report,
    build_report,
    display_label,
    header_info,
    icicle_figure,
    live_report,
    render_html,
    render_text,
)
from everyo_lab.views.live_session import LiveState
from everyo_lab.views.report import NO_EVENTS_NOTE, hot_spot_text, steps_text
from everyo_lab.views.table.table_rows import event_label


@pytest.fixture(scope="module")
def run():
    return model_run(iterations=3)


@pytest.fixture(scope="module")
def trained():
    return train_run(iterations=4)


def _row(report: Report, label: str) -> dict:
    (row,) = [r for r in report.rows if r["label"] == label]
    return row


def test_display_label():
    assert display_label("Conv2d", "features.3") == "Conv2d [features.3]"
    assert display_label("Sequential", "") == "Sequential"
    assert display_label("step", "step") == "step"


def test_rows_are_plain_labelled_and_share_inclusive_time_over_wall(run):
    report = build_report(run)
    wall_ms = run.wall_ns / 1e6
    assert report.wall_ms == wall_ms and report.events == run.num_events
    relu = _row(report, "ReLU [1]")  # one path: the class, qualified by it
    assert relu["name"] == "ReLU" and relu["path"] == "1"
    assert relu["share"] == pytest.approx(relu["total_ms"] / wall_ms)
    assert _row(report, "Linear")["calls"] == 6  # two paths: the class alone
    data = report.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data  # plain JSON, no NaN
    for row in data["rows"]:
        assert all(v is None or type(v) in (str, int, float, bool) for v in row.values())


def test_to_dict_holds_every_field_and_the_columns(run):
    data = build_report(run, top=2).to_dict()
    assert {
        "run_id",
        "label",
        "status",
        "error",
        "wall_ms",
        "events",
        "start_iso",
        "live",
        "group_by",
        "sort_by",
        "descending",
        "top",
        "rows",
        "hot_spots",
        "steps",
        "notes",
        "table",
        "texts",
    } <= set(data)
    assert len(data["rows"]) == 2 and data["top"] == 2 and data["live"] is False
    columns = data["table"]["columns"]
    assert columns[0] == {
        "key": "label",
        "label": "name",
        "unit": "",
        "align": "left",
        "header": "name",
        "bar": False,
    }
    total = next(c for c in columns if c["key"] == "total_ms")
    assert (total["label"], total["unit"], total["header"], total["align"]) == (
        "total",
        "ms",
        "total ms",
        "right",
    )
    assert columns[-1]["key"] == "share" and columns[-1]["bar"] is True


def test_the_widgets_table_is_the_text_tables_cells_in_the_same_order(run):
    """One producer: the cells the widget lays out are those of the text and HTML renderings,
    and each column's order is the order the report sorts by (ties and missing values alike)."""
    report = build_report(run, group_by="path")
    table = report.to_dict()["table"]
    assert [c["header"] for c in table["columns"]] == [c.header for c in report.columns]
    lines = render_text(report).splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(table["columns"][0]["header"]))
    for line, row in zip(lines[start + 1 :], table["rows"], strict=False):
        assert line.split() == " ".join(row["texts"]).split()
    assert table["order"]["total_ms"]["descending"] == list(range(len(report.rows)))
    for key in ("calls", "self_ms", "label"):
        for descending in (True, False):
            order = table["order"][key]["descending" if descending else "ascending"]
            by_report = build_report(run, group_by="path", sort_by=key, descending=descending)
            assert [report.rows[i]["label"] for i in order] == [r["label"] for r in by_report.rows]


def test_a_live_tables_missing_values_read_as_the_one_spelling_of_no_value():
    from everyo.spelling import NO_VALUE
    from everyo_lab.views.table.table_rows import TableColumn, format_cell

    row = {"label": "Linear", "median_ms": None}
    assert (
        format_cell(row, TableColumn("median_ms", "median", "ms", fmt="{:.3f}"), "name") == NO_VALUE
    )


def test_the_same_share_in_every_renderer(run, tmp_path):
    pytest.importorskip("plotly")
    from everyo_lab.html_report import to_html

    report = build_report(run)
    share = _row(report, "ReLU [1]")["share"]
    shown = f"{share:.1%}"
    text_line = next(ln for ln in render_text(run).splitlines() if ln.startswith("ReLU [1] "))
    assert text_line.endswith(" " + shown)
    cell = r">ReLU \[1\]</td>.*?<span[^>]*>([\d.]+%)</span></td>"
    assert re.search(cell, render_html(run)).group(1) == shown
    page = to_html(run, tmp_path / "r.html").read_text(encoding="utf-8")
    assert re.search(cell, page).group(1) == shown
    assert _row(Report(**_fields(report.to_dict())), "ReLU [1]")["share"] == share
    spot = report.hot_spots[0]
    assert f"{spot['label']} {spot['self_ms']:.3f} ms ({spot['share']:.1%})" in render_text(run)
    assert f"<b>{spot['label']}</b> {spot['self_ms']:.3f} ms ({spot['share']:.1%})" in page


def _fields(data: dict) -> dict:
    return {k: v for k, v in data.items() if k not in ("table", "texts")}  # derived


def test_renderers_take_a_prebuilt_report(run):
    report = build_report(run, group_by="path", sort_by="calls", top=3)
    assert render_text(report) == render_text(run, report=report)
    assert render_text(report) == render_text(run, group_by="path", sort_by="calls", top=3)
    html = render_html(run, report=report)
    assert html.count("<tr>") == 4 and 'class="everyo-static-flame"' in html  # the run's chart
    assert "<svg" not in render_html(report)  # a report alone has no events to draw
    assert header_info(report=report)["hot_spots"][0]["label"] == report.hot_spots[0]["label"]


def test_hot_spots_are_classes_with_their_path(trained):
    for group_by in ("name", "path", "shape"):
        report = build_report(trained, group_by=group_by)
        spots = report.hot_spots
        assert 0 < len(spots) <= 3
        assert [h["self_ms"] for h in spots] == sorted((h["self_ms"] for h in spots), reverse=True)
        assert spots == build_report(trained).hot_spots  # by class, whatever the table groups by
    labels = {h["label"] for h in build_report(trained).hot_spots}
    assert not any(label.isdigit() for label in labels)  # never a bare module path
    for spot in spots:
        assert spot["label"] == event_label(spot["kind"], spot["name"], spot["path"])
        assert spot["share"] == pytest.approx(spot["self_ms"] / report.wall_ms)


def test_path_grouping_labels_rows_by_class(trained):
    labels = [r["label"] for r in build_report(trained, group_by="path").rows]
    assert {"Sequential", "Linear [0]", "ReLU [1]", "Linear [2]", "SGD.step"} <= set(labels)
    assert {"Linear [0] (backward)", "ReLU [1] (backward)", "MSELoss (backward)"} <= set(labels)
    text = render_text(trained, group_by="path")
    assert "\nLinear [0] " in text and "\nLinear [2] (backward) " in text


def test_icicle_labels_are_classes_with_paths(trained):
    (trace,) = icicle_figure(trained)["data"]
    assert {"Linear [0]", "ReLU [1]", "Linear [2] (backward)", "backward"} <= set(trace["labels"])
    assert not any(label.split(" ")[0].isdigit() for label in trace["labels"])


def test_no_events_note():
    report = build_report(empty_run())
    assert report.rows == [] and report.hot_spots == [] and report.steps is None
    assert report.notes == [NO_EVENTS_NOTE]
    assert "record_function" in NO_EVENTS_NOTE and "--record-ops" in NO_EVENTS_NOTE
    assert NO_EVENTS_NOTE in render_text(empty_run())
    assert "record_function" in render_html(empty_run())


def test_notes_hold_the_failure_and_the_overlap_warning():
    report = build_report(regions_run(fail=ValueError("boom")))
    assert report.status == "failed" and report.error == "ValueError: boom"
    assert report.notes[-1] == OVERLAP_WARNING
    assert any("failed (ValueError: boom)" in note for note in report.notes)


def test_steps_from_optimizer_events(trained):
    report = build_report(trained)
    steps = report.steps
    assert steps == analysis.step_summary(*analysis.step_bounds(trained))
    assert steps["count"] == 4 and steps["source"] == "optimizer"
    line = steps_text(steps)
    assert line.startswith("4 steps (optimizer): median ")
    assert f"slowest #{steps['slowest']['index']} " in line
    assert f"steps: {line}" in render_text(trained)
    assert line in render_html(trained)


def test_steps_from_profiler_step_marks():
    run = train_run(iterations=3, mark_steps=True)
    steps = build_report(run).steps
    assert steps["count"] == 3 and steps["source"] == "profiler.step()"
    assert steps["slowest"]["end_ms"] <= run.wall_ns / 1e6
    assert steps_text(steps).startswith("3 steps (profiler.step()):")


def test_no_steps_no_step_line(run):
    assert build_report(run).steps is None and "steps:" not in render_text(run)


@pytest.mark.parametrize("group_by", ["name", "path", "shape"])
def test_live_report_matches_the_exact_one_for_a_finished_run(trained, group_by):
    state = LiveState()
    state.feed(trained.snapshot())
    starts, ends, source = analysis.step_bounds(trained)
    steps = analysis.StepStats().add_spans(starts, ends)
    live = live_report(trained, state, steps=steps, step_source=source, group_by=group_by)
    exact = build_report(trained, group_by=group_by)
    assert live.live and not exact.live and live.events == exact.events

    def facts(report):
        return {
            (r["label"], r["kind"], r.get("shapes")): (r["calls"], r["total_ms"], r["self_ms"])
            for r in report.rows
        }

    assert facts(live) == facts(exact)
    assert [r["label"] for r in live.rows] == [r["label"] for r in exact.rows]
    assert [r["share"] for r in live.rows] == [r["share"] for r in exact.rows]
    assert live.hot_spots == exact.hot_spots
    assert live.steps == exact.steps
    assert live.notes == exact.notes
    json.dumps(live.to_dict(), allow_nan=False)  # median and std are None while live


def test_live_report_of_a_run_without_events_has_no_rows():
    run = empty_run()
    report = live_report(run, LiveState())
    assert report.rows == [] and report.hot_spots == [] and report.steps is None


def test_bad_options_raise_profiler_errors(run):
    with pytest.raises(EveryOProfilerError, match="group_by"):
        build_report(run, group_by="colour")
    with pytest.raises(EveryOProfilerError, match="total_ms"):
        build_report(run, sort_by="nope")


def test_grouping_by_shape_without_shapes_says_so_instead_of_grouping_otherwise():
    """Issue 33: no rows grouped some other way (two identical "Linear" rows), but a note."""
    for shapeless in (synthetic_run(3), model_run(record_shapes=False)):
        report = build_report(shapeless, group_by="shape")
        assert report.rows == [] and report.group_by == "shape"
        assert schema.SHAPES_NOT_RECORDED in report.notes
        assert report.hot_spots  # the rest of the report is there
        assert "shapes were not recorded" in render_text(report)
    run = model_run(record_shapes=False)
    state = LiveState()
    state.feed(run.snapshot())
    live = live_report(run, state, group_by="shape")
    assert live.rows == [] and schema.SHAPES_NOT_RECORDED in live.notes and live.hot_spots
    with pytest.raises(EveryOProfilerError, match="record_shapes=True"):
        analysis.summarize(run, group_by="shape")  # the API asked for rows: an error


def test_a_batch_reports_without_a_header(run):
    report = build_report(run.snapshot())
    assert report.run_id == "" and report.rows
    assert not render_text(report).startswith("everyo profile")


def test_a_hot_spot_made_by_one_call_says_so_and_does_not_lead_the_header():
    """ReLU's 1.48 ms of self time is one call of 1.271 ms among calls of 0.011 ms: the header
    names Linear first (the module whose calls take the time), and ReLU's spot says what made
    it, in every output."""
    run = one_slow_call_run()
    report = build_report(run)
    rows = {r["name"]: r for r in report.rows}
    assert rows["ReLU"]["self_ms"] > rows["Linear"]["self_ms"]  # by self time alone: ReLU
    assert report.hot_spots[0]["name"] == "Linear" and report.hot_spots[0]["one_call"] is None
    relu = next(h for h in report.hot_spots if h["name"] == "ReLU")
    said = "one call took 1.271 ms, the other 19 0.011 ms each"
    assert said in hot_spot_text(relu)
    assert said in render_text(run) and said in render_html(run)
    assert said in " ".join(report.texts["hot_spots"])
