"""A notebook using the magic, executed by nbclient: its saved outputs hold the final run."""

from __future__ import annotations

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

WIDGET = "application/vnd.jupyter.widget-view+json"

CELL = """%%everyo_profile --label saved --refresh 4
import everyo as eo

model = eo.Sequential(eo.Linear(4, 16, seed=0), eo.ReLU(), eo.Linear(16, 2, seed=1))
x = eo.zeros(32, 4)
for _ in range(20):
    output = model(x)
"""


@pytest.mark.slow
def test_saved_notebook_keeps_the_final_static_rendering(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext everyo_lab"),
        nbformat.v4.new_code_cell(CELL),
        nbformat.v4.new_code_cell("output.shape"),
    ]
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    path = tmp_path / "saved.ipynb"
    nbformat.write(nb, path)
    saved = nbformat.read(path, as_version=4)

    bundles = [o["data"] for o in saved.cells[1].outputs if o.get("output_type") == "display_data"]
    # two outputs, each updated in place at the end of the cell: the widget, and the static
    # rendering that a reopened notebook shows without a kernel
    assert len(bundles) == 2
    assert WIDGET in bundles[0] and "text/html" not in bundles[0]
    data = bundles[1]
    assert {"text/html", "text/plain"} <= set(data)
    html, text = data["text/html"], data["text/plain"]
    for name in ("Sequential", "Linear", "ReLU"):
        assert name in html and name in text
    assert 'class="everyo-static-flame"' in html and "completed" in html  # the final chart
    assert saved.cells[2].outputs[0]["data"]["text/plain"] == "(32, 2)"
