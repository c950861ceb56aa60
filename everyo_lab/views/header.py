"""The dashboard header: what run this is, how it ended, and where its time went."""

from __future__ import annotations

import datetime as _dt

from everyo_lab.views._batch import as_batch

__all__ = ["header_info"]


def header_info(run) -> dict:
    """Header facts of a run.

    Returns
    -------
    dict
        ``id``, ``label``, ``status``, ``error`` (``None`` unless failed), ``wall_ms``,
        ``events``, ``start_time`` (unix seconds), ``start_iso`` (local time, seconds) and
        ``hot_spots``: up to three dicts ``name``, ``path``, ``self_ms``, ``pct`` (percent of
        the wall time), largest self time first.
    """
    from everyo.profiler import analysis  # lazily: views import fast and stay pure

    wall_ms = int(run.wall_ns) / 1e6
    start = float(getattr(run, "start_time", 0.0) or 0.0)
    events = int(getattr(run, "num_events", None) or len(as_batch(run)))
    hot = [] if events == 0 else [_hot_spot(h, wall_ms) for h in analysis.top_self(run, k=3)]
    return {
        "id": str(getattr(run, "id", "")),
        "label": str(getattr(run, "label", "")),
        "status": str(getattr(run, "status", "completed")),
        "error": getattr(run, "error", None),
        "wall_ms": wall_ms,
        "events": events,
        "start_time": start,
        "start_iso": _dt.datetime.fromtimestamp(start).isoformat(sep=" ", timespec="seconds"),
        "hot_spots": hot,
    }


def _hot_spot(item: dict, wall_ms: float) -> dict:
    # The summary's own "pct" is the inclusive share; a hot spot's share is of its self time.
    self_ms = float(item.get("self_ms", 0.0))
    pct = 100.0 * self_ms / wall_ms if wall_ms > 0 else 0.0
    return {
        "name": str(item.get("name", "")),
        "path": str(item.get("path", "") or ""),
        "self_ms": self_ms,
        "pct": float(pct),
    }
