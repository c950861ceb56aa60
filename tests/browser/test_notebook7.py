"""The same dashboard in Notebook 7 (``jupyter notebook``): it renders and gains bars.

A shorter check than ``test_dashboard.py`` (which drives JupyterLab): Run All on a warm-up and
a 2-s profiled training loop; the live cell's dashboard renders and its chart gains bars. Its
own module, so its server and browser start after the JupyterLab ones have stopped (one
Playwright driver at a time).
"""

from __future__ import annotations

import pytest
from harness import BrowserSession, missing, training_cell, warmup_cell, write_notebook

pytestmark = pytest.mark.browser

if missing():
    pytest.skip(missing(), allow_module_level=True)

NOTEBOOK = "notebook7.ipynb"
LIVE = 2


def test_notebook7_dashboard_renders(tmp_path):
    cells = ["%load_ext everyo_lab", warmup_cell("warmup"), training_cell(2.0, magic="--label nb7")]
    write_notebook(tmp_path / NOTEBOOK, cells)
    with BrowserSession(tmp_path, app="notebook") as s:
        try:
            s.open(NOTEBOOK)
            started = s.start_watch(LIVE)
            s.run_all()
            s.wait_all_done(timeout_ms=90000)
            watch = s.stop_watch(started)
            s.page.wait_for_function(
                "i => { const b = window.__everyoBoard(i); return b && b.bars > 0 && b.yrange; }",
                arg=LIVE,
                timeout=60000,
            )
            board = s.board(LIVE)
            bars = [x.get("bars", 0) for x in watch.samples if x and x.get("board")]
            assert board["bars"] > 0, board
            assert not bars or min(bars) < board["bars"], f"no bars gained: {bars}, {board}"
            # With Run All the page's first dashboard asks for plotly.js while the kernel runs
            # the next cell, so the live cell may only get its chart when the kernel is free.
            live = [x.get("bars", 0) for x in watch.running() if x.get("board")]
            print(f"Notebook 7: bars while the live cell ran {live}; at the end {board['bars']}")
            assert board["yrange"][0] > board["yrange"][1]
            s.screenshot(s.cell(LIVE).locator(".everyo-dashboard"), "notebook7")
        except BaseException:
            s.page_screenshot("notebook7-failure")
            raise
