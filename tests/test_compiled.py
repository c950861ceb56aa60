"""The one seam for compiled code: every extension is loaded by ``everyo._compiled``, by one
rule, and nothing else imports an extension or reads ``EVERYO_PURE_PYTHON``."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from everyo import _compiled

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [
    p
    for folder in ("everyo", "everyo_lab", "benchmarks")
    for p in ROOT.joinpath(folder).rglob("*.py")
    if p.name != "_compiled.py"
]


def test_every_extension_setup_builds_is_declared_once():
    built = re.findall(r'Extension\(\s*"([\w.]+)"', ROOT.joinpath("setup.py").read_text())
    assert sorted(built) == sorted(_compiled.EXTENSIONS)


def _imported_names(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)


def test_no_other_module_imports_an_extension_or_reads_the_switch():
    extensions = set(_compiled.EXTENSIONS)
    found = []
    for path in SOURCES:
        tree = ast.parse(path.read_text())
        found += [(path.name, n) for n in _imported_names(tree) if n in extensions]
        found += [
            (path.name, "EVERYO_PURE_PYTHON")
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value == _compiled.PURE_PYTHON
        ]
    # (benchmarks may hand the switch to a child process: they set it, never read it)
    assert [f for f in found if not f[0].startswith(("profiler_overhead", "module_call_"))] == []


def test_pure_python_turns_every_extension_off_and_says_so(monkeypatch):
    monkeypatch.setenv("EVERYO_PURE_PYTHON", "1")
    assert all(_compiled.load(name) is None for name in _compiled.EXTENSIONS)
    assert set(_compiled.unavailable().values()) == {"EVERYO_PURE_PYTHON is set"}
    monkeypatch.setenv("EVERYO_PURE_PYTHON", "")  # (empty: not set)
    assert _compiled.why("everyo.profiler.recording._crecorder") != "EVERYO_PURE_PYTHON is set"


def test_a_missing_or_unusable_extension_is_none_with_its_reason(monkeypatch):
    monkeypatch.delenv("EVERYO_PURE_PYTHON", raising=False)
    monkeypatch.setitem(_compiled.EXTENSIONS, "everyo._cnothing", None)
    assert _compiled.load("everyo._cnothing") is None
    assert _compiled.why("everyo._cnothing").startswith("not built")

    monkeypatch.setitem(_compiled.EXTENSIONS, "everyo._cunusable", lambda m: "not here")
    monkeypatch.setitem(sys.modules, "everyo._cunusable", _compiled)  # (any module will do)
    assert _compiled.load("everyo._cunusable") is None
    assert _compiled.why("everyo._cunusable") == "not here"
    _compiled._imported.pop("everyo._cnothing")
    _compiled._imported.pop("everyo._cunusable")


def test_a_subprocess_with_the_switch_runs_python_everywhere():
    code = (
        "import everyo, everyo.profiler.recording.recorder as r, everyo.machine_state as m;"
        " from everyo.core import float_mode as f;"
        " print(r.IMPLEMENTATION, m._cread, f.SUPPORTED, everyo.nn.module.IMPLEMENTATION)"
    )
    env = {"EVERYO_PURE_PYTHON": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["python", "None", "False", "python"], out.stderr


@pytest.mark.skipif(
    _compiled.load("everyo.profiler.recording._crecorder") is None,
    reason="extensions not built here",
)
def test_import_everyo_loads_only_the_extensions_the_engine_uses():
    code = "import sys, everyo; print(sorted(m for m in sys.modules if '._c' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    loaded = [m for m in eval(out.stdout) if m.startswith("everyo")]
    assert "everyo.profiler.storage._cbatch" not in loaded and "everyo._cmachine" not in loaded
