"""What both magics share: their argument parser that reports bad options as a usage message
(never a traceback or ``sys.exit``), the option types, and the marker of a failed cell.
(``%%everyo_profile`` in :mod:`everyo_lab.magic`, ``%everyo_sweep`` in
:mod:`everyo_lab.sweep_magic`.)"""

from __future__ import annotations

import argparse

__all__ = [
    "CellFailed",
    "Parser",
    "UsageProblem",
    "non_negative_int",
    "positive_int",
    "threads_option",
    "whole_number",
]


class UsageProblem(Exception):
    """Bad magic options: reported as a usage message, never as a traceback."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print and sys.exit(2)
        raise UsageProblem(message)

    def print_help(self, file=None):  # --help: the magic prints it, once
        raise UsageProblem("")


# Type functions raise ArgumentTypeError with the whole reason: for a ValueError argparse would
# print its own words, "invalid positive_int value: 'abc'".


def whole_number(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < minimum:  # argparse puts "argument --top: " before this
        raise argparse.ArgumentTypeError(
            f"takes a whole number >= {minimum} (e.g. 10), got {text!r}"
        )
    return value


def positive_int(text: str) -> int:
    return whole_number(text, 1)


def non_negative_int(text: str) -> int:
    return whole_number(text, 0)


def threads_option(text: str):
    from everyo.errors import EveryOConfigError
    from everyo.thread_policy import parse_threads

    try:
        return parse_threads(text)
    except EveryOConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class CellFailed(Exception):
    """Marks the magic's cell as failed after the profiled cell raised.

    The profiled cell's own traceback has been shown already, so this one renders as a single
    line: Run All stops here as it would without the magic.
    """

    def _render_traceback_(self):
        return [f"everyo: {self}"]
