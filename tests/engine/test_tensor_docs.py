"""Every Python example in docs/engine.md runs as written and prints what its comments say."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "engine.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_doc_has_examples():
    assert len(BLOCKS) >= 5


# `print(...)  # comment` lines whose comment describes the output instead of showing it
PROSE = {
    "a NumPy copy on the host",
    "comparisons give boolean tensors",
    "a tree, like PyTorch's repr",
}


def _expected(line: str) -> str | None:
    """The output a ``print(...)  # shown`` line promises (text after ``;`` or ``, with`` is a
    remark), or None for lines that print nothing or describe it in words."""
    m = re.search(r"^\s*print\(.*\)\s+# (.*)$", line)
    if m is None or m.group(1) in PROSE:
        return None
    return re.split(r"; |, with ", m.group(1))[0]


def _matches(shown: str, printed: str) -> bool:
    # `...` (or `[...]`) in a comment stands for any text
    parts = re.split(r"\[\.\.\.\]|\.\.\.", shown)
    return re.fullmatch(".*".join(re.escape(p) for p in parts), printed, flags=re.S) is not None


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_doc_example_runs(code):
    printed: dict[int, list[str]] = {}

    def record(*args, **kwargs):
        buf = io.StringIO()
        kwargs.pop("file", None)
        print(*args, file=buf, **kwargs)
        printed.setdefault(sys._getframe(1).f_lineno, []).append(buf.getvalue().rstrip("\n"))

    exec(compile(code, str(DOC), "exec"), {"__name__": "__doc_example__", "print": record})
    assert printed  # every example prints what it shows
    for lineno, line in enumerate(code.splitlines(), 1):
        shown = _expected(line)
        if shown is not None and lineno in printed:  # (a print under a false `if` never ran)
            assert all(_matches(shown, out) for out in printed[lineno]), (line, printed[lineno])
