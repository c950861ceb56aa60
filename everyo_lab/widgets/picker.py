"""The run picker's entries: one JSON-ready description per run in ``everyo.profiler.runs``."""

from __future__ import annotations

import math


def run_entry(run) -> dict:
    """The JSON-ready description of one run the picker shows."""
    return {
        "id": run.id,
        "label": run.label,
        "status": run.status,
        "start_time": _seconds(run.start_time),
        "wall_ms": run.wall_ns / 1e6,
        "events": int(run.num_events),
    }


def _seconds(value) -> float:
    """A start time as finite seconds (0 for one that is not: a run built by hand), so that one
    run never breaks the picker's list, nor the JSON the browser parses."""
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return seconds if math.isfinite(seconds) else 0.0
