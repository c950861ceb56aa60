"""Run comparison and memory view in JupyterLab, driven in Debian's Chromium.

One page: a profiled cell ``before`` (with ``--profile-memory``), a faster cell ``after`` with
``--compare before``, ``everyo_lab.compare("before", "after")``, and ``%everyo_dashboard`` whose
picker chooses a run to compare with. Checked: both flame charts and the diff table render, a
zoom in one flame chart moves the other (one time axis), the memory chart follows the flame
chart's zoom and names the peak. Screenshots go to ``test-artifacts/`` (docs/dashboard.md uses
them).
"""

from __future__ import annotations

import re

import pytest
from harness import BrowserSession, missing, write_notebook

from everyo_lab.views.compare.compare_view import MACHINE_BUSY, speedup_text

pytestmark = pytest.mark.browser

if missing():
    pytest.skip(missing(), allow_module_level=True)

NOTEBOOK = "compare.ipynb"
SETUP = """import everyo as eo
import everyo_lab
model = eo.Sequential(eo.Linear(64, 256, seed=0), eo.ReLU(), eo.Linear(256, 10, seed=1))
"""
LOOP = "for _ in range(20):\n    y = model(eo.ones({batch}, 64))\n"
CELLS = [
    "%load_ext everyo_lab\n" + SETUP,
    "%%everyo_profile --label before --profile-memory\n" + LOOP.format(batch=256),
    "%%everyo_profile --label after --profile-memory --compare before\n" + LOOP.format(batch=16),
    'everyo_lab.compare("before", "after")',
    "%everyo_dashboard",
]
BEFORE, AFTER, COMPARE, PICKER = 1, 2, 3, 4

# What a comparison shows in cell i: its two flame charts' test hooks and the diff table.
COMPARE_JS = """i => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i];
  const box = cell && cell.querySelector('.everyo-compare');
  if (!box || box.hidden || box.offsetParent === null) return null;
  const side = s => {
    const f = box.querySelector(`.everyo-compare-flame[data-side="${s}"]`);
    const gd = f.querySelector('.everyo-flame.js-plotly-plot');
    const range = gd && gd._fullLayout && gd._fullLayout.xaxis ? gd._fullLayout.xaxis.range : null;
    return {bars: Number(f.dataset.bars || 0), window: f.dataset.window || null,
            xrange: range, title: f.querySelector('.everyo-compare-title').textContent};
  };
  const rows = [...box.querySelectorAll('.everyo-diff-table tbody tr')].map(
    tr => [...tr.cells].map(td => td.textContent));
  return {a: side('a'), b: side('b'), rows,
          header: box.querySelector('.everyo-compare-header').textContent};
}"""
MEMORY_JS = """i => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i];
  const el = cell && cell.querySelector('.everyo-memory.js-plotly-plot');
  if (!el || el.hidden) return null;
  const root = cell.querySelector('.everyo-dashboard');
  return {points: Number(el.dataset.points || 0), peak: el.dataset.peak || '',
          window: el.dataset.window || null, range: el._fullLayout.xaxis.range,
          flameWindow: root.dataset.window};
}"""


def _window(text):
    return [float(v) for v in text.split(",")]


def _same(a, b, rel=1e-6):
    span = max(abs(a[1] - a[0]), 1e-9)
    return abs(a[0] - b[0]) <= rel * span and abs(a[1] - b[1]) <= rel * span


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    write_notebook(root / NOTEBOOK, CELLS)
    with BrowserSession(root, app="lab") as s:
        try:
            s.open(NOTEBOOK)
            for i in range(len(CELLS)):
                s.run_cell(i)
                s.wait_prompt(i, timeout_ms=90000)
        except BaseException:
            s.page_screenshot("compare-failure")
            raise
        yield s


@pytest.fixture
def page_on_failure(request, lab):
    failed = request.session.testsfailed
    yield lab
    if request.session.testsfailed > failed:
        lab.page_screenshot(f"failure-{request.node.name}")


def _wait_compare(s: BrowserSession, index: int, timeout_ms: int = 60000) -> dict:
    # Lab may skip laying out cells far off screen: bring the cell into view first (its
    # comparison stays hidden until the final report arrives, which under load takes a while)
    s.cell(index).scroll_into_view_if_needed()
    s.page.wait_for_function(
        f"i => {{ const c = ({COMPARE_JS})(i);"
        " return c && c.a.bars > 0 && c.b.bars > 0 && c.rows.length > 0 && c.a.xrange; }",
        arg=index,
        timeout=timeout_ms,
    )
    return s.page.evaluate(COMPARE_JS, index)


def test_compare_renders_both_flame_charts_and_the_diff_table(lab, page_on_failure):
    s = lab
    view = _wait_compare(s, COMPARE)
    assert view["a"]["title"].startswith("A · before") and view["b"]["title"].startswith(
        "B · after"
    )
    # the header states both wall times and the verdict they make (batch 16 is usually faster
    # than 256, but on a loaded machine one 20-step run can take longer, or the machine reads
    # busy: the header must say whichever is true)
    header = view["header"]
    found = re.search(r"before ([\d.]+) ms → after ([\d.]+) ms: (.+)$", header)
    assert found, header
    if found[3] != MACHINE_BUSY:
        word = speedup_text(float(found[1]) / float(found[2])).split()[-1]
        assert found[3].startswith("wall time") and found[3].endswith(word), header
    names = [row[0] for row in view["rows"]]
    assert {"Sequential", "ReLU [1]"} <= set(names), names
    verdicts = ("faster", "slower", "negligible change", "within noise")
    assert all(row[-1] in verdicts for row in view["rows"]), view
    # one time axis: both charts show the same window, the longer run's extent
    assert _same(_window(view["a"]["window"]), _window(view["b"]["window"]))
    # compare() shows the comparison alone: the run's own flame chart and table are hidden
    own = s.cell(COMPARE).locator(".everyo-dashboard > .everyo-flame-box")
    assert not own.is_visible()
    s.screenshot(s.cell(COMPARE).locator(".everyo-dashboard"), "compare")


def test_a_zoom_in_one_flame_chart_moves_the_other(lab, page_on_failure):
    s = lab
    before = _wait_compare(s, COMPARE)
    box = s.cell(COMPARE).locator('.everyo-compare-flame[data-side="a"] .everyo-flame')
    s.drag(box, 0.1, 0.4)
    s.page.wait_for_function(
        f"([i, w]) => {{ const c = ({COMPARE_JS})(i); return c && c.b.window !== w; }}",
        arg=[COMPARE, before["b"]["window"]],
        timeout=10000,
    )
    s.page.wait_for_timeout(400)
    after = s.page.evaluate(COMPARE_JS, COMPARE)
    wa, wb = _window(after["a"]["window"]), _window(after["b"]["window"])
    assert _same(wa, wb), after
    assert wa[1] - wa[0] < 0.5 * (_window(before["a"]["window"])[1]), after
    assert _same(after["b"]["xrange"], wb), after  # B's axis is the window drawn
    s.screenshot(s.cell(COMPARE).locator(".everyo-compare"), "compare-zoomed")


def test_magic_compare_shows_the_comparison_under_the_dashboard(lab, page_on_failure):
    s = lab
    view = _wait_compare(s, AFTER)
    assert "before" in view["header"] and "after" in view["header"]
    cell = s.cell(AFTER)
    flame = cell.locator(".everyo-dashboard > .everyo-flame-box").bounding_box()
    compare = cell.locator(".everyo-compare").bounding_box()
    assert flame and compare and compare["y"] > flame["y"]  # under the dashboard


def test_memory_chart_names_the_peak_and_zooms_with_the_flame_chart(lab, page_on_failure):
    s = lab
    s.cell(BEFORE).locator(".everyo-memory").scroll_into_view_if_needed()
    s.page.wait_for_function(
        f"i => {{ const m = ({MEMORY_JS})(i); return m && m.points > 0 && m.window; }}",
        arg=BEFORE,
        timeout=30000,
    )
    memory = s.page.evaluate(MEMORY_JS, BEFORE)
    assert memory["peak"].startswith("peak ") and "[" in memory["peak"], memory
    assert _same(_window(memory["window"]), _window(memory["flameWindow"]))
    # the 'allocated' column is in the table of this run (recorded with --profile-memory)
    heads = (
        s.cell(BEFORE)
        .locator(".everyo-table-section th")
        .evaluate_all("ths => ths.map(th => th.textContent)")
    )
    assert any("allocated" in h for h in heads), heads
    assert not s.cell(BEFORE).locator(".everyo-picker-row").is_visible()  # no picker here
    s.screenshot(s.cell(BEFORE).locator(".everyo-dashboard"), "memory-view")
    # zoom the flame chart: the memory chart follows
    s.drag(s.cell(BEFORE).locator(".everyo-dashboard > .everyo-flame-box .everyo-flame"), 0.2, 0.5)
    s.page.wait_for_function(
        f"([i, w]) => {{ const m = ({MEMORY_JS})(i); return m && m.window !== w; }}",
        arg=[BEFORE, memory["window"]],
        timeout=10000,
    )
    s.page.wait_for_timeout(300)
    zoomed = s.page.evaluate(MEMORY_JS, BEFORE)
    assert _same(_window(zoomed["window"]), _window(zoomed["flameWindow"])), zoomed
    assert _same(zoomed["range"], _window(zoomed["flameWindow"])), zoomed
    # and zooming the memory chart zooms the flame chart
    s.drag(s.cell(BEFORE).locator(".everyo-memory"), 0.3, 0.6)
    s.page.wait_for_function(
        f"([i, w]) => {{ const m = ({MEMORY_JS})(i); return m && m.flameWindow !== w; }}",
        arg=[BEFORE, zoomed["flameWindow"]],
        timeout=10000,
    )
    s.page.wait_for_timeout(300)
    again = s.page.evaluate(MEMORY_JS, BEFORE)
    assert _same(again["range"], _window(again["flameWindow"])), again
    s.screenshot(s.cell(BEFORE).locator(".everyo-dashboard"), "memory-zoomed")


def test_the_dashboard_picker_picks_a_run_to_compare_with(lab, page_on_failure):
    s = lab
    cell = s.cell(PICKER)
    cell.locator(".everyo-compare-picker").wait_for(timeout=30000)
    values = cell.locator(".everyo-compare-picker option").evaluate_all(
        "os => os.map(o => [o.value, o.textContent])"
    )
    before = next(v for v, text in values if text.startswith("before"))
    cell.locator(".everyo-compare-picker").select_option(before)
    view = _wait_compare(s, PICKER)
    assert view["a"]["title"].startswith("A · before") and view["b"]["title"].startswith(
        "B · after"
    )
    s.screenshot(cell.locator(".everyo-dashboard"), "compare-picker")
