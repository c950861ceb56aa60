"""everyo.bench stays light: pandas, tqdm and CuPy load only when a call needs them."""

from __future__ import annotations

import subprocess
import sys


def test_importing_bench_loads_no_heavy_or_optional_packages():
    code = (
        "import sys, everyo, everyo.bench as b; "
        "assert b.benchmark and b.sweep_batch_sizes; "
        "print(sorted(m for m in ('pandas', 'tqdm', 'cupy', 'IPython', 'plotly', 'ipywidgets') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_bench_is_reachable_from_everyo():
    import everyo as eo

    assert eo.bench.benchmark is __import__("everyo.bench", fromlist=["x"]).benchmark
