"""The long-training benchmark's arithmetic (`benchmarks/long_training.py`) on a few steps: what
it counts as a subnormal probability, and that its two copies train alike."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(scope="module")
def bench(benchmark_script):
    folder = str(Path(__file__).resolve().parents[1] / "benchmarks")
    sys.path.insert(0, folder)  # the script imports its siblings (suite, engine_step)
    try:
        yield benchmark_script("long_training")
    finally:
        sys.path.remove(folder)


def test_subnormal_probabilities_are_counted_below_the_smallest_normal(bench):
    # exp(-95) = 5.5e-42 is subnormal in float32, exp(-200) underflows to zero, exp(-10) is normal
    logits = np.array([[0.0, -95.0, -200.0, -10.0], [0.0, 0.0, -90.0, -95.0]], np.float32)
    assert bench.subnormal_probabilities(logits) == 3


def test_the_two_copies_alternate_blocks_and_train_alike(bench):
    rows = bench.long_run(4, "adam", block=2)
    assert [r["steps"] for r in rows] == [2, 4]
    assert all(r["loss_on"] == r["loss_off"] and r["on"] > 0 and r["off"] > 0 for r in rows)
    assert all(r["subnormal_p_off"] == 0 for r in rows)  # a fresh model is far from fitting
