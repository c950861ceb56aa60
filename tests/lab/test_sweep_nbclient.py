"""A notebook using ``%everyo_sweep``, executed by nbclient: its saved outputs hold the final
sweep's static rendering (three SVG charts, the recommendation, the table), and its widget state
stays small (no plotly.js, no per-point history)."""

from __future__ import annotations

import json

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

WIDGET = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
SETUP = """import everyo as eo

model = eo.Sequential(eo.Linear(32, 64, seed=0), eo.ReLU(), eo.Linear(64, 8, seed=1))

def make_batch(n):
    return eo.randn(n, 32, seed=n)
"""
SWEEP = (
    "%everyo_sweep model make_batch --batch-sizes 1,4,16,64,256,4096 --memory-limit 600000 "
    "--warmup 1 --repeat 3 --label saved"
)
MAX_STATE = 100_000  # bytes of widget state for one sweep (the dashboard's target: 1 MB for two)


@pytest.mark.slow
def test_saved_notebook_keeps_the_final_static_sweep(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext everyo_lab"),
        nbformat.v4.new_code_cell(SETUP),
        nbformat.v4.new_code_cell(SWEEP),
        nbformat.v4.new_code_cell(
            "import everyo_lab\nrec = everyo_lab.sweeps['saved'].result.recommended\n"
            "print(rec.batch_size if rec else 'none')"
        ),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    path = tmp_path / "sweep.ipynb"
    nbformat.write(nb, path)
    saved = nbformat.read(path, as_version=4)

    bundles = [o["data"] for o in saved.cells[2].outputs if o.get("output_type") == "display_data"]
    assert len(bundles) == 2, saved.cells[2].outputs
    assert WIDGET in bundles[0] and "text/html" not in bundles[0]
    html, text = bundles[1]["text/html"], bundles[1]["text/plain"]
    assert 'class="everyo-sweep-static"' in html and "<script" not in html.lower()
    assert html.count('class="everyo-sweep-chart"') == 3 and "<table" in html
    assert "completed" in html and "6 points measured" in html  # the final sweep, not the first
    assert "OOM" in html  # 4096 runs out of the memory limit
    assert text.splitlines()[0].startswith("Batch-size sweep · saved (inference, completed)")
    # (a busy machine can leave no point trusted: then the page says so, as the result does)
    recommended = saved.cells[3].outputs[0]["text"].strip()
    if recommended == "none":
        line = "No batch size is recommended: no point can be trusted"
    else:
        line = f"Batch size {recommended} is recommended"
    assert line in html

    # nbconvert's HTML (what a reader without Jupyter gets) holds the same static rendering
    from nbconvert import HTMLExporter

    page, _ = HTMLExporter().from_notebook_node(saved)
    assert page.count('class="everyo-sweep-static"') == 1 and line in page

    state = saved.metadata["widgets"][STATE]["state"]
    sweep_models = [m for m in state.values() if "charts" in m.get("state", {})]
    assert len(sweep_models) == 1
    text_state = json.dumps(saved.metadata["widgets"])
    print(f"widget state {len(text_state):,} B, notebook {path.stat().st_size:,} B")
    assert len(text_state) <= MAX_STATE and "plotly.js v" not in text_state
