"""The Report is the only producer, checked across the languages: the front end's table,
header and steps box, given a report as the kernel sends it, show exactly the report's texts
(the text rendering's cells, in the report's sort orders), and format nothing themselves."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from views_runs import train_run

from everyo_lab.views.report import build_report
from everyo_lab.views.text import render_text

JS = Path(__file__).resolve().parents[2] / "js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

SCRIPT = """
import { readFileSync } from "node:fs";
import { fakeDocument } from "%(js)s/test/helpers.mjs";
import { renderTable } from "%(js)s/src/table.js";
import { renderHeader } from "%(js)s/src/header.js";
import { mountSteps } from "%(js)s/src/steps.js";
const report = JSON.parse(readFileSync(process.argv[2], "utf8"));
const doc = fakeDocument();
const out = {};
for (const [key, descending] of JSON.parse(process.argv[3])) {
  const el = renderTable(doc, report.table, { sortBy: key, descending }, () => {});
  const [thead, tbody] = el.childNodes;
  out[`${key} ${descending}`] = {
    heads: thead.rows[0].cells.map((c) => c.textContent),
    rows: tbody.rows.map((r) => r.cells.map((c) => c.textContent)),
  };
}
out.header = renderHeader(doc, report).textContent;
const steps = mountSteps(doc, { onZoom() {}, stepWindowOf: () => null });
steps.update(report.steps, report.texts);
out.steps = steps.el.textContent;
console.log(JSON.stringify(out));
"""


def _shown(report, tmp_path, sorts) -> dict:
    script = tmp_path / "show.mjs"
    script.write_text(SCRIPT % {"js": JS.as_posix()})
    data = tmp_path / "report.json"
    data.write_text(json.dumps(report.to_dict()))
    result = subprocess.run(
        [NODE, str(script), str(data), json.dumps(sorts)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_widget_shows_the_reports_texts_in_the_reports_orders(tmp_path):
    run = train_run(mark_steps=True)
    sorts = [["total_ms", True], ["calls", False], ["self_ms", True], ["label", False]]
    report = build_report(run)
    shown = _shown(report, tmp_path, sorts)
    for key, descending in sorts:
        table = shown[f"{key} {str(descending).lower()}"]
        assert [h.rstrip(" ▲▼") for h in table["heads"]] == [c.header for c in report.columns]
        # the same cells as the text rendering of the report sorted that way, in that order
        exact = build_report(run, sort_by=key, descending=descending)
        lines = render_text(exact).splitlines()
        start = lines.index(next(ln for ln in lines if ln.startswith("name ")))
        body = [ln.split() for ln in lines[start + 1 : start + 1 + len(exact.rows)]]
        assert [" ".join(r).split() for r in table["rows"]] == body
    texts = report.texts
    assert texts["wall"] in shown["header"] and texts["events"] in shown["header"]
    assert ", ".join(texts["hot_spots"]) in shown["header"]
    assert texts["steps"] in shown["steps"]
    for duration in texts["step_durations"].values():
        assert duration in shown["steps"]
