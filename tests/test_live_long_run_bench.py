"""The long-cell liveness benchmark's arithmetic (`benchmarks/live_long_run.py`), without a
browser: header changes counted per window of the cell."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def bench(benchmark_script):
    return benchmark_script("live_long_run")


def test_changes_are_counted_per_window_over_the_samples_with_a_dashboard(bench):
    samples = [{"t": 100 + 250 * i, "board": True, "header": f"h{i // 2}"} for i in range(16)]
    samples.insert(0, {"t": 50, "board": False, "header": "none yet"})
    rates = bench.window_rates(samples, t0=100.0, window_s=2.0)
    # samples at 0.0, 0.25, ... 3.75 s; the header changes every 0.5 s from 0.5 s on (the one
    # at 2.0 s, across the windows' border, counts in the second)
    assert rates == [(0.0, 2.0, 3, 2.0), (2.0, 4.0, 4, 1.75)]
    assert bench.window_rates([], t0=0.0, window_s=1.0) == []
