"""One refresh, one report, in the browser (issue 33): while a profiled cell runs, the numbers
the page shows at any moment (the header's events and hot spots, the steps box, the table) are
those of one report. Before, the table was rewritten at most once a second and the header at
every refresh, so a screenshot showed "1905 steps" over an SGD.step row of 1,224 calls.
"""

from __future__ import annotations

import re

import pytest
from harness import BrowserSession, missing, training_cell, warmup_cell, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

READ_JS = """
i => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i];
  const out = cell && cell.querySelector('.everyo-dashboard');
  if (!out) return null;
  const header = (out.querySelector('.everyo-header') || {}).textContent || '';
  const steps = (out.querySelector('.everyo-steps-box') || {}).textContent || '';
  const table = out.querySelector('.everyo-table-section table');
  if (!table) return null;
  const heads = [...table.tHead.rows[0].cells].map((c) => c.textContent.trim());
  const rows = [...table.tBodies[0].rows].map((r) => [...r.cells].map((c) => c.textContent.trim()));
  return { header, steps, heads, rows, prompt: cell.querySelector('.jp-InputPrompt').textContent };
}
"""


def _number(text: str) -> float:
    return float(re.sub(r"[^\d.]", "", text.replace(",", "")) or "nan")


def check_one_moment(shown: dict) -> None:
    heads = [h.split(" ")[0] for h in shown["heads"]]  # "self (ms) ▼": the sorted column
    calls, self_ms = heads.index("calls"), heads.index("self")
    rows = {r[0]: r for r in shown["rows"]}
    events = int(re.search(r"([\d,]+) events", shown["header"])[1].replace(",", ""))
    assert events == sum(int(_number(r[calls])) for r in shown["rows"]), shown
    steps = int(re.search(r"([\d,]+) steps", shown["steps"])[1].replace(",", ""))
    assert steps == int(_number(rows["SGD.step"][calls])), shown
    spots = shown["header"].split("hot spots (self time): ")[1]
    for label, ms in re.findall(r"(.+?) ([\d.,]+) ms \([\d.]+%\)(?:, |$)", spots):
        assert ms == rows[label.strip()][self_ms], (label, ms, shown)  # one spelling, one number


def test_header_steps_box_and_table_show_one_report_while_live(tmp_path):
    reason = missing()
    if reason:
        pytest.skip(reason)
    cells = ["%load_ext everyo_lab", warmup_cell("warm", steps=3), training_cell(8.0)]
    cells[2] = "%%everyo_profile --label consistent\n" + cells[2]
    write_notebook(tmp_path / "live.ipynb", cells)
    moments = []
    with BrowserSession(tmp_path, app="lab") as s:
        s.open("live.ipynb")
        for i in (0, 1):
            s.run_cell(i)
            s.wait_prompt(i)
        s.run_cell(2)
        while True:
            s.page.wait_for_timeout(700)
            shown = s.page.evaluate(READ_JS, 2)
            if shown is None or "steps" not in shown["steps"]:
                continue
            if not shown["prompt"].startswith("[*]"):
                break
            moments.append(shown)  # one evaluate: one moment of the page
        s.wait_prompt(2)
        final = s.page.evaluate(READ_JS, 2)
    assert len(moments) >= 3, f"only {len(moments)} live moments read"
    for shown in moments:
        check_one_moment(shown)
    check_one_moment(final)
