"""The live dashboard in JupyterLab, driven in Debian's Chromium (see BROWSER_TESTING.md).

One notebook run: while a profiled training loop runs, the flame chart gains bars; afterwards
the table shows the module rows, one click exports a Chrome trace, and a screenshot is saved
to test-artifacts/dashboard.png. Then the notebook is saved, its kernel shut down and the page
reloaded: the static rendering (hidden while the live widget showed) is what remains visible.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"

if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
nbformat = pytest.importorskip("nbformat")
if shutil.which("jupyter-lab") is None and shutil.which("jupyter") is None:
    pytest.skip("jupyter lab is not installed", allow_module_level=True)

SETUP_CELL = """%%everyo_profile --label warmup --no-live
import time
import everyo as eo

model = eo.Sequential(eo.Linear(32, 64, seed=0), eo.ReLU(), eo.Linear(64, 8, seed=1))
optimizer = eo.optim.SGD(model.parameters(), lr=0.001)
x = eo.ones(64, 32)
output = model(x)
"""

TRAINING_CELL = """%%everyo_profile --label browser --refresh 4
t0 = time.perf_counter()
steps = 0
while time.perf_counter() - t0 < 12.0:
    optimizer.zero_grad()
    out = model(x)
    loss = eo.sum(out * out)
    loss.backward()
    optimizer.step()
    steps += 1
    time.sleep(0.01)
"""

BARS_JS = "el => (el.data || []).reduce((n, t) => n + ((t.base && t.base.length) || 0), 0)"
PROMPTS_JS = (
    "() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
    ".map(p => p.textContent.trim())"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_notebook(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext everyo_lab"),
        nbformat.v4.new_code_cell(SETUP_CELL),
        nbformat.v4.new_code_cell(TRAINING_CELL),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = folder / "dashboard.ipynb"
    nbformat.write(nb, path)
    return path


def _start_lab(home: Path, root: Path, port: int) -> subprocess.Popen:
    settings = home / ".jupyter/lab/user-settings/@jupyterlab/apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    env = dict(os.environ, HOME=str(home), JUPYTER_CONFIG_DIR=str(home / ".jupyter"))
    env.pop("JUPYTER_PLATFORM_DIRS", None)
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--allow-root",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--ServerApp.root_dir={root}",
    ]
    proc = subprocess.Popen(
        cmd, env=env, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {proc.returncode}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=1)
            return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("jupyter lab did not answer /api/status within 40 s")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def _accept_kernel_dialog(page) -> None:
    """Answer JupyterLab's "Select Kernel" dialog when it shows (it can, on a fresh HOME)."""
    button = page.locator(".jp-Dialog .jp-mod-accept")
    if button.count():
        button.first.click()


def _run_cell(page, index: int, attempts: int = 4) -> None:
    """Select cell ``index`` and run it (Shift+Enter), retried until its prompt changes.

    A kernel still connecting, or JupyterLab's "Select Kernel" dialog on a fresh HOME, can
    swallow the first request.
    """
    cell = page.locator(".jp-Notebook .jp-CodeCell").nth(index)
    for _ in range(attempts):
        _accept_kernel_dialog(page)
        cell.locator(".jp-InputPrompt").click()
        page.keyboard.press("Shift+Enter")
        for _ in range(50):
            page.wait_for_timeout(100)
            _accept_kernel_dialog(page)
            if page.evaluate(PROMPTS_JS)[index] != "[ ]:":
                return
    raise AssertionError(f"cell {index} did not start running")


def _wait_idle_prompt(page, index: int, timeout_ms: int = 60000) -> None:
    page.wait_for_function(
        f"() => /^\\[\\d+\\]/.test(({PROMPTS_JS})()[{index}])", timeout=timeout_ms
    )


def _watch_flame_while_running(page, timeout_s: float = 60.0) -> list[tuple[float, int]]:
    """(seconds, bar count) of the live flame chart each time it changed while ``[*]`` showed."""
    seen: list[tuple[float, int]] = []
    t0 = time.monotonic()
    started = False
    while time.monotonic() - t0 < timeout_s:
        running = any(p.startswith("[*]") for p in page.evaluate(PROMPTS_JS))
        if running:
            started = True
            boards = page.locator(".everyo-dashboard")
            plots = boards.nth(1).locator(".js-plotly-plot") if boards.count() > 1 else None
            if plots is not None and plots.count():
                bars = plots.first.evaluate(BARS_JS)
                if not seen or bars != seen[-1][1]:
                    seen.append((round(time.monotonic() - t0, 2), bars))
        elif started:
            break
        page.wait_for_timeout(100)
    return seen


def _run_menu_command(page, menu: str, command: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=menu).first.click()
    page.locator(f'li.lm-Menu-item[data-command="{command}"]').first.click()


def _check_reopened_without_kernel(page, root: Path) -> None:
    """While the live widget shows, its static twin is hidden; after save, kernel shutdown and
    reload (the widget's model is gone), the static table and flame chart are visible."""
    cell = page.locator(".jp-Notebook .jp-CodeCell").nth(2)
    assert cell.locator(".everyo-static").count() == 1
    assert not cell.locator(".everyo-static").is_visible()

    _run_menu_command(page, "File", "docmanager:save")
    path = root / "dashboard.ipynb"
    deadline = time.monotonic() + 15
    while "everyo-static" not in path.read_text() and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    assert "everyo-static" in path.read_text(), "the notebook was not saved with its outputs"
    _run_menu_command(page, "Kernel", "kernelmenu:shutdown")
    _accept_kernel_dialog(page)  # "Shut down kernel?" asks for confirmation
    page.wait_for_timeout(1000)

    page.reload()
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=30000)
    static = page.locator(".jp-Notebook .jp-CodeCell").nth(2).locator(".everyo-static")
    static.wait_for(state="visible", timeout=30000)
    page.wait_for_timeout(2000)  # let the widget manager give up on the missing model
    assert static.is_visible()
    text = static.inner_text()
    assert "Linear" in text and "ReLU" in text and "completed" in text
    assert static.locator("svg rect").count() > 0  # the final flame chart
    static.scroll_into_view_if_needed()
    static.screenshot(path=str(ARTIFACTS / "reopened.png"))


def test_live_dashboard_in_jupyterlab(tmp_path):
    home, root = tmp_path / "home", tmp_path / "notebooks"
    home.mkdir()
    root.mkdir()
    _write_notebook(root)
    port = _free_port()
    proc = _start_lab(home, root, port)
    try:
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM,
                headless=True,
                args=[
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                ],
            )
            try:
                context = browser.new_context(
                    accept_downloads=True, viewport={"width": 1400, "height": 1000}
                )
                page = context.new_page()
                page.goto(f"http://127.0.0.1:{port}/lab/tree/dashboard.ipynb")
                page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=30000)
                page.wait_for_selector(
                    '.jp-Notebook-ExecutionIndicator[data-status="idle"]', timeout=30000
                )
                # Load the extension and show a first dashboard, so plotly.js is loaded in
                # the page before the live cell starts (the target excludes that first load).
                _run_cell(page, 0)
                _wait_idle_prompt(page, 0)
                _run_cell(page, 1)
                _wait_idle_prompt(page, 1)
                page.locator(".everyo-dashboard .js-plotly-plot").first.wait_for(timeout=60000)

                _run_cell(page, 2)
                counts = _watch_flame_while_running(page)
                gains = sum(1 for (_, a), (_, b) in zip(counts, counts[1:]) if b > a)
                assert gains >= 2, f"flame chart (s, bars) while running: {counts}"

                _wait_idle_prompt(page, 2, timeout_ms=30000)
                board = page.locator(".everyo-dashboard").nth(1)
                table = board.locator(".everyo-table")
                table.wait_for(timeout=10000)
                text = table.inner_text()
                assert "Linear" in text and "ReLU" in text and "Sequential" in text

                with page.expect_download(timeout=15000) as info:
                    board.locator(".everyo-export-button").click()
                download = info.value
                assert download.suggested_filename == "browser.trace.json"
                trace = json.loads(Path(download.path()).read_text())
                assert trace["traceEvents"]
                assert (root / "browser.trace.json").exists()  # next to the notebook

                ARTIFACTS.mkdir(exist_ok=True)
                page.set_viewport_size({"width": 1400, "height": 2400})  # the whole dashboard
                page.mouse.move(0, 0)  # no hover label in the picture
                board.scroll_into_view_if_needed()
                board.screenshot(path=str(ARTIFACTS / "dashboard.png"))

                _check_reopened_without_kernel(page, root)
            except Exception:
                ARTIFACTS.mkdir(exist_ok=True)  # what the page looked like when it failed
                page.screenshot(path=str(ARTIFACTS / "dashboard-failure.png"))
                raise
            finally:
                browser.close()
    finally:
        _stop(proc)
