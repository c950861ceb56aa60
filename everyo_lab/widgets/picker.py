"""The run picker's entries: one JSON-ready description per run in ``everyo.profiler.runs``."""

from __future__ import annotations


def run_entry(run) -> dict:
    """The JSON-ready description of one run the picker shows."""
    return {
        "id": run.id,
        "label": run.label,
        "status": run.status,
        "start_time": float(run.start_time),
        "wall_ms": run.wall_ns / 1e6,
        "events": int(run.num_events),
    }
