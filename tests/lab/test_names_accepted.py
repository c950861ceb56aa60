"""A name shown is a name accepted (issue 33): every label the views show for a module or a
region is read back by ``everyo.profiler.analysis.names`` wherever the API or a lab asks for one."""

from __future__ import annotations

import re

import pytest
from views_runs import model_run, train_run

from everyo.errors import EveryOProfilerError
from everyo.profiler.analysis import names
from everyo.profiler.analysis import run_analysis as analysis
from everyo_lab.views.compare.compare_view import build_comparison
from everyo_lab.views.flame.flame_html import flame_html
from everyo_lab.views.flame.icicle import icicle_figure
from everyo_lab.views.report import build_report


def test_every_table_label_finds_its_row():
    run = train_run(mark_steps=True)
    for group_by in ("name", "path"):
        report = build_report(run, group_by=group_by)
        table = analysis.summarize(run, group_by=group_by)
        for row in report.rows:
            found = table.find(row["label"])
            assert (found["name"], found["kind"]) == (row["name"], row["kind"]), row["label"]


def test_qualified_backward_and_bare_names_are_accepted():
    row = {"name": "RowScale", "path": "1", "kind": "module"}
    for text in ("RowScale [1]", "RowScale", " RowScale [1] ", "1", "RowScale (1)"):
        assert names.matches(text, row), text
    for text in ("RowScale [2]", "ReLU", "Row", "", None, "RowScale [1] (backward)"):
        assert not names.matches(text, row), text
    back = {"name": "Linear.backward", "path": "0", "kind": "backward"}
    shown = names.event_label("backward", "Linear.backward", "0")
    assert shown == "Linear [0] (backward)" and names.matches(shown, back)
    assert names.parse(shown) == ("Linear.backward", "0")


def test_icicle_and_flame_chart_labels_are_accepted():
    run = train_run()
    table = analysis.summarize(run, group_by="path")
    nodes = analysis.call_tree(run, by="path")
    labels = icicle_figure(run)["data"][0]["labels"]
    assert "Linear [0] (backward)" in labels
    for label, node in zip(labels, nodes):
        row = table.find(label)  # the path table's row of the icicle's box
        assert (row["path"], row["kind"]) == (node["path"], node["kind"]), label
    one = model_run(iterations=1)  # three wide bars under one: each gets a title
    titles = re.findall(r'title="([^"]*): [\d.]+ ms"', flame_html(one.snapshot()))
    assert "Linear [0]" in titles and not any("(0)" in t for t in titles)  # as the table says
    table = analysis.summarize(one, group_by="path")
    assert all(table.find(t) for t in titles)


def test_comparison_labels_are_accepted():
    a, b = model_run(label="a"), model_run(label="b", clock_step=2000)
    rows = build_comparison(a, b).rows
    assert rows and all(names.matches(row["label"], row) for row in rows)


def test_an_unknown_name_lists_the_labels_there_are():
    table = analysis.summarize(model_run())
    with pytest.raises(EveryOProfilerError, match=r"no row is named 'Conv2d'.*'ReLU \[1\]'"):
        table.find("Conv2d")
