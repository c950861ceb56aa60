"""The front end in js/: its unit tests pass, its version matches everyo's, its build is fresh."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from everyo._version import __version__

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "js"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")
# The build is esbuild's (js/package-lock.json); CI installs it (`npm ci` in .ci/run) and there,
# with EVERYO_REQUIRE_COMPILED=1, a missing esbuild fails the check instead of skipping it.
ESBUILD = (JS / "node_modules" / "esbuild").is_dir() or os.environ.get("EVERYO_REQUIRE_COMPILED")
needs_esbuild = pytest.mark.skipif(
    NODE is None or not ESBUILD, reason='esbuild is not installed: run "npm ci" in js/'
)


def _node(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [NODE, *args], cwd=JS, capture_output=True, text=True, timeout=120, check=False
    )


def test_package_version_matches_everyo():
    package = json.loads((JS / "package.json").read_text())
    assert package["name"] == "everyo-lab"
    assert package["version"] == __version__
    assert not package.get("dependencies"), "the lab front end must have no runtime npm deps"


@pytest.mark.parametrize("name, limit", [("dashboard.js", 108_000), ("sweep.js", 30_000)])
def test_widget_bundles_are_committed_and_small(name, limit):
    text = (ROOT / "everyo_lab" / "static" / name).read_text()
    assert text.startswith(f"// everyo-lab {__version__} | {name} | sources sha256:")
    # plotly.js comes from the kernel once per page; our own front end stays far smaller (the
    # dashboard: 107 KB with the why panel, 84 KB built by esbuild, 89 KB with the readable
    # merge of a zoomed-out chart; js/test/build.test.mjs keeps the same budget)
    assert len(text.encode()) < limit


@needs_node
def test_node_unit_tests_pass():
    result = _node("--test", "test/")
    assert result.returncode == 0, result.stdout + result.stderr


@needs_esbuild
def test_committed_build_is_not_stale():
    result = _node("build.mjs", "--check")
    assert result.returncode == 0, result.stdout + result.stderr
