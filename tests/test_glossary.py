"""docs/glossary.md is the definition of each figure: its verdict table matches the code that
gives the verdicts and exit codes, and a report's figures follow its definitions."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import pytest

from everyo.bench import check_regression
from everyo.bench.regression import MACHINE_BUSY
from everyo.cli import bench as cli_bench

GLOSSARY = Path(__file__).resolve().parents[1] / "docs" / "glossary.md"


def verdict_rows() -> list[tuple[str, str]]:
    """(verdict, exit code) of the verdict table's rows, carrying the 'where' cell down."""
    section = GLOSSARY.read_text().split("## Verdicts and exit codes")[1].split("\n## ")[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        separator = cells[0] != "" and set(cells[0]) <= {"-", " "}
        if len(cells) == 4 and not separator and cells[1] != "verdict":
            rows.append((cells[1].strip("`"), cells[3]))
    return rows


def test_the_exit_code_of_each_regression_verdict_is_the_clis():
    codes: dict[str, str] = {}
    for verdict, code in verdict_rows():  # the regression check's rows come first
        codes.setdefault(verdict, code)
    for verdict in ("ok", "improvement", "regression", "inconclusive", MACHINE_BUSY):
        check = dataclasses.replace(check_regression([1.0] * 5, [1.0] * 5), verdict=verdict)
        shown = cli_bench.MACHINE_BUSY if verdict == MACHINE_BUSY else 0 if check.passed else 1
        assert codes[verdict] == str(shown), verdict
    assert cli_bench.REGRESSION == 1 and cli_bench.WORKLOAD_FAILED == 3
    assert "| 2 |" in GLOSSARY.read_text() and "| 3 |" in GLOSSARY.read_text()


def test_every_comparison_verdict_is_defined():
    from everyo_lab.views.compare.compare_view import VERDICTS

    defined = " ".join(v for v, _ in verdict_rows())
    for verdict in VERDICTS:
        assert verdict in defined, verdict


@pytest.mark.parametrize("speedup", [1.004, 1 / 1.004, 1.006, 1 / 1.006, 2.0])
def test_same_speed_is_symmetric_as_defined(speedup):
    from everyo_lab.views.compare.compare_view import speedup_text

    same = max(speedup, 1 / speedup) - 1 < 0.005
    assert (speedup_text(speedup) == "same speed") == same


def test_a_reports_shares_follow_the_definitions():
    sys.path.insert(0, str(Path(__file__).parent / "lab"))
    from views_runs import train_run

    from everyo_lab.views.report import build_report

    report = build_report(train_run(mark_steps=True))
    for row in report.rows:
        assert row["share"] == pytest.approx(row["total_ms"] / report.wall_ms)
    for spot in report.hot_spots:
        assert spot["share"] == pytest.approx(spot["self_ms"] / report.wall_ms)
    steps = report.steps
    assert steps["median"]["dur_ms"] == steps["median_ms"]  # nearest rank: each is a step
    assert steps["p95"]["dur_ms"] == steps["p95_ms"]


def test_the_glossary_names_each_producer_that_exists():
    import importlib

    text = GLOSSARY.read_text()
    for module in sorted(set(re.findall(r"`((?:views|bench|analysis|profiler)\.[\w.]+)`", text))):
        parts = module.split(".")
        base = {
            "views": "everyo_lab.views",
            "bench": "everyo.bench",
            "analysis": "everyo.profiler.analysis.run_analysis",
            "profiler": "everyo.profiler",
        }[parts[0]]
        obj = importlib.import_module(base)
        for part in parts[1:]:
            obj = getattr(obj, part, None) or importlib.import_module(f"{obj.__name__}.{part}")
        assert obj is not None, module


def test_the_comparisons_texts_name_their_statistic_and_reach_the_widget_as_they_are():
    """The header's speed-up is the wall time's, named so (lab 01 read "6.51× faster" against
    its check's 24.6× per-call speed-up); the per-step one is a median, named so; the widget
    gets both texts to show as they are (the JS computes no speed-up)."""
    from everyo_lab.views.compare.compare_view import MACHINE_BUSY, Comparison

    side = {"label": "before", "wall_ms": 12.3, "status": "completed"}
    steps = {"verdict": "faster", "speedup": 1.41, "ci_low": 1.3, "ci_high": 1.52}
    c = Comparison(
        a=side,
        b={**side, "label": "after", "wall_ms": 8.1, "status": "failed"},
        group_by="name",
        speedup=12.3 / 8.1,
        steps={**steps, "steps_a": 20, "steps_b": 21},
        rows=[],
        notes=[],
    )
    assert c.headline == "before 12.300 ms → after 8.100 ms (failed): wall time 1.52× faster"
    assert c.steps_text.startswith("per step (median): faster (1.41×, 95% CI 1.30–1.52)")
    sent = c.to_dict()
    assert (sent["headline"], sent["steps_text"]) == (c.headline, c.steps_text)
    busy = dataclasses.replace(c, machine_note="run B was measured on a contended machine")
    assert busy.headline.endswith(MACHINE_BUSY) and "faster" not in busy.headline


def test_the_relevance_threshold_is_the_one_the_glossary_defines():
    from everyo_lab.views.compare.compare_view import (
        RELEVANT_PER_CALL,
        RELEVANT_SHARE,
        relevant_verdict,
    )

    text = GLOSSARY.read_text()
    row = next(ln for ln in text.splitlines() if ln.startswith("| **relevance threshold**"))
    assert f"**{RELEVANT_PER_CALL:.0%}**".replace("%", " %") in row
    assert f"**{RELEVANT_SHARE:.0%}**".replace("%", " %") in row
    slower = {"verdict": "slower", "why": ""}
    edge = 1 / (1 + RELEVANT_PER_CALL)
    assert relevant_verdict({**slower, "speedup": edge * 0.999}, 1.0, 10.0)["verdict"] == "slower"
    assert relevant_verdict({**slower, "speedup": edge * 1.001}, 1.0, 10.0)["verdict"] == (
        "negligible change"
    )
    share = RELEVANT_SHARE * 10.0
    assert relevant_verdict({**slower, "speedup": 0.5}, share * 1.01, 10.0)["verdict"] == "slower"
    assert relevant_verdict({**slower, "speedup": 0.5}, -share * 0.99, 10.0)["verdict"] == (
        "negligible change"
    )
    within = {"verdict": "within noise", "speedup": 0.5, "why": ""}
    assert relevant_verdict(within, 5.0, 10.0) == within  # noise stays noise


def test_no_value_is_spelt_once_in_every_view():
    from everyo.spelling import NO_VALUE

    assert f"**{NO_VALUE}**" in GLOSSARY.read_text()
    js = (GLOSSARY.parents[1] / "js" / "src" / "schema.js").read_text(encoding="utf-8")
    assert f'export const NO_VALUE = "{NO_VALUE}";' in js
    from everyo.bench.sweep_result import _num
    from everyo.profiler.analysis.summary_table import _fmt
    from everyo_lab.views.compare.compare_view import format_diff_cell
    from everyo_lab.views.memory.memory_view import format_bytes
    from everyo_lab.views.table.table_rows import NO_VALUE as TABLE_NO_VALUE

    assert TABLE_NO_VALUE == _num(None, 2) == _fmt(None, "median_ms") == NO_VALUE
    assert format_diff_cell({"ratio": None}, "ratio") == format_bytes(None) == NO_VALUE
