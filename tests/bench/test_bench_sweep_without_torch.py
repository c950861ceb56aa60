"""Sweeps behave as before where torch cannot be imported (run in a subprocess with torch
hidden): an everyo model's points are traced with tracemalloc and labelled "host"."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CODE = textwrap.dedent(
    """
    import sys
    sys.modules["torch"] = None  # "import torch" raises ImportError, as with torch absent
    import everyo as eo
    from everyo.bench import sweep_batch_sizes

    model = eo.Sequential(eo.Linear(8, 4, seed=0))
    result = sweep_batch_sizes(
        model, lambda n: eo.ones(n, 8), [1, 4], warmup=0, repeat=2, progress=False,
        record_environment=False, recheck=False,
    )
    assert [r.status for r in result.rows] == ["ok", "ok"], result
    assert [r.memory_source for r in result.rows] == ["tracemalloc"] * 2
    assert result.memory_label == "host"
    assert sys.modules["torch"] is None
    print("ok")
    """
)


def test_a_sweep_without_torch_traces_host_memory():
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
