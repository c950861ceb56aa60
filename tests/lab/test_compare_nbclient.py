"""A notebook using ``%%everyo_profile --compare`` and ``everyo_lab.compare``, executed by
nbclient: its saved outputs hold the static comparison, and its widget state stays small."""

from __future__ import annotations

import json

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

WIDGET = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
SETUP = """%load_ext everyo_lab
import everyo as eo
import everyo_lab
model = eo.Sequential(eo.Linear(16, 64, seed=0), eo.ReLU(), eo.Linear(64, 2, seed=1))
"""
LOOP = "for _ in range(10):\n    y = model(eo.zeros({batch}, 16))\n"


def statics(cell) -> list[dict]:
    return [
        o["data"]
        for o in cell.outputs
        if o.get("output_type") == "display_data" and WIDGET not in o["data"]
    ]


@pytest.mark.slow
def test_saved_notebook_keeps_the_static_comparisons(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(SETUP),
        nbformat.v4.new_code_cell(
            "%%everyo_profile --label before --profile-memory\n" + LOOP.format(batch=256)
        ),
        nbformat.v4.new_code_cell(
            "%%everyo_profile --label after --compare before\n" + LOOP.format(batch=8)
        ),
        nbformat.v4.new_code_cell('everyo_lab.compare("before", "after")'),
    ]
    nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    path = tmp_path / "compare.ipynb"
    nbformat.write(nb, path)
    saved = nbformat.read(path, as_version=4)

    # the memory view of the profile_memory run is in its static rendering
    (before,) = statics(saved.cells[1])
    assert "live tensor bytes over time" in before["text/html"]
    assert "memory (host tensor bytes): peak" in before["text/plain"]

    # --compare: the dashboard's static rendering, then the comparison, final numbers
    (after,) = statics(saved.cells[2])
    html = after["text/html"]
    assert html.index("everyo profile · after") < html.index("everyo comparison")
    flames = html.count('class="everyo-static-flame"')
    assert "A before" in html and "B after" in html and flames == 3
    assert "everyo comparison · before" in after["text/plain"]

    # compare(): two outputs, the widget and the static comparison alone
    outputs = saved.cells[3].outputs
    assert len(outputs) == 2 and WIDGET in outputs[0]["data"]
    assert outputs[0]["data"]["text/plain"] == "everyo comparison: before → after"
    (alone,) = statics(saved.cells[3])
    assert (
        "everyo comparison" in alone["text/html"] and "everyo profile ·" not in alone["text/html"]
    )
    assert (
        alone["text/html"].count('class="everyo-static-flame"') == 2
        and "everyo-diff" in alone["text/html"]
    )
    assert ":has(.everyo-dashboard)" in alone["text/html"]  # hidden while the widget shows

    state = saved.metadata.get("widgets", {}).get(STATE, {})["state"]
    boards = [m["state"] for m in state.values() if "comparison" in m["state"]]
    assert len(boards) == 3 and "plotly.js v" not in json.dumps(state)
    for board in boards:
        # numbers only (events travel as binary messages, never state); the front end's own
        # bundle (_esm, ~90 KB) is anywidget's per-widget cost, the same for every dashboard
        data = {k: v for k, v in board.items() if k != "_esm"}
        assert len(json.dumps(data)) < 20_000, sorted(data)
    print(f"widget state {len(json.dumps(state)):,} B, notebook {path.stat().st_size:,} B")
