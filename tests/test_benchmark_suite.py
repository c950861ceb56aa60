"""The benchmark suite (`benchmarks/run.py`) runs and writes its tables, so it never rots.

Only the structure is asserted (every part's table, the environment record, a verdict per
target, the kept sections): the figures of a `--quick` run on a shared machine mean nothing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("ops", "steps", "conv", "profiler", "peers", "growth", "torch")


def _run(*args, timeout=600):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _blocks(text):
    return dict(re.findall(r"<!-- suite:(\w+) -->\n(.*?)\n<!-- /suite:\1 -->", text, re.S))


def test_quick_suite_writes_every_table_and_keeps_the_rest(tmp_path):
    out = tmp_path / "RESULTS.md"
    res = _run("--quick", "--out", str(out))
    assert res.returncode == 0, res.stderr[-3000:]
    text = out.read_text()
    blocks = _blocks(text)
    assert set(blocks) == {"environment", *PARTS}
    env = blocks["environment"]
    assert "profiler recorder: **" in env and "NumPy" in env and "peers:" in env
    for name in PARTS:
        body = blocks[name]
        assert "QUICK smoke run" in body, name
        assert "This part failed" not in body, body
        header = next(line for line in body.splitlines() if line.startswith("| "))
        rows = [line for line in body.splitlines() if line.startswith("| ")][2:]
        assert rows and all(r.count("|") == header.count("|") for r in rows), name
    for name in ("ops", "steps", "profiler", "growth", "torch"):
        assert re.search(r": (met|\*\*missed\*\*)", blocks[name]), name
    assert "`a + b` building a graph" in blocks["ops"] and "MLP 32×64-64-10, SGD" in blocks["steps"]
    assert "cost when off" in blocks["peers"]
    # what the suite does not measure stays (browser figures, hand-measured sections)
    kept = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    tail = kept[kept.index("<!-- suite:kept -->") :]
    assert text.rstrip().endswith(tail.rstrip())

    # one part again: the others keep their blocks
    again = _run("--quick", "--only", "growth", "--out", str(out))
    assert again.returncode == 0, again.stderr[-3000:]
    after = _blocks(out.read_text())
    assert all(after[n] == blocks[n] for n in PARTS if n != "growth")
    assert "sections regenerated: growth" in after["environment"]


def test_unknown_part_is_refused(tmp_path):
    res = _run("--only", "nope", "--out", str(tmp_path / "R.md"), timeout=120)
    assert res.returncode == 2 and "unknown part(s) nope" in res.stderr
    assert not (tmp_path / "R.md").exists()
