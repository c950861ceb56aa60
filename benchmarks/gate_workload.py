"""The regression gate benchmark's workload (``regression_gate.py``): ``work`` does ``UNITS``
matrix products of a 200x200 array, about 1 ms in all; ``GATE_WORK=2`` plants exactly twice the
work, ``GATE_WORK=1.2`` 20 % more (6 products for 5)."""

import os

import numpy as np

BASE_UNITS = 5
UNITS = round(BASE_UNITS * float(os.environ.get("GATE_WORK", "1")))
A = np.random.default_rng(0).random((200, 200))


def work() -> float:
    total = 0.0
    for _ in range(UNITS):
        total += float((A @ A).sum())
    return total
