"""Table rows, header facts and the icicle, on real runs of the guide's MLP."""

from __future__ import annotations

import pytest
from views_runs import empty_run, model_run, regions_run

from everyo.errors import EveryOProfilerError
from everyo_lab.views import color_for, header_info, icicle_figure, table_rows


@pytest.fixture(scope="module")
def run():
    return model_run(iterations=3)


def test_rows_are_the_profilers_summary_with_share(run):
    rows = table_rows(run)
    by_name = {r["name"]: r for r in rows}
    assert {"Sequential", "Linear", "ReLU", "step"} <= set(by_name)
    assert by_name["Linear"]["calls"] == 6 and by_name["ReLU"]["calls"] == 3
    assert all(0.0 <= r["share"] <= 1.0 for r in rows)
    wall_ms = run.wall_ns / 1e6
    assert by_name["Linear"]["share"] == pytest.approx(by_name["Linear"]["total_ms"] / wall_ms)
    assert [r["total_ms"] for r in rows] == sorted((r["total_ms"] for r in rows), reverse=True)


@pytest.mark.parametrize("column", ["total_ms", "self_ms", "calls", "mean_ms", "share", "name"])
def test_sort_by_any_column_both_ways(run, column):
    down = [r[column] for r in table_rows(run, sort_by=column)]
    up = [r[column] for r in table_rows(run, sort_by=column, descending=False)]
    key = (lambda v: str(v).lower()) if column == "name" else None
    assert down == sorted(down, key=key, reverse=True)
    assert up == sorted(up, key=key)


def test_unknown_sort_column_names_the_columns(run):
    with pytest.raises(EveryOProfilerError, match="total_ms"):
        table_rows(run, sort_by="nope")


def test_group_by_path_shape_and_bad_value(run):
    paths = {r["name"]: r for r in table_rows(run, group_by="path")}
    assert {"0", "1", "2", "Sequential"} <= set(paths)  # the root module is labelled by class
    assert paths["0"]["module"] == "Linear" and paths["0"]["calls"] == 3
    shapes = table_rows(run, group_by="shape")
    assert any("(32, 4)" in r["shapes"] for r in shapes)
    with pytest.raises(EveryOProfilerError, match="group_by"):
        table_rows(run, group_by="colour")


def test_top_keeps_the_first_rows(run):
    assert len(table_rows(run, top=2)) == 2
    assert table_rows(run, top=2) == table_rows(run)[:2]


def test_header_info(run):
    info = header_info(run)
    assert info["label"] == "mlp" and info["status"] == "completed" and info["error"] is None
    assert info["events"] == run.num_events and info["wall_ms"] == run.wall_ns / 1e6
    assert info["start_time"] == run.start_time
    hot = info["hot_spots"]
    assert len(hot) == 3 and [h["self_ms"] for h in hot] == sorted(
        (h["self_ms"] for h in hot), reverse=True
    )
    assert set(hot[0]) == {"name", "path", "kind", "label", "self_ms", "share", "one_call"}
    assert hot[0]["share"] == pytest.approx(hot[0]["self_ms"] / info["wall_ms"])


def test_header_of_failed_and_empty_runs():
    failed = header_info(regions_run(fail=ValueError("boom")))
    assert failed["status"] == "failed" and failed["error"] == "ValueError: boom"
    empty = header_info(empty_run())
    assert empty["events"] == 0 and empty["hot_spots"] == []
    assert table_rows(empty_run()) == []


def test_icicle_ids_and_parents_are_consistent(run):
    fig = icicle_figure(run)
    (trace,) = fig["data"]
    ids, parents, values = trace["ids"], trace["parents"], trace["values"]
    assert trace["type"] == "icicle" and trace["branchvalues"] == "total"
    assert len(set(ids)) == len(ids) == len(parents) == len(values) == len(trace["labels"])
    assert all(p == "" or p in ids for p in parents)
    index = {i: k for k, i in enumerate(ids)}
    for k, i in enumerate(ids):  # "total": a parent holds at least its children
        children = [values[c] for c, p in enumerate(parents) if p == i]
        assert values[k] >= sum(children) - 1e-9
        if parents[k]:
            assert index[parents[k]] < k  # parents come first
    labels = dict(zip(ids, trace["labels"]))
    assert {"Linear [0]", "ReLU [1]", "Linear [2]"} <= set(labels.values())
    linear = trace["labels"].index("Linear [0]")
    assert trace["marker"]["colors"][linear] == color_for("Linear")


def test_icicle_of_empty_run_says_no_events():
    fig = icicle_figure(empty_run(), theme="dark")
    assert fig["data"] == [] and fig["layout"]["annotations"][0]["text"] == "no events"
    assert fig["layout"]["paper_bgcolor"] == "rgb(17,17,17)"


def test_icicle_is_valid_plotly(run):
    go = pytest.importorskip("plotly.graph_objects")
    go.Figure(icicle_figure(run))
