"""The batch-size sweep widget in JupyterLab, driven in Debian's Chromium.

One page, in order (they share the kernel):

1. a profiled cell (the page's first widget, a dashboard, loads plotly.js) and a small warm-up
   sweep, which finds plotly.js in the page;
2. ``%everyo_sweep`` over eight sizes of a slow fake step, sampled every 100 ms in the page: the
   throughput chart gains points at least twice while the cell shows ``[*]``, and the progress
   line names the point being measured;
3. a ``SweepWidget`` shown with ``show()``: its Run button starts a background sweep, its Stop
   button ends it after a few points, and the finished points are kept (in the page and in
   ``widget.result``);
4. save, shut down, reload: the sweep's static rendering shows and no widget error text.

Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import re

import pytest
from harness import BrowserSession, missing, write_notebook

pytestmark = pytest.mark.browser

if missing():
    pytest.skip(missing(), allow_module_level=True)

NOTEBOOK = "sweep.ipynb"
SETUP = """import time
import numpy as np
import everyo_lab

def slow_step(x):
    if x.shape[0] == 4:
        raise ValueError("no kernel for a batch of 4")  # one failing point, marked on the axis
    time.sleep(0.05)  # a point takes about 0.3 s: six calls
    return float(x.sum())

def slower_step(x):
    time.sleep(0.1)  # a point takes about 0.6 s: Stop has time to arrive
    return float(x.sum())

def make_batch(n):
    return np.ones((n, 64))
"""
PROFILE = """%%everyo_profile --label first
import everyo as eo
net = eo.Sequential(eo.Linear(8, 8, seed=0), eo.ReLU())
for _ in range(10):
    net(eo.ones(4, 8))
"""
CELLS = [
    "%load_ext everyo_lab",
    SETUP,
    PROFILE,  # the page's first widget is a dashboard: it loads plotly.js, the sweeps reuse it
    "%everyo_sweep slow_step make_batch --batch-sizes 1,2 --warmup 0 --repeat 1 --label warm",
    "%everyo_sweep slow_step make_batch --batch-sizes 1,2,4,8,16,32,64,128 --warmup 1 --repeat 5"
    " --memory-limit 48000 --threads 1 --label live",  # 128 x 64 float64 = 64 KiB: out of memory
    # (--threads 1: never 'contended' on a loaded machine, so a point is always recommended)
    "w = everyo_lab.SweepWidget(slower_step, make_batch, batch_sizes=[2**k for k in range(14)],\n"
    "                           warmup=1, repeat=4, label='background')\nw.show()",
    "print('POINTS', len(w.result.rows), w.result.stopped, w.status)",
]
WARM, LIVE, BACKGROUND, CHECK = 3, 4, 5, 6
MAX_LIVE_BYTES = 500_000  # eight points: reports and charts of a few kilobytes each

# The sweep widget of code cell `i`: prompt, points drawn, rows in the table, status, progress.
SWEEP_JS = """
window.__everyoSweep = (i) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i];
  if (!cell) return null;
  const prompt = (cell.querySelector('.jp-InputPrompt') || {textContent: ''}).textContent.trim();
  const root = cell.querySelector('.everyo-sweep');
  const out = {t: performance.now(), prompt, widget: !!root};
  if (!root) return out;
  const d = root.dataset;
  out.points = Number(d.points || 0);
  out.rows = Number(d.rows || 0);
  out.status = d.status || '';
  out.plotly = d.plotly || '';
  const p = root.querySelector('.everyo-sweep-progress');
  out.progress = p ? p.textContent : '';
  const stop = root.querySelector('.everyo-sweep-stop');
  out.stopOff = stop ? stop.disabled : null;
  out.stopTitle = stop ? stop.title : '';
  const gd = root.querySelector('.everyo-sweep-throughput.js-plotly-plot');
  out.drawn = gd && gd.data && gd.data[0] ? gd.data[0].x.length : 0;
  const marks = gd && gd.data ? gd.data.find(t => t.name === 'not measured') : null;
  out.marks = marks ? marks.text.join(',') : '';
  return out;
};
"""
# Samples every 100 ms, and at every change of the chart's point count (a MutationObserver: a
# busy 2-core machine may starve the timer, never the DOM changes, which arrive in order with
# the kernel's messages, before the one that ends the cell's [*]).
SAMPLER_JS = """
(i) => {
  window.__sweepSamples = [];
  const sample = () => window.__sweepSamples.push(window.__everyoSweep(i));
  window.__sweepSampler = setInterval(sample, 100);
  const cell = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i];
  window.__sweepObserver = new MutationObserver(sample);
  window.__sweepObserver.observe(cell, {subtree: true, childList: true, attributes: true,
                                       attributeFilter: ['data-points']});
}
"""
STOP_SAMPLER_JS = """
() => { clearInterval(window.__sweepSampler); window.__sweepObserver.disconnect();
        return window.__sweepSamples; }
"""


def _wait_sweep(s: BrowserSession, index: int, condition: str, timeout_ms: int = 60000) -> dict:
    s.page.wait_for_function(
        f"i => {{ const w = window.__everyoSweep(i); return w && w.widget && ({condition}); }}",
        arg=index,
        timeout=timeout_ms,
    )
    return s.page.evaluate("i => window.__everyoSweep(i)", index)


def _output_text(s: BrowserSession, index: int) -> str:
    return s.cell(index).locator(".jp-OutputArea").inner_text()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    write_notebook(root / NOTEBOOK, CELLS)
    with BrowserSession(root, app="lab") as s:
        s.page.add_init_script(SWEEP_JS)
        s.page.evaluate(SWEEP_JS)
        try:
            s.open(NOTEBOOK)
            s.page.evaluate(SWEEP_JS)
            for index in (0, 1, 2, WARM):
                s.run_cell(index)
                s.wait_prompt(index)
            _wait_sweep(s, WARM, "w.plotly === 'loaded' && w.drawn === 2")
            s.bytes.wait_quiet(s.page)
            yield s
        except BaseException:
            s.page_screenshot("sweep-failure")
            raise


def test_magic_paints_points_while_the_cell_runs(lab):
    s = lab
    mark = s.bytes.mark()
    s.page.evaluate(SAMPLER_JS, LIVE)
    s.run_cell(LIVE)
    # a picture while it runs: at least two points drawn, the cell still busy
    try:
        _wait_sweep(s, LIVE, "w.drawn >= 2 && w.prompt.startsWith('[*]')", timeout_ms=30000)
        s.screenshot(s.cell(LIVE).locator(".everyo-sweep"), "sweep-live")
    except Exception:  # the cell may have ended first on a fast machine; the samples decide
        pass
    s.wait_prompt(LIVE, timeout_ms=120000)
    samples = s.page.evaluate(STOP_SAMPLER_JS)
    final = _wait_sweep(s, LIVE, "w.drawn === 6 && w.status === 'completed'")
    s.bytes.wait_quiet(s.page)
    sent = s.bytes.between(mark)
    running = [x for x in samples if x and x["prompt"].startswith("[*]") and x["widget"]]
    drawn = [x["drawn"] for x in running]
    gains = sum(1 for a, b in zip(drawn, drawn[1:]) if b > a)
    seen = [(round(x["t"] - running[0]["t"]), x["drawn"], x["progress"]) for x in running]
    gained_at = [round(b["t"] - running[0]["t"]) for a, b in zip(running, running[1:])
                 if b["drawn"] > a["drawn"]]  # fmt: skip
    print(f"live sweep cell: {sent:,} B sent; points gained while running at (ms) {gained_at}")
    assert gains >= 2, f"the throughput chart gained points {gains} times while running: {seen}"
    assert any(re.match(r"point \d of 8, batch \d+, \d+\.\d s", x["progress"]) for x in running)
    # the magic's sweep runs in the cell: Stop is off and says to interrupt the kernel instead
    painted = [x for x in running if x["drawn"] >= 1 and x["status"] == "running"]
    assert painted and all(x["stopOff"] for x in painted), seen
    assert all("interrupt the kernel" in x["stopTitle"] for x in painted), painted[-1]
    assert final["rows"] == 8 and final["marks"] == "error,OOM", final
    assert 0 < sent <= MAX_LIVE_BYTES, f"{sent:,} B for an eight-point sweep"
    # once for the page: the dashboard asked, the sweeps found it in the page-wide cache
    assert len(s.bytes.big_frames()) == 1, "plotly.js crossed the websocket more than once"
    rec = s.cell(LIVE).locator(".everyo-sweep-rec").inner_text()
    assert re.match(r"Batch size \d+ is recommended: ", rec), rec
    s.screenshot(s.cell(LIVE).locator(".everyo-sweep"), "sweep-final")


def test_stop_button_ends_a_background_sweep_and_keeps_its_points(lab):
    s = lab
    s.run_cell(BACKGROUND)
    s.wait_prompt(BACKGROUND)  # show() returns at once: the sweep has not started
    widget = s.cell(BACKGROUND).locator(".everyo-sweep")
    _wait_sweep(s, BACKGROUND, "w.plotly === 'loaded' && w.status === 'ready'")
    widget.locator(".everyo-sweep-run").click()
    _wait_sweep(s, BACKGROUND, "w.rows >= 2 && w.status === 'running'", timeout_ms=30000)
    # the notebook stays usable while the sweep runs on its thread
    assert re.match(r"^\[\d+\]", s.prompts()[BACKGROUND])
    widget.locator(".everyo-sweep-stop").click()
    stopped = _wait_sweep(s, BACKGROUND, "w.status === 'stopped'", timeout_ms=30000)
    assert 2 <= stopped["rows"] < 14, stopped
    assert stopped["drawn"] == stopped["rows"], stopped  # the throughput chart kept them
    assert "stopped after" in stopped["progress"]
    s.screenshot(widget, "sweep-stopped")

    s.run_cell(CHECK)
    s.wait_prompt(CHECK)
    text = _output_text(s, CHECK)
    found = re.search(r"POINTS (\d+) (\w+) (\w+)", text)
    assert found, text
    assert int(found.group(1)) == stopped["rows"] and found.group(2, 3) == ("True", "stopped")

    # Run again: a new sweep starts from nothing, and Stop ends it too
    widget.locator(".everyo-sweep-run").click()
    _wait_sweep(s, BACKGROUND, "w.status === 'running'", timeout_ms=30000)
    widget.locator(".everyo-sweep-stop").click()
    _wait_sweep(s, BACKGROUND, "w.status === 'stopped'", timeout_ms=30000)


def test_reopened_without_kernel_shows_the_static_sweep(lab):
    s = lab
    static = s.cell(LIVE).locator(".everyo-sweep-static")
    assert static.count() == 1 and not static.is_visible()  # hidden while the widget shows
    s.save(NOTEBOOK, expect="everyo-sweep-static")
    s.shutdown_kernel()
    s.reload()
    static = s.cell(LIVE).locator(".everyo-sweep-static")
    static.wait_for(state="visible", timeout=30000)
    s.page.wait_for_timeout(2000)  # let the widget manager give up on the missing models
    assert static.is_visible()
    assert static.locator(".everyo-sweep-chart").count() == 3
    assert static.locator("table").count() == 1
    assert "is recommended" in static.inner_text()
    s.screenshot(s.cell(LIVE).locator(".jp-OutputArea"), "sweep-reopened")
    errors = s.visible_text_containing("Error displaying widget")
    assert not errors, errors
