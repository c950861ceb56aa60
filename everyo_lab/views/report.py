"""The report: every number the dashboard, the static HTML, the text table and ``to_html`` show
of one run, computed once per refresh.

Renderers only format a :class:`Report`; none of them aggregates events. So the same row has the
same share, and the same hot spot the same label, in every output of a run. ``share`` has one
definition: inclusive time over the run's wall time, in [0, 1] (self time over wall time for a
hot spot).

>>> from everyo.profiler import profile, record_function
>>> with profile(label="report") as p:
...     with record_function("work"):
...         pass
>>> report = build_report(p.run)
>>> [row["label"] for row in report.rows], report.steps
(['work'], None)
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math

import numpy as np

from everyo.profiler.analysis import schema
from everyo.profiler.analysis.aggregates import share
from everyo.spelling import duration_text
from everyo_lab.views._batch import as_run
from everyo_lab.views.table.table_rows import (
    OVERLAP_WARNING,
    TableColumn,
    add_labels,
    check_group_by,
    columns_for,
    display_label,
    sort_rows,
    table_dict,
    wall_ns,
)

__all__ = [
    "HOT_SPOTS",
    "NO_EVENTS_NOTE",
    "NO_EVENTS_SAMPLED_NOTE",
    "Report",
    "as_report",
    "build_report",
    "display_label",
    "hot_spot_figures",
    "hot_spot_text",
    "live_report",
    "step_durations",
    "steps_text",
]

HOT_SPOTS = 3
"""How many hot spots a report names."""

NO_EVENTS_SAMPLED_NOTE = (
    "no events recorded: the stack samples show where the time went (the why panel's call "
    'tree); for a table too, wrap code in everyo.profiler.record_function("name")'
)

ONE_CALL_SHARE = 0.5
"""A hot spot was made by one call when that call took at least this share of its time..."""
ONE_CALL_RATIO = 10.0
"""...and this many times the mean of its other calls (a preemption, a page fault, a first
call): it is named as such, and ranked by its other calls."""

NO_EVENTS_NOTE = (
    "no events recorded: everyo records module calls, backward passes, optimizer steps and data "
    'loading; wrap other code in everyo.profiler.record_function("name"), or profile with '
    "--record-ops (record_ops=True) to record every engine op"
)


@dataclasses.dataclass
class Report:
    """What one refresh shows of a run: header facts, table rows, hot spots, steps and notes.

    Plain data (no numpy scalars, no NaN): :meth:`to_dict` is what the widget sends to the
    browser. Build one with :func:`build_report` (exact) or :func:`live_report` (while running).

    Attributes
    ----------
    rows : list of dict
        The table: the profiler's summary columns, ``share`` (inclusive time / wall time, in
        [0, 1]) and ``label`` (``"Conv2d [features.3]"``, see :func:`display_label`).
    hot_spots : list of dict
        Up to three groups by class name with the most self time: ``name``, ``path``, ``kind``,
        ``label``, ``self_ms``, ``share`` (self time / wall time).
    steps : dict or None
        :func:`everyo.profiler.analysis.run_analysis.step_summary` of the run's training steps.
    notes : list of str
        Things to tell the reader: no events, skipped warmup, a failure, the overlap warning.
    memory : dict or None
        :func:`~everyo_lab.views.memory.memory_view.memory_view` of a finished run recorded with
        ``profile_memory`` (live bytes over time, the peak and its module, top allocators).
    """

    run_id: str
    label: str
    status: str
    error: str | None
    wall_ms: float
    events: int
    start_iso: str
    live: bool
    group_by: str
    sort_by: str
    descending: bool
    top: int | None
    rows: list[dict]
    hot_spots: list[dict]
    steps: dict | None
    notes: list[str]
    start_time: float = 0.0
    memory: dict | None = None

    @property
    def columns(self) -> list[TableColumn]:
        """The table's columns (every renderer's); the first is the group's (``label``, or
        ``shapes`` when grouping by shape), the last the share."""
        return columns_for(self.rows, self.group_by)

    def to_dict(self) -> dict:
        """The report as JSON-ready plain data, with ``table``
        (:func:`~everyo_lab.views.table.table_rows.table_dict`: the columns, each cell's text, the
        share bars and the sort orders) and ``texts``: every word and number the widget shows."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["rows"] = [dict(r) for r in self.rows]
        out["hot_spots"] = [dict(h) for h in self.hot_spots]
        out["steps"] = None if self.steps is None else {**self.steps}
        out["notes"] = list(self.notes)
        out["memory"] = None if self.memory is None else {**self.memory}
        out["table"] = table_dict(self.rows, self.group_by, (self.sort_by, self.descending))
        out["texts"] = self.texts
        return out

    @property
    def texts(self) -> dict:
        """The header's and the steps box's words, spelt once for every renderer: ``wall``
        (``"12.345 ms"``), ``events`` (``"1,234 events"``), ``hot_spots`` (one
        :func:`hot_spot_text` each), ``steps`` (:func:`steps_text`) and ``step_durations``
        (the duration of each step the steps table lists: ``{"median": "3.1 ms", ...}``). The
        widget shows them as they are."""
        return {
            "wall": f"{self.wall_ms:.3f} ms",
            "events": f"{self.events:,} events",
            "hot_spots": [hot_spot_text(h) for h in self.hot_spots],
            "steps": steps_text(self.steps),
            "step_durations": step_durations(self.steps),
        }


def build_report(
    run_or_batch,
    *,
    group_by: str = "name",
    sort_by: str = "total_ms",
    descending: bool = True,
    top: int | None = None,
) -> Report:
    """The exact report of a run (or an event batch), from one consistent snapshot.

    One ``summarize`` gives the rows; the hot spots come from the same rows when grouping by
    name (else from a second summary, by name). ``sort_by`` is any column of the rows; ties
    keep label order.

    Raises
    ------
    EveryOProfilerError
        For an unknown ``group_by`` or a ``sort_by`` column the rows lack. Grouping by shape
        a run recorded without shapes gives no rows and a note that says so
        (``schema.SHAPES_NOT_RECORDED``), not rows grouped some other way.
    """
    from everyo.profiler.analysis import (
        run_analysis as analysis,  # lazily: views import fast and stay pure
    )

    check_group_by(group_by)
    run = as_run(run_or_batch)
    source = run_or_batch if run is None else frozen(run)
    wall = wall_ns(source)
    batch = source.snapshot() if run is not None else source
    if group_by == "shape" and _shapes_missing(run, len(batch), batch.shape_id is not None):
        return _report_without_shapes(run, source, wall, len(batch), (sort_by, descending, top))
    summary = analysis.summarize(source, group_by=group_by)
    rows = sort_rows(_rows(summary), sort_by, descending=descending)
    by_name = rows if group_by == "name" else _rows(analysis.summarize(source))
    report = _report(
        None if run is None else source,
        wall=wall,
        events=len(batch),
        live=False,
        options=(group_by, sort_by, descending, top),
        rows=rows,
        by_name=by_name,
        steps=analysis.step_summary(*analysis.step_bounds(source)),
        notes=list(summary.notes),
    )
    if run is not None and report.status != "running":  # counters are attached at the stop
        from everyo_lab.views.memory.memory_view import memory_view

        report.memory = memory_view(source)
    return report


def resorted(report: Report, sort_by: str, descending: bool) -> Report | None:
    """``report`` with its rows in another order (a column-header click), without summarising
    the run again; ``None`` when the rows it holds are not all the rows (``top`` cut them) or
    lack the column (then build the report anew)."""
    rows = report.rows
    if report.top is not None or (rows and not any(sort_by in r for r in rows)):
        return None
    return dataclasses.replace(
        report,
        rows=sort_rows(rows, sort_by, descending=descending),
        sort_by=sort_by,
        descending=bool(descending),
        notes=list(report.notes),
    )


def live_report(
    run,
    state,
    *,
    steps=None,
    step_source: str = "",
    group_by: str = "name",
    sort_by: str = "total_ms",
    descending: bool = True,
    top: int | None = None,
) -> Report:
    """The report of a running run, from a :class:`~everyo_lab.views.live_session.LiveState`.

    Rows and hot spots come from the events fed to ``state`` (no median or standard deviation
    while live). Steps come from ``steps``, an
    :class:`~everyo.profiler.analysis.step_stats.StepStats`
    kept up to date as the run records by the step rule (``LiveSession`` holds it: the summary
    then does not go over every step again), and ``step_source`` says where they came from
    (:func:`~everyo.profiler.analysis.step_stats.step_ends`); ``None``: no steps. Raises as
    :func:`build_report`.
    """
    from everyo.profiler.analysis import (
        run_analysis as analysis,  # lazily: views import fast and stay pure
    )

    check_group_by(group_by)
    wall = int(run.wall_ns)
    notes = analysis.run_notes(run)
    if group_by == "shape" and _shapes_missing(run, int(state.events), state.table.has_shapes):
        table = []  # say so (a note) rather than group by something else
        notes.append(schema.SHAPES_NOT_RECORDED)
    else:
        table = state.table_rows(
            group_by=group_by, sort_by=sort_by, descending=descending, wall_ns=wall
        )
    rows = _rows(table)
    by_name = rows if group_by == "name" else _rows(state.table_rows(wall_ns=wall))
    return _report(
        run,
        wall=wall,
        events=int(state.events),
        live=True,
        options=(group_by, sort_by, descending, top),
        rows=rows,
        by_name=by_name,
        steps=steps.summary(step_source) if steps is not None else None,
        notes=notes,
    )


def as_report(source, report: Report | None = None, **options) -> Report:
    """``report`` when given, ``source`` when it is a Report, else ``build_report(source,
    **options)``: how each renderer accepts a run, a batch or a prebuilt report."""
    if report is not None:
        return report
    if isinstance(source, Report):
        return source
    return build_report(source, **options)


def steps_text(steps: dict | None) -> str:
    """``"412 steps (optimizer): median 3.1 ms, p95 4.0 ms, slowest #17 9.8 ms"`` ("" for none).

    Step numbers count from 0, as the report's ``index``.
    """
    if not steps:
        return ""
    count = steps["count"]
    slow = steps["slowest"]
    return (
        f"{count:,} step{'s' if count != 1 else ''} ({steps['source']}): "
        f"median {_ms(steps['median_ms'])}, p95 {_ms(steps['p95_ms'])}, "
        f"slowest #{slow['index']} {_ms(slow['dur_ms'])}"
    )


def step_durations(steps: dict | None) -> dict:
    """The durations of the median, p95, slowest and fastest step as :func:`steps_text` spells
    them (``{}`` for none)."""
    return {
        what: _ms(steps[what]["dur_ms"])
        for what in ("median", "p95", "slowest", "fastest")
        if steps and isinstance(steps.get(what), dict) and "dur_ms" in steps[what]
    }


def hot_spot_text(spot: dict) -> str:
    """``"Conv2d [features.3] 12.345 ms (31.2%)"``."""
    return f"{spot['label']} {hot_spot_figures(spot)}"


def hot_spot_figures(spot: dict) -> str:
    """A hot spot's self time and share: ``"12.345 ms (31.2%)"`` (the table's spelling of a
    time, the glossary's of a share), and when one call made most of it, that call and the
    others' mean: ``"1.484 ms (42.1%; one call took 1.271 ms, the other 19 0.011 ms each)"``."""
    text = f"{spot['self_ms']:.3f} ms ({spot['share']:.1%}"
    one = spot.get("one_call")
    if not one:
        return text + ")"
    others = one["calls"] - 1
    return (
        f"{text}; one call took {one['ms']:.3f} ms, the other {others:,d} "
        f"{one['others_ms']:.3f} ms each)"
    )


def _ms(ms: float) -> str:
    """A step time in the glossary's duration spelling (``spelling.duration_text``): the same
    text the hover of that step's events gives."""
    return duration_text(round(ms * 1e6))


# -- helpers ---------------------------------------------------------------------------------
def frozen(run) -> _Frozen:
    """``run`` read once (its snapshot, status, wall time, step marks): every view of one
    refresh given it (the report, the icicle, the comparison, the why panel) reads that one
    snapshot instead of taking its own. A frozen run is returned as it is."""
    return run if isinstance(run, _Frozen) else _Frozen(run)


def unfrozen(run):
    """The run a :func:`frozen` one was read from (anything else as it is): what a view that
    outlives the refresh keeps, so the snapshot goes with the refresh."""
    return run._run if isinstance(run, _Frozen) else run


class _Frozen:
    """A run read once: the status, events, wall time and step marks every number of one report
    comes from, even while the run is still recording (read in that order, so a completed status
    means a complete snapshot and the wall time covers every event)."""

    def __init__(self, run):
        self._run = run
        self.id, self.label = run.id, run.label
        self.status, self.error = run.status, run.error
        self.start_time = getattr(run, "start_time", 0.0)
        self.options = dict(getattr(run, "options", None) or {})
        self.skipped = getattr(run, "skipped", 0)
        self._batch = run.snapshot()
        self.wall_ns = int(run.wall_ns)
        self.step_ns = list(getattr(run, "step_ns", None) or [])

    def snapshot(self):
        return self._batch

    def __getattr__(self, name):  # anything else a view may read, from the run itself
        return getattr(self._run, name)


def _shapes_missing(run, events: int, has_shapes: bool) -> bool:
    """Whether a run has no input shapes to group by: recorded without them, or events came
    and none carried a shape column (a file from another tool)."""
    options = getattr(run, "options", None) or {}
    return options.get("record_shapes") is False or (events > 0 and not has_shapes)


def _report_without_shapes(run, source, wall, events, options) -> Report:
    """The report of a run grouped by shape that has none: no rows, a note that says what to
    do, and everything else (hot spots, steps) as usual."""
    from everyo.profiler.analysis import run_analysis as analysis

    sort_by, descending, top = options
    summary = analysis.summarize(source)
    return _report(
        None if run is None else source,
        wall=wall,
        events=events,
        live=False,
        options=("shape", sort_by, descending, top),
        rows=[],
        by_name=_rows(summary),
        steps=analysis.step_summary(*analysis.step_bounds(source)),
        notes=[*summary.notes, schema.SHAPES_NOT_RECORDED],
    )


def _start(run) -> tuple[float, str]:
    """The run's start (Unix seconds) and its local date and time; a start no date can show
    (text, NaN, the year 10000: a run built by hand) is 0 and "unknown", never an error that
    would break every view listing the run."""
    if run is None:
        return 0.0, ""
    try:
        start = float(getattr(run, "start_time", 0.0) or 0.0)
        iso = _dt.datetime.fromtimestamp(start).isoformat(sep=" ", timespec="seconds")
    except (TypeError, ValueError, OverflowError, OSError):
        return 0.0, "unknown"
    return start, iso


def _report(run, *, wall, events, live, options, rows, by_name, steps, notes) -> Report:
    group_by, sort_by, descending, top = options
    if top is not None:
        rows = rows[: max(0, int(top))]
    if events == 0 and getattr(run, "status", "completed") != "running":
        sampled = getattr(run, "samples", None) is not None and len(run.samples) > 0
        notes.insert(0, NO_EVENTS_SAMPLED_NOTE if sampled else NO_EVENTS_NOTE)  # (may still come)
    if rows:
        notes.append(OVERLAP_WARNING)
    start, start_iso = _start(run)
    return Report(
        run_id=str(getattr(run, "id", "") or ""),
        label=str(getattr(run, "label", "") or ""),
        status=str(getattr(run, "status", "completed")),
        error=getattr(run, "error", None),
        wall_ms=wall / 1e6,
        events=int(events),
        start_iso=start_iso,
        live=bool(live),
        group_by=group_by,
        sort_by=sort_by,
        descending=bool(descending),
        top=None if top is None else int(top),
        rows=rows,
        hot_spots=_hot_spots(by_name, wall),
        steps=steps,
        notes=notes,
        start_time=start,
    )


def _rows(summary) -> list[dict]:
    """Plain copies of summary rows (with their ``share``), each with its ``label``."""
    rows = [{k: _plain(v) for k, v in r.items()} for r in summary]
    add_labels(rows)
    return rows


def _hot_spots(by_name: list[dict], wall: int) -> list[dict]:
    """The rows with the most self time, ranked by it without the excess of a lone slow call
    (one call of 1.3 ms among calls of 0.011 ms does not make its module the place to look)."""
    usual = {id(r): _usual_self_ms(r) for r in by_name}
    ranked = sorted(by_name, key=lambda r: (-usual[id(r)], str(r["label"])))[:HOT_SPOTS]
    return [
        {
            "name": str(r["name"]),
            "path": str(r.get("path") or ""),
            "kind": str(r.get("kind", "")),
            "label": r["label"],
            "self_ms": float(r.get("self_ms") or 0.0),
            "share": share(float(r.get("self_ms") or 0.0) * 1e6, wall),
            "one_call": _one_call(r),
        }
        for r in ranked
    ]


def _one_call(row: dict) -> dict | None:
    """``{"ms", "others_ms", "calls"}`` when one call made the row's time
    (:data:`ONE_CALL_SHARE`, :data:`ONE_CALL_RATIO`), else ``None``."""
    calls, total, top = int(row.get("calls") or 0), row.get("total_ms"), row.get("max_ms")
    if calls < 2 or not total or not top or total <= 0:
        return None
    others = max(total - top, 0.0) / (calls - 1)
    if top < ONE_CALL_SHARE * total or top < ONE_CALL_RATIO * others:
        return None
    return {"ms": float(top), "others_ms": float(others), "calls": calls}


def _usual_self_ms(row: dict) -> float:
    """Self time as if the lone slow call had taken as long as the others (the excess taken off
    in proportion to self time within the row's time)."""
    own = float(row.get("self_ms") or 0.0)
    one = _one_call(row)
    if one is None:
        return own
    excess = one["ms"] - one["others_ms"]
    return max(own * (1.0 - excess / float(row["total_ms"])), 0.0)


def _plain(value):
    """A JSON-ready scalar: numpy scalars as Python ones, NaN and infinities as ``None``."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
