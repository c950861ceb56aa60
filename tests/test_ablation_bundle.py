"""`benchmarks/ablation_bundle.py` builds its variant of the current front end (its edits still
apply to the sources) and refuses, with a clear error, an edit whose anchor is gone."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ablation(benchmark_script):
    return benchmark_script("ablation_bundle")


@pytest.mark.skipif(
    shutil.which("node") is None or not (ROOT / "js" / "node_modules" / "esbuild").is_dir(),
    reason='node or esbuild is not installed (run "npm ci" in js/)',
)
def test_no_live_drawing_builds_from_the_current_sources(ablation, tmp_path):
    out = ablation.build("no-live-drawing", tmp_path / "nodraw.js")
    text = out.read_text()
    committed = (ROOT / "everyo_lab" / "static" / "dashboard.js").read_text()
    # another sources hash: both builds can live in one page
    assert text.splitlines()[0] != committed.splitlines()[0]
    # (esbuild prints the code without whitespace, and renames what two modules both name)
    assert text.count('if(running(model.get("report"))){waiter.report();return}') == 1
    assert re.search(r'if\(!running\(model\.get\("report"\)\)\)table\d*\.update\(\)', text)
    assert not (ROOT / "js" / "everyo_lab").exists()  # the checkout's js/ is untouched


def test_an_edit_whose_anchor_is_gone_is_an_error(ablation):
    with pytest.raises(ValueError, match="update benchmarks/ablation_bundle.py"):
        ablation.patch("const x = 1;\n", [("const y = 2;", "const y = 3;")])
    with pytest.raises(ValueError, match="found it 2 times"):
        ablation.patch("a;\na;\n", [("a;", "b;")])
    assert ablation.patch("a;\nc;\n", [("a;", "b;")]) == "b;\nc;\n"
