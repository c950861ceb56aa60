"""Support for the teaching labs in ``examples/``: lab size, self-checks, the results file.

A lab notebook starts with::

    from everyo_lab.labs import start_lab
    lab = start_lab("03_vectorisation", "Reach a 10x speed-up by vectorising a row loop")

and then uses ``lab.pick(small=..., full=...)`` for its sizes, ``lab.check(condition, hint)``
after each exercise and ``lab.record(...)`` in its last cell.

- The size comes from one setting, the ``EVERYO_LAB_SIZE`` environment variable: ``full``
  (the default, for class) or ``small`` (what CI runs).
- A check that passes prints one line. One that does not raises :class:`LabCheckError`, which
  a notebook shows as a single "Not yet" line (no traceback): *Run All* stops at the first
  exercise still to do, and an instructor runs a student's notebook to grade it.
- ``record`` writes ``results/<lab>.json`` next to the notebook: the figures, the checks passed
  and the environment record of ``everyo.bench.environment()``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from everyo.errors import EveryOConfigError

__all__ = ["Lab", "LabCheckError", "lab_size", "start_lab", "SIZES", "SIZE_VARIABLE"]

SIZE_VARIABLE = "EVERYO_LAB_SIZE"
SIZES = ("small", "full")


class LabCheckError(AssertionError):
    """A lab's self-check is not met yet; the message says what to change."""


def lab_size() -> str:
    """``EVERYO_LAB_SIZE``: ``"full"`` (default) or ``"small"``."""
    value = os.environ.get(SIZE_VARIABLE, "full").strip().lower() or "full"
    if value not in SIZES:
        raise EveryOConfigError(
            f"{SIZE_VARIABLE}={value!r} is not a lab size; use 'small' (quick, as CI runs the "
            f"labs) or 'full' (the class size), or unset it for 'full'"
        )
    return value


class Lab:
    """One lab's state: its name, size, the checks passed so far and when it started."""

    def __init__(self, name: str, goal: str, size: str | None = None) -> None:
        self.name = name
        self.goal = goal
        self.size = lab_size() if size is None else size
        if self.size not in SIZES:
            raise EveryOConfigError(f"size must be one of {SIZES}, got {self.size!r}")
        self.passed: list[str] = []
        self.started = time.time()

    def pick(self, *, small: Any, full: Any) -> Any:
        """The value for this lab size: ``small`` in CI, ``full`` in class."""
        return small if self.size == "small" else full

    def check(self, condition: Any, hint: str, *, passed: str | None = None) -> None:
        """A self-check: print ``passed`` (or the hint) when ``condition`` holds, else raise
        :class:`LabCheckError` with ``hint``, which should say what to change."""
        __tracebackhide__ = True  # pytest and IPython: the check's frame is not the story
        number = len(self.passed) + 1
        if not condition:
            raise LabCheckError(f"Not yet (check {number} of {self.name}): {hint}")
        self.passed.append(passed or hint)
        print(f"\u2713 check {number} passed: {passed or hint}")

    def record(self, folder: str | os.PathLike = "results", **figures: Any) -> Path:
        """Write ``folder/<lab>.json``: the figures given, the checks passed, the size, the
        time the lab took and the environment record; returns the path."""
        from everyo.bench import environment
        from everyo.bench.result import write_json

        data = {
            "format": "everyo.lab-result",
            "lab": self.name,
            "goal": self.goal,
            "size": self.size,
            "checks_passed": list(self.passed),
            "results": figures,
            "elapsed_s": round(time.time() - self.started, 3),
            "environment": environment(),
        }
        path = write_json(data, Path(folder) / f"{self.name}.json")
        print(f"wrote {path}: {len(self.passed)} checks passed")
        return path

    def __repr__(self) -> str:
        return f"Lab({self.name!r}, size={self.size!r}, checks passed={len(self.passed)})"


def start_lab(name: str, goal: str, *, size: str | None = None) -> Lab:
    """Start a lab: print its goal and size and, inside IPython, show a failed self-check as
    one "Not yet" line instead of a traceback."""
    lab = Lab(name, goal, size)
    _show_checks_briefly()
    print(f"Lab {name}: {goal}")
    print(f"size: {lab.size} (set {SIZE_VARIABLE}=small or full before starting Jupyter)")
    return lab


def _show_checks_briefly() -> None:
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: an ordinary AssertionError traceback
        return
    shell = get_ipython()
    if shell is None:
        return

    def brief(shell, etype, value, tb, tb_offset=None):
        return [f"\x1b[31m\u2717 {value}\x1b[0m"]

    shell.set_custom_exc((LabCheckError,), brief)
