"""The run picker's entries (one JSON-ready description per run in ``everyo.profiler.runs``), and
how a dashboard hears that a run left the registry (evicted by the memory budget, or removed)."""

from __future__ import annotations

import math


def run_entry(run) -> dict:
    """The JSON-ready description of one run the picker shows."""
    wall_ms, events = run.wall_ns / 1e6, int(run.num_events)
    return {
        "id": run.id,
        "label": run.label,
        "status": run.status,
        "start_time": _seconds(run.start_time),
        "wall_ms": wall_ms,
        "events": events,
        # the option's words, spelt as the report's header spells them (shown as they are)
        "text": f"{run.label} · {run.status} · {wall_ms:.3f} ms · {events:,} events",
    }


def _seconds(value) -> float:
    """A start time as finite seconds (0 for one that is not: a run built by hand), so that one
    run never breaks the picker's list, nor the JSON the browser parses."""
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return seconds if math.isfinite(seconds) else 0.0


def registry():
    from everyo.profiler import runs

    return runs


def removed_from(board_ref):
    """The registry's removal callback for the dashboard behind ``board_ref`` (held weakly, so
    the registry does not keep it alive)."""

    def callback(run, reason: str) -> None:
        board = board_ref()
        if board is not None:
            board._let_go(run, reason)

    return callback


def gone_text(label: str, reason: str) -> str:
    """Why a dashboard no longer shows run ``label`` (``reason``: the registry's)."""
    if reason == "evicted":
        return f"run {label!r} was evicted by the memory budget (everyo.profiler.runs.budget_bytes)"
    return f"run {label!r} was removed from everyo.profiler.runs"


def gone_bundle(label: str, reason: str) -> dict:
    """The static rendering of a dashboard whose run left the registry."""
    from html import escape

    text = f"everyo dashboard: {gone_text(label, reason)}"
    return {"text/plain": text, "text/html": f'<div class="everyo-static">{escape(text)}</div>'}
