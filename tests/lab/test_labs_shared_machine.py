"""On a shared machine: while another process runs multi-threaded BLAS (as another student's
kernel would), measurements say so, and labs 04 and 05 still pass their self-checks with a
sweep that has no unflagged cliff. The verdicts and flags are checked, never a wall-clock time.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "examples" / "solutions"
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
BURNER = """
import numpy as np
a = np.random.default_rng(0).random((512, 512), dtype=np.float32)
while True:
    a @ a
"""


@pytest.fixture(scope="module")
def blas_burner():
    """Another process doing 512x512 float32 matmuls on as many BLAS threads as cores."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    env["OPENBLAS_NUM_THREADS"] = str(os.cpu_count() or 2)
    proc = subprocess.Popen([sys.executable, "-c", BURNER], env=env)
    time.sleep(1.0)  # let its threads spin up
    assert proc.poll() is None, "the BLAS burner did not start"
    yield proc
    proc.terminate()
    proc.wait(timeout=10)


@pytest.mark.slow
@pytest.mark.real_machine
def test_a_measurement_beside_a_blas_burner_is_not_called_quiet(blas_burner):
    import numpy as np

    from everyo.bench import benchmark

    x = np.ones((256, 256), np.float32)
    for threads in (None, "auto", 1):
        result = benchmark(lambda: x @ x, warmup=5, repeat=200, threads=threads)
        state = result.machine_state
        assert state.verdict in ("busy", "contended"), (threads, state)
        assert "Machine: " in str(result)
    auto = benchmark(lambda: x @ x, warmup=5, repeat=200, threads="auto").machine_state
    assert auto.threads_applied == 1 or auto.blas_threads == 1  # auto leaves BLAS one thread
    assert auto.verdict == "busy"  # ...and so our threads have a core of their own


def _execute(path: Path, folder: Path, monkeypatch):
    monkeypatch.setenv("EVERYO_LAB_SIZE", "small")
    for name in THREAD_VARIABLES:  # the labs' own thread policy must do the work here
        monkeypatch.delenv(name, raising=False)
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()
    return nb


def _outputs(nb) -> str:
    return "\n".join(
        o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("name")
    )


def _largest_unflagged_cliff(rows: list[dict]) -> float:
    ok = sorted(
        (
            r
            for r in rows
            if r["status"] == "ok"
            and r["reliable"]
            and not r.get("off_trend")
            and r["verdict"] != "contended"
        ),
        key=lambda r: r["batch_size"],
    )
    ratios = [1.0]
    for a, b in zip(ok, ok[1:]):
        size = b["batch_size"] / a["batch_size"]  # a larger batch may gain up to its size ratio
        ratios.append(
            max(a["throughput"] / b["throughput"], b["throughput"] / a["throughput"] / size)
        )
    return max(ratios)


def _passed(text: str, number: int) -> str:
    return re.search(rf"^\u2713 check {number} passed: (.*)$", text, flags=re.M).group(1)


def _figures_agree(lab: str, text: str) -> None:
    """The passing messages state only figures the lab measured, and agree with each other
    (under load two measurements differ: a fixed ceiling or a count from the model's shapes
    printed beside them contradicted them)."""
    if lab == "04_data_pipeline":
        line = _passed(text, 6)
        m = re.search(
            r"takes ([\d.]+) ms instead of ([\d.]+) ms \(.*?\), ([\d.]+)x the samples/s", line
        )
        assert m, line
        fast, slow, speedup = map(float, m.groups())
        assert slow / fast == pytest.approx(speedup, rel=0.02), line
        assert "Machine: " in line, line
    else:
        line = _passed(text, 1)
        m = re.search(r"^(\d+) bytes per sample, (\d+) float32 values", line)
        assert m, line
        assert int(m.group(1)) / 4 == pytest.approx(int(m.group(2)), abs=1), line


@pytest.mark.slow
@pytest.mark.real_machine
@pytest.mark.parametrize("lab", ["04_data_pipeline", "05_batch_size"])
def test_labs_hold_beside_a_blas_burner(lab, blas_burner, tmp_path, monkeypatch):
    nb = _execute(SOLUTIONS / f"{lab}.ipynb", tmp_path, monkeypatch)
    text = _outputs(nb)
    assert "threads: threads='auto'" in text  # the lab's first output names its policy
    assert "Not yet" not in text
    results = json.loads((tmp_path / "results" / f"{lab}.json").read_text())
    assert results["checks"] and all(c["met"] for c in results["checks"])
    _figures_agree(lab, text)
    if lab == "05_batch_size":
        sweep = json.loads((tmp_path / "results" / "05-inference-sweep.json").read_text())
        assert _largest_unflagged_cliff(sweep["rows"]) <= 3.0, sweep["rows"]
        assert sweep["machine"]["verdict"] in ("busy", "contended")
