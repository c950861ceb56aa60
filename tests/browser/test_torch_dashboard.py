"""The live dashboard on a PyTorch model, in JupyterLab in Debian's Chromium: a small CNN
trained from a DataLoader under ``%%everyo_profile``, unchanged. The chart draws, the table
lists the layers by class and path with their backward rows, the steps box counts the
optimizer's steps, and the export button downloads a Chrome trace with the layers in it.
Screenshot: ``test-artifacts/torch-dashboard.png`` (copied into the docs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import BrowserSession, missing, write_notebook

pytest.importorskip("torch")
pytestmark = [pytest.mark.browser, pytest.mark.slow]

if missing():
    pytest.skip(missing(), allow_module_level=True)

NOTEBOOK = "torch_dashboard.ipynb"
SETUP = """\
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(16 * 7 * 7, 10),
)
loader = DataLoader(
    TensorDataset(torch.randn(640, 1, 28, 28), torch.randint(0, 10, (640,))), batch_size=32
)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
"""
TRAIN = """\
%%everyo_profile --label torch-cnn
for epoch in range(2):
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
"""
CELLS = ["%load_ext everyo_lab", SETUP, TRAIN]
TRAINED = 2
STEPS = 2 * 640 // 32


def _wait_drawn(s: BrowserSession, index: int, timeout_ms: int = 90000) -> dict:
    s.page.wait_for_function(
        "i => { const b = window.__everyoBoard(i);"
        " return b && b.plotly === 'loaded' && b.bars > 0 && !b.prompt.startsWith('[*]'); }",
        arg=index,
        timeout=timeout_ms,
    )
    return s.board(index)


def test_dashboard_of_a_torch_cnn(tmp_path):
    root = tmp_path / "nb"
    root.mkdir()
    write_notebook(root / NOTEBOOK, CELLS)
    env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    with BrowserSession(root, app="lab", env=env) as s:
        try:
            s.open(NOTEBOOK)
            for i in range(len(CELLS)):
                s.run_cell(i)
                s.wait_prompt(i, timeout_ms=120000)
            board = _wait_drawn(s, TRAINED)
            assert board["events"] > 0 and board["bars"] > 0, board
            dash = s.cell(TRAINED).locator(".everyo-dashboard")
            table = dash.locator("table.everyo-table:not(.everyo-step-table)").first
            text = table.inner_text()
            # layers by class (the two Conv2d together) or by class and path when one of a
            # kind, their backward rows, the optimizer and the waits for batches
            assert "Conv2d\tmodule\t80" in text and "Linear [7]\tmodule\t40" in text, text
            assert "Linear [7] (backward)\tbackward\t40" in text, text
            assert "SGD.step\toptimizer\t40" in text and "DataLoader.next\tdata" in text, text
            steps = dash.locator(".everyo-steps-box").inner_text()
            assert f"{STEPS} steps" in steps, steps
            s.screenshot(dash, "torch-dashboard")

            with s.page.expect_download(timeout=15000) as info:
                dash.locator(".everyo-export-button").first.click()
            download = info.value
            assert download.suggested_filename == "torch-cnn.trace.json"
            events = json.loads(Path(download.path()).read_text())["traceEvents"]
            names = {e.get("name", "") for e in events if e.get("ph") == "X"}
            assert any(n.startswith("Conv2d") for n in names), sorted(names)[:20]
            assert "SGD.step" in names
        except BaseException:
            s.page_screenshot("torch-dashboard-failure")
            raise
