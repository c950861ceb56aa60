"""Callables for the CLI tests (`python -m everyo bench tests.bench.sample_workloads:fast_fn`).

``slow_fn`` is ``fast_fn`` with a planted 10x slowdown: both sleep, so their times do not depend
on how busy the CPUs are, and the ratio is far beyond any threshold the tests use.
"""

from __future__ import annotations

import time

NOT_CALLABLE = 42


def fast_fn() -> None:
    time.sleep(0.002)


def slow_fn() -> None:
    time.sleep(0.02)


def broken_fn() -> None:
    return 1 / 0


def shape_error_fn() -> None:
    import everyo as eo

    eo.zeros(3) + eo.zeros(4)  # an everyo error raised by the workload is still the workload's


def dies_fn() -> None:
    import os

    os._exit(7)  # a worker that dies without a word (a crash in a C extension, say)


def killed_fn() -> None:
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)  # the out-of-memory killer, say


def hangs_fn() -> None:
    time.sleep(60)


def one_blas_thread_fn() -> None:
    """Raises unless the process started with one BLAS thread in its environment."""
    import os

    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        raise RuntimeError(f"OPENBLAS_NUM_THREADS is {os.environ.get('OPENBLAS_NUM_THREADS')}")


def scaled_sleep_fn(seconds: float) -> None:
    time.sleep(seconds)
