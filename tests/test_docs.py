"""The code in README.md, docs/getting-started.md and docs/troubleshooting.md runs as written
and prints what the text says. (The other docs pages have their own tests beside the package
they document.)"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def python_blocks(path: Path) -> list[str]:
    """The ```python blocks of a Markdown file, dedented (list items indent theirs)."""
    found = re.findall(r"^([ \t]*)```python\n(.*?)^\1```", path.read_text(), flags=re.S | re.M)
    return [textwrap.dedent(body) for _, body in found]


def run_blocks(path: Path, monkeypatch, tmp_path) -> dict:
    blocks = python_blocks(path)
    assert blocks, f"no python blocks in {path.name}"
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__docs__"}
    for block in blocks:
        exec(compile(block, str(path), "exec"), ns)
    return ns


def test_readme_example(monkeypatch, tmp_path, capsys):
    run_blocks(ROOT / "README.md", monkeypatch, tmp_path)
    out = capsys.readouterr().out
    assert "total_ms" in out and "Linear" in out and "Sequential" in out
    assert (tmp_path / "model-trace.json").stat().st_size > 0


def test_getting_started_examples(monkeypatch, tmp_path, capsys):
    ns = run_blocks(ROOT / "docs" / "getting-started.md", monkeypatch, tmp_path)
    assert isinstance(ns["env"], dict)
    assert "[]" in capsys.readouterr().out  # no GPU here: gpus is empty


def test_troubleshooting_examples(monkeypatch, tmp_path, capsys):
    pytest.importorskip("numpy")
    from everyo.core.device import _reset_fallback_warning

    _reset_fallback_warning()
    run_blocks(ROOT / "docs" / "troubleshooting.md", monkeypatch, tmp_path)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "0"  # everything inside the warmup: no rows
    assert lines[1] == "19"  # the first call was warmup
    assert any(line.startswith("no GPU:") for line in lines)  # strict=True raised
    assert any("no-such-dir/trace.json" in line for line in lines)
    assert "DataLoader: Records[37] raised this (sample index 37)" in lines
    assert (tmp_path / "profiles" / "model-trace.json").is_file()
    assert not (tmp_path / "no-such-dir").exists()
