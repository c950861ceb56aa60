"""``header_info``: the header facts of a run as a dict, read from its
:class:`~everyo_lab.views.report.Report` (kept for callers of the dict; renderers use the report).
"""

from __future__ import annotations

from everyo_lab.views.report import Report, as_report

__all__ = ["header_info"]


def header_info(run=None, *, report: Report | None = None) -> dict:
    """Header facts of a run (or of a prebuilt ``report``).

    Returns
    -------
    dict
        ``id``, ``label``, ``status``, ``error`` (``None`` unless failed), ``wall_ms``,
        ``events``, ``start_time`` (unix seconds), ``start_iso`` (local time, seconds),
        ``steps`` (the report's step summary or ``None``) and ``hot_spots``: the report's, up
        to three dicts ``name``, ``path``, ``kind``, ``label``, ``self_ms`` and ``share`` (self
        time / wall time, in [0, 1]), most self time first.
    """
    r = as_report(run, report)
    return {
        "id": r.run_id,
        "label": r.label,
        "status": r.status,
        "error": r.error,
        "wall_ms": r.wall_ms,
        "events": r.events,
        "start_time": r.start_time,
        "start_iso": r.start_iso,
        "steps": r.steps,
        "hot_spots": [dict(h) for h in r.hot_spots],
    }
