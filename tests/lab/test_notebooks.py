"""The teaching labs in examples/ run top to bottom under nbclient, and their saved outputs keep
the static rendering of every profiled cell (what a reader sees without a kernel)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))


def _kernel_available() -> bool:
    from jupyter_client.kernelspec import KernelSpecManager

    return "python3" in KernelSpecManager().find_kernel_specs()


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("everyo_lab.magic") is None,
        reason="everyo_lab.magic (the %%everyo_profile magic) is not there yet",
    ),
    pytest.mark.skipif(not _kernel_available(), reason="no 'python3' Jupyter kernelspec"),
]


def test_examples_are_committed_without_outputs():
    assert [p.name for p in NOTEBOOKS] == ["01_profile_a_model.ipynb", "02_batch_size_sweep.ipynb"]
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_and_keeps_static_output(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    shutil.copy(path, tmp_path / path.name)
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert errors == [], errors and f"{errors[0].ename}: {errors[0].evalue}"
    magic_cells = [c for c in nb.cells if c.source.startswith("%%everyo_profile")]
    assert magic_cells
    for cell in magic_cells:
        bundles = [
            o.data for o in cell.outputs if o.output_type in ("display_data", "execute_result")
        ]
        static = [b for b in bundles if "text/html" in b]
        assert static, f"no text/html output in {cell.source.splitlines()[0]!r}"
        html = static[-1]["text/html"]
        assert "<table" in html and "<svg" in html and "<script" not in html.lower()
        assert "Nested module timing intervals overlap" in html
        text = static[-1]["text/plain"]
        assert text.startswith("everyo profile") and "completed" in text.splitlines()[0]
    # the saved file round-trips: a reader without a kernel gets the same static parts
    saved = nbformat.reads(nbformat.writes(nb), as_version=4)
    nbformat.validate(saved)
