"""Every ```python block of docs/benchmarking.md runs unchanged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "benchmarking.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_example_runs(index, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # examples write files relative to the working directory
    exec(compile(BLOCKS[index], f"{DOC.name}[{index}]", "exec"), {"__name__": "__doc_example__"})
    assert capsys.readouterr().out  # each example prints what it shows
