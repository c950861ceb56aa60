"""The dashboard's "why" panel in JupyterLab, driven in Debian's Chromium.

A sampled profiled cell runs a region ``work`` whose time is mostly one planted Python line; the
test clicks the table's ``work`` row while the cell runs (the panel says it is live), reads the
final panel from the DOM (the planted line on top), clicks a bar of the flame chart (one event,
expanded into its sampled frames in the chart), folds and shows everyo's frames, and checks that
an unsampled cell's panel says how to get samples. A cell without events: its flame chart draws
the sampled call tree (live and final); with events, a link opens the panel of the time outside
them. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from harness import BrowserSession, missing, write_notebook

pytestmark = pytest.mark.browser

if missing():
    pytest.skip(missing(), allow_module_level=True)

WORKLOAD = """import time
from everyo.profiler import record_function

def row_loop(n):
    s = 0.0
    for i in range(n):
        s += i ** 0.5  # planted hot line
    return s

def run_for(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        with record_function("work"):  # ~10 ms: a dozen 1-ms samples, so the event clicked
            row_loop(200_000)  # below holds some even when the sampler's thread waits a turn
            sum(range(2_000))
"""
CELLS = [
    "%load_ext everyo_lab",
    WORKLOAD,
    "%%everyo_profile --label plain\nrun_for(0.3)",
    "%%everyo_profile --sample 1 --label sampled\nrun_for(5.0)",
]
PLAIN, SAMPLED = 2, 3

PANEL_JS = """
i => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i];
  const panel = cell && cell.querySelector('.everyo-dashboard .everyo-why');
  if (!panel || panel.hidden) return null;
  const text = (sel) => (panel.querySelector(sel) || {textContent: ''}).textContent;
  const rows = [...panel.querySelectorAll('.everyo-why-lines tbody tr')]
    .map(tr => [...tr.cells].map(td => td.textContent));
  return {
    title: text('.everyo-why-title'), status: text('.everyo-why-status'),
    summary: text('.everyo-why-summary'), message: text('.everyo-why-message'),
    toggle: text('.everyo-why-toggle'), rows,
    frames: (cell.querySelector('.everyo-dashboard').dataset.frames || '').split('|')
      .filter(Boolean),
    nodes: panel.querySelectorAll('.everyo-why-node').length,
    after: panel.previousElementSibling ? panel.previousElementSibling.className : '',
  };
}
"""


def _panel(s: BrowserSession, index: int) -> dict | None:
    return s.page.evaluate(PANEL_JS, index)


def _wait_panel(s: BrowserSession, index: int, condition: str, timeout_ms: int = 30000) -> dict:
    """Wait until the panel of cell ``index`` (``p``) satisfies the JS ``condition``."""
    try:
        s.page.wait_for_function(
            f"([i]) => {{ const p = ({PANEL_JS})(i); return p && ({condition}); }}",
            arg=[index],
            timeout=timeout_ms,
            polling=100,
        )
    except Exception as exc:
        raise AssertionError(f"the panel never showed {condition}: {_panel(s, index)}") from exc
    return _panel(s, index)


def _row(s: BrowserSession, index: int, label: str):
    return (
        s.cell(index)
        .locator(".everyo-table-section tbody tr")
        .filter(has=s.page.locator("td", has_text=label))
        .first
    )


def test_the_why_panel_names_the_planted_line_live_and_final():
    with tempfile.TemporaryDirectory(prefix="everyo-why-") as tmp:
        folder = Path(tmp)
        write_notebook(folder / "why.ipynb", CELLS)
        with BrowserSession(folder, app="lab") as s:
            s.open("why.ipynb")
            for i in (0, 1, PLAIN):
                s.run_cell(i)
                s.wait_prompt(i)
            # an unsampled run: the panel says how to get samples
            row = _row(s, PLAIN, "work")
            row.scroll_into_view_if_needed()
            row.click()
            plain = _wait_panel(s, PLAIN, "p.message.length > 0")
            assert "%%everyo_profile --sample" in plain["message"], plain
            assert plain["rows"] == []
            s.screenshot(s.cell(PLAIN).locator(".everyo-why"), "why-panel-unsampled")

            # the sampled cell: select the row while it runs
            s.run_cell(SAMPLED)
            s.page.wait_for_function(
                "i => { const b = window.__everyoBoard(i); return b && /work/.test(b.table); }",
                arg=SAMPLED,
                timeout=30000,
                polling=100,
            )
            row = _row(s, SAMPLED, "work")
            row.scroll_into_view_if_needed()
            row.click()
            live = _wait_panel(s, SAMPLED, "p.status.includes('live') && p.rows.length > 0")
            assert live["title"] == "why 'work'"
            assert "everyo-table-section" in live["after"]  # opened under the table
            s.screenshot(s.cell(SAMPLED).locator(".everyo-why"), "why-panel-live")

            s.wait_prompt(SAMPLED, 60000)
            final = _wait_panel(s, SAMPLED, "!p.status && p.rows.length > 0")
            top = final["rows"][0]  # self, total, line, source
            assert "# planted hot line" in top[3], final["rows"]
            assert top[2].endswith("row_loop")
            assert float(top[0].rstrip(" %")) > 50  # most of work's time: the planted line
            assert final["nodes"] > 1 and final["toggle"] == "show everyo's frames"
            assert "samples at 1 ms (wall time)" in final["summary"]
            assert s.cell(SAMPLED).locator(".everyo-table-section tr.everyo-selected").count() == 1
            s.screenshot(s.cell(SAMPLED).locator(".everyo-why"), "why-panel-final")

            # everyo's frames: one click shows them, another folds them again
            s.cell(SAMPLED).locator(".everyo-why-toggle").click()
            _wait_panel(s, SAMPLED, 'p.toggle === "fold everyo\'s frames"')
            s.cell(SAMPLED).locator(".everyo-why-toggle").click()
            _wait_panel(s, SAMPLED, 'p.toggle === "show everyo\'s frames"')

            # a bar of the flame chart: one event, expanded into its sampled frames
            plot = s.cell(SAMPLED).locator(".everyo-flame")
            plot.scroll_into_view_if_needed()
            s.page.wait_for_function(
                "i => { const b = window.__everyoBoard(i); return b && b.axes === 'plotly'; }",
                arg=SAMPLED,
                timeout=30000,
            )
            # a bar merging many events selects every event of its name; zoomed in to a few
            # events, a bar is one event
            before = s.board(SAMPLED)["window"]
            s.drag(plot, 0.50, 0.51)
            s.wait_board_change(SAMPLED, "window", before)
            s.page.wait_for_timeout(500)  # the detail of the window, and plotly's axes
            box = s.plot_area(plot)
            s.page.mouse.click(box["x"] + 0.5 * box["width"], box["y"] + 0.5 * box["height"])
            event = _wait_panel(s, SAMPLED, "p.title.endsWith('(one event)')")
            assert event["title"] == "why 'work' (one event)"
            assert event["summary"].startswith("1 call · ")
            assert "everyo-flame-box" in event["after"]  # opened under the flame chart
            assert "# planted hot line" in event["rows"][0][3]
            # drawn in the flame chart, under the event's thread
            event = _wait_panel(s, SAMPLED, "p.frames.includes('row_loop')")
            s.screenshot(s.cell(SAMPLED).locator(".everyo-why"), "why-panel-event")
            s.screenshot(s.cell(SAMPLED).locator(".everyo-flame-box"), "why-flame-frames")
            # closing the panel folds the event back
            s.cell(SAMPLED).locator(".everyo-why-close").click()
            s.page.wait_for_function(
                "i => { const c = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i];"
                " return !c.querySelector('.everyo-dashboard').dataset.frames; }",
                arg=SAMPLED,
                timeout=10000,
            )


PLAIN_PYTHON = """%%everyo_profile --label squares
import time

def slow_squares(n):
    s = 0
    for v in range(n):
        s += v * v  # planted hot line
    return s

end = time.perf_counter() + 1.0
while time.perf_counter() < end:
    slow_squares(40_000)
"""


def test_a_cell_without_events_opens_the_panel_on_its_sampled_call_tree():
    """Plain Python: no event, no row, no bar to click; the magic samples it by default and
    the panel opens by itself on where the time went, the cell's lines named as IPython does."""
    with tempfile.TemporaryDirectory(prefix="everyo-why-plain-") as tmp:
        folder = Path(tmp)
        write_notebook(folder / "plain.ipynb", ["%load_ext everyo_lab", PLAIN_PYTHON])
        with BrowserSession(folder, app="lab") as s:
            s.open("plain.ipynb")
            for i in (0, 1):
                s.run_cell(i)
                s.wait_prompt(i, 60000)
            panel = _wait_panel(s, 1, "p.rows.length > 0")
            assert panel["title"] == "where the time went: the run (sampled call tree)", panel
            assert "samples at 10 ms (wall time)" in panel["summary"]
            assert "call" not in panel["summary"].split("·")[0]
            top = panel["rows"][0]  # self, total, line, source
            assert "# planted hot line" in top[3] and top[2].endswith("slow_squares"), panel
            assert top[2].startswith("Cell In["), top  # not the cell's temporary file
            assert panel["nodes"] > 1
            s.screenshot(s.cell(1).locator(".everyo-why"), "why-panel-no-events")


SLOW_PLAIN = """%%everyo_profile --label tree
import time

def slow_squares(n):
    s = 0
    for v in range(n):
        s += v * v  # planted hot line
    return s

def slow_cubes(n):
    return sum(v * v * v for v in range(n))

end = time.perf_counter() + 4.0
while time.perf_counter() < end:
    slow_squares(40_000)  # about two thirds of the time
    slow_cubes(20_000)
"""
MIXED = """%%everyo_profile --sample 1 --label mixed
import time
from everyo.profiler import record_function

def set_up(n):
    s = 0
    for v in range(n):
        s += v * v  # planted: outside every event
    return s

with record_function("work"):
    time.sleep(0.3)
end = time.perf_counter() + 1.0
while time.perf_counter() < end:
    set_up(40_000)
"""


def test_the_flame_chart_draws_a_run_without_events_as_its_sampled_call_tree():
    """A cell without events: its flame chart draws the sampled call tree (while it runs and
    when it ends), each function as wide as its share; a cell with events and much time
    outside them shows a link that opens the panel of that time."""
    with tempfile.TemporaryDirectory(prefix="everyo-why-tree-") as tmp:
        folder = Path(tmp)
        write_notebook(folder / "tree.ipynb", ["%load_ext everyo_lab", SLOW_PLAIN, MIXED])
        with BrowserSession(folder, app="lab") as s:
            s.open("tree.ipynb")
            s.run_cell(0)
            s.wait_prompt(0, 60000)
            s.run_cell(1)
            live = _wait_panel(
                s, 1, "p.status.includes('live') && p.frames.includes('slow_squares')"
            )
            assert live["title"] == "where the time went: the run (sampled call tree)", live
            s.wait_prompt(1, 60000)
            final = _wait_panel(s, 1, "!p.status && p.frames.includes('slow_squares')")
            assert "slow_cubes" in final["frames"], final["frames"]  # beside it, narrower
            # callers above callees: the cell's <module> above slow_squares
            assert final["frames"].index("<module>") < final["frames"].index("slow_squares")
            flame = s.cell(1).locator(".everyo-flame-box")
            flame.scroll_into_view_if_needed()
            s.page.wait_for_function(
                "i => { const b = window.__everyoBoard(i); return b && b.axes === 'plotly'; }",
                arg=1,
                timeout=30000,
            )
            # the bar's tooltip: the kernel's share of it
            box = s.plot_area(s.cell(1).locator(".everyo-flame"))
            s.page.mouse.move(box["x"] + 0.3 * box["width"], box["y"] + 5)
            tip = s.cell(1).locator(".everyo-tooltip")
            tip.wait_for(state="visible", timeout=10000)
            text = tip.text_content()  # "function · place · time (share)", row 0's first bar
            assert text.startswith(f"{final['frames'][0]} · "), (text, final["frames"])
            assert re.search(r" ms \(\d+\.\d %\)$", text), text
            s.screenshot(flame, "why-flame-no-events")
            assert s.cell(1).locator(".everyo-why-outside").is_hidden()  # its panel is open
            # closed, the bars go; the link opens the panel and draws them again
            s.cell(1).locator(".everyo-why-close").click()
            s.page.wait_for_function(
                "i => { const c = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i];"
                " return !c.querySelector('.everyo-dashboard').dataset.frames; }",
                arg=1,
                timeout=10000,
            )
            again = s.cell(1).locator(".everyo-why-outside-link")
            again.wait_for(state="visible", timeout=10000)
            assert again.text_content() == "where the time went: the run's sampled call tree"
            again.click()
            _wait_panel(s, 1, "p.frames.includes('slow_squares')")

            s.run_cell(2)
            s.wait_prompt(2, 60000)
            link = s.cell(2).locator(".everyo-why-outside-link")
            link.wait_for(state="visible", timeout=30000)
            assert "of the sampled time is outside every event" in link.text_content()
            link.click()
            outside = _wait_panel(s, 2, "p.rows.length > 0")
            assert (
                outside["title"]
                == "where the time went: time outside every event (sampled call tree)"
            )
            assert "set_up" in " ".join(r[2] for r in outside["rows"]), outside["rows"]
            assert "everyo-flame-box" in outside["after"]  # opened under the flame chart
            s.screenshot(s.cell(2).locator(".everyo-dashboard"), "why-outside-link")
