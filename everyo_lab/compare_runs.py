"""``everyo_lab.compare(a, b)``: run B against run A in one widget, before and after.

Runs come as ``Run`` objects (or profilers), as labels or ids in ``everyo.profiler.runs``, or as
files written by everyo's exports (raw JSON or Chrome trace, ``.gz`` too), read with
:func:`everyo.profiler.load`.
"""

from __future__ import annotations

import os
from pathlib import Path

from everyo.errors import EveryOProfilerError

__all__ = ["compare", "resolve_run"]


def compare(a, b, *, group_by: str = "name", theme: str = "light"):
    """Compare run ``b`` (after a change) with run ``a`` (before it).

    Shows a header with both wall times and the speed-up, the two flame charts stacked on one
    shared time axis (zooming together), and a diff table per group (calls, total and self time
    per call, ratio, change of total time), biggest change first, each row with a verdict:
    "faster", "slower" or "within noise" by :func:`everyo.bench.compare`'s noise-aware rule on
    the group's per-call durations, or "too little data" under three calls a side.

    Parameters
    ----------
    a, b
        A ``Run`` or ``Profiler``, a label or id in ``everyo.profiler.runs``, or the path of a
        file written by ``export_json`` / ``export_chrome_trace`` (``.gz`` too).
    group_by
        ``"name"``, ``"path"`` or ``"shape"``: how the diff table groups events.

    Returns
    -------
    ComparisonBoard
        The comparison widget (a ``Dashboard``); its static rendering stays in a saved
        notebook, and
        ``everyo_lab.to_html(widget, "compare.html")`` writes it as a page.

    Raises
    ------
    EveryOProfilerError
        For a label that is not in ``everyo.profiler.runs`` and no file of that name.
    EveryOExportError
        For a file that is not an everyo export.

    Examples
    --------
    >>> import everyo_lab  # doctest: +SKIP
    >>> everyo_lab.compare("baseline", "fused")  # doctest: +SKIP
    """
    from everyo_lab.widgets.compare_board import ComparisonBoard

    run_a, run_b = resolve_run(a, "a"), resolve_run(b, "b")
    return ComparisonBoard(run_b, run_a, group_by=group_by, theme=theme)


def resolve_run(source, name: str = "run"):
    """A ``Run`` from a run, a profiler, a label or id in ``everyo.profiler.runs``, or a path."""
    if hasattr(source, "snapshot") and hasattr(source, "wall_ns"):
        return source
    run = getattr(source, "run", None)  # a Profiler
    if run is not None and hasattr(run, "snapshot"):
        return run
    if isinstance(source, (str, os.PathLike)):
        from everyo.profiler import load, runs

        if isinstance(source, str) and source in runs:
            return runs[source]
        if Path(source).is_file():
            return load(source)
        held = ", ".join(repr(r.label) for r in runs) or "none"
        raise EveryOProfilerError(
            f"{name}={str(source)!r} is neither a run in everyo.profiler.runs (labels held: "
            f"{held}) nor an exported file: profile it first (%%everyo_profile --label NAME) or "
            "pass the path of a file written by export_json / export_chrome_trace"
        )
    raise EveryOProfilerError(
        f"{name}: expected a Run, a Profiler, a run label or a file path, got "
        f"{type(source).__name__}"
    )
