"""Every ```python block of docs/benchmarking.md and docs/shared-machines.md runs unchanged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = {"benchmarking.md": 6, "shared-machines.md": 5}  # page -> examples it has at least
BLOCKS = {
    page: re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), re.S)
    for page in PAGES
}


@pytest.mark.parametrize("page", PAGES)
def test_the_page_has_examples(page):
    assert len(BLOCKS[page]) >= PAGES[page]


@pytest.mark.parametrize(
    "page, index", [(page, i) for page, blocks in BLOCKS.items() for i in range(len(blocks))]
)
def test_doc_example_runs(page, index, tmp_path, monkeypatch, capsys):
    if "import torch" in BLOCKS[page][index]:
        pytest.importorskip("torch")  # (the sweep of a PyTorch model)
    monkeypatch.chdir(tmp_path)  # examples write files relative to the working directory
    code = compile(BLOCKS[page][index], f"{page}[{index}]", "exec")
    exec(code, {"__name__": "__doc_example__"})
    assert capsys.readouterr().out  # each example prints what it shows
