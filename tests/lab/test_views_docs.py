"""Every ```python block of docs/dashboard.md runs unchanged, top to bottom, and prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "dashboard.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_dashboard_doc_examples_run(tmp_path, monkeypatch, capsys):
    pytest.importorskip("plotly")
    from everyo.profiler import runs

    monkeypatch.chdir(tmp_path)  # examples write files relative to the working directory
    assert len(BLOCKS) >= 4
    before = len(runs)
    try:
        namespace = {"__name__": "__doc_example__"}
        for index, block in enumerate(BLOCKS):
            exec(compile(block, f"{DOC.name}[{index}]", "exec"), dict(namespace))
            assert capsys.readouterr().out, f"block {index} printed nothing"
    finally:
        if before == 0:
            runs.clear()  # leave the kernel-wide registry empty, as we found it
