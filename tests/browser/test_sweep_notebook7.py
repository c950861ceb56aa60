"""The sweep widget in Notebook 7 (``jupyter notebook``), which uses JupyterLab's output area:
the charts render, the failed point is marked, and the static twin stays hidden while the widget
shows. Its own module, so its server and browser start after ``test_sweep.py``'s have stopped
(one Playwright driver at a time).
"""

from __future__ import annotations

import pytest
from harness import BrowserSession, missing, write_notebook

pytestmark = pytest.mark.browser

if missing():
    pytest.skip(missing(), allow_module_level=True)

from test_sweep import SETUP, SWEEP_JS, _wait_sweep  # noqa: E402


def test_notebook7_sweep_renders_and_hides_its_static_twin(tmp_path):
    cells = [
        "%load_ext everyo_lab",
        SETUP,
        "%everyo_sweep slow_step make_batch --batch-sizes 1,4,8 --warmup 0 --repeat 2 --label nb7",
    ]
    write_notebook(tmp_path / "sweep7.ipynb", cells)
    with BrowserSession(tmp_path, app="notebook") as s:
        s.page.add_init_script(SWEEP_JS)
        try:
            s.open("sweep7.ipynb")
            for index in range(3):  # run_cell retries while the kernel connects
                s.run_cell(index)
                s.wait_prompt(index, timeout_ms=120000)
            done = _wait_sweep(s, 2, "w.plotly === 'loaded' && w.drawn === 2 && w.rows === 3")
            assert done["status"] == "completed" and done["marks"] == "error", done
            static = s.cell(2).locator(".everyo-sweep-static")
            assert static.count() == 1 and not static.is_visible()
            s.screenshot(s.cell(2).locator(".everyo-sweep"), "sweep-notebook7")
        except BaseException:
            s.page_screenshot("sweep-notebook7-failure")
            raise
