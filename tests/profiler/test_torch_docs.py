"""Every ```python block of docs/pytorch.md runs, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "pytorch.md"


def test_doc_examples_run(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert blocks
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), ns)
    out = capsys.readouterr().out
    assert "Linear.backward" in out and "SGD.step" in out
    assert ns["p"].run.options["torch"]["framework"] == "torch"
