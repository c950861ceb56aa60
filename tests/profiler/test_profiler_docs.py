"""Every ```python block of docs/profiler.md runs, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "profiler.md"


def test_doc_examples_run(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), ns)
    out = capsys.readouterr().out
    assert "total_ms" in out and "\n3\n" in out
    assert (tmp_path / "profiles" / "model-trace.json").is_file()
    assert ns["run"].num_events > 0
