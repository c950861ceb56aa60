"""The batch-size sweep as one report: points, latency band, failed-point marks, recommendation,
progress and table rows, built once per update and rendered by the widget, the static HTML and
the text alike (as :class:`~everyo_lab.views.report.Report` is for a profile).

Pure: rows of an :class:`everyo.bench.SweepResult` (or the result itself) in, plain data out.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from everyo.bench.sweep_point import memory_label
from everyo.bench.sweep_result import WITHIN, SweepResult
from everyo.machine_state import MachineState
from everyo.spelling import NO_VALUE, seconds_text

__all__ = [
    "STATUSES",
    "SweepReport",
    "build_sweep_report",
    "failed_marks",
    "progress_text",
    "recommendation",
    "sweep_points",
]

STATUSES = ("ready", "running", "completed", "stopped", "failed")
"""ready: not started; running; completed: every point measured; stopped: by the Stop button,
``stop()`` or an interrupt, finished points kept; failed: the sweep itself raised."""


@dataclass
class SweepReport:
    """Everything a sweep view shows, as plain data (``to_dict()`` is JSON).

    ``points``: columns of the measured points (``batch_size``, ``throughput``, ``median_ms``,
    ``p5_ms``, ``p95_ms``, ``mean_ms``, ``memory``), sorted by batch size. ``marks``: one per
    point that was not measured (out of memory, error, skipped) with its message.
    ``recommendation``: ``recommended``, ``largest_fit``, ``best`` batch sizes and ``text``, the
    sentence that explains them. ``progress``: the point being measured (``index``, ``total``,
    ``batch_size``) while running, else ``None``. ``rows``: every point for the table.
    """

    title: str
    mode: str
    status: str
    points: dict
    marks: list[dict]
    recommendation: dict
    rows: list[dict]
    memory_kind: str = "host"
    progress: dict | None = None
    error: str = ""
    within: float = WITHIN
    memory_limit: int | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The fields, plus the table as the widget shows it: ``headers`` and ``cells`` (each
        row's texts in :data:`TABLE_COLUMNS` order, as the static table and the text have)."""
        out = asdict(self)
        out["headers"] = [header for _, header in TABLE_COLUMNS]
        out["cells"] = [table_cells(row, self.recommendation) for row in self.rows]
        return out

    @property
    def progress_line(self) -> str:
        """ "point 4 of 9, batch 64, 2.1 s" while running, else a summary of the status."""
        if self.progress is not None and self.status == "running":
            return progress_text(**self.progress)
        done = len(self.rows)
        if self.status == "ready":
            return "not started"
        if self.status == "stopped":
            return f"stopped after {_points(done)}; the other sizes were not measured"
        if self.status == "failed":
            return f"failed after {_points(done)}: {self.error}"
        return f"{_points(done)} measured"


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def sweep_points(rows) -> dict:
    """Columns of the points that ran (``status == "ok"``), sorted by batch size.

    ``memory`` is the GPU bytes the call needed when the sweep ran on a GPU (``gpu_memory``),
    else the host bytes (``peak_memory``). ``p5_ms`` / ``p95_ms`` bound the latency band
    (``None`` where a row lacks them: the band then collapses to the median).
    """
    ok = sorted((r for r in _rows_of(rows) if r.status == "ok"), key=lambda r: r.batch_size)
    on_gpu = any(r.gpu_memory is not None for r in ok)

    def band(r, name):
        value = getattr(r, name, None)
        return r.median_ms if value is None else value

    return {
        "batch_size": [r.batch_size for r in ok],
        "flag": [getattr(r, "flag", None) for r in ok],
        "note": [_point_note(r) for r in ok],
        "verdict": [getattr(r, "verdict", None) for r in ok],
        "throughput": [r.throughput for r in ok],
        "median_ms": [r.median_ms for r in ok],
        "mean_ms": [r.mean_ms for r in ok],
        "p5_ms": [band(r, "p5_ms") for r in ok],
        "p95_ms": [band(r, "p95_ms") for r in ok],
        "memory": [(r.gpu_memory if on_gpu else r.peak_memory) for r in ok],
    }


def failed_marks(rows) -> list[dict]:
    """One mark per point that did not run: ``batch_size``, ``status`` (``oom``, ``error``,
    ``skipped``), ``label`` (what the axis shows: ``OOM``, ``error``, ``skipped``) and
    ``message`` (why: the exception, or the size that ran out of memory first)."""
    labels = {"oom": "OOM", "error": "error", "skipped": "skipped"}
    return [
        {
            "batch_size": r.batch_size,
            "status": r.status,
            "label": labels.get(r.status, r.status),
            "message": r.message or labels.get(r.status, r.status),
        }
        for r in sorted(_rows_of(rows), key=lambda r: r.batch_size)
        if r.status != "ok"
    ]


def recommendation(rows, *, within: float = WITHIN, final: bool = True) -> dict:
    """The recommended batch (smallest within ``within`` of the best throughput), the largest
    that fits and the best, and one sentence that explains them. ``final=False`` (a sweep still
    running or stopped) says the recommendation is among the points measured so far."""
    result = SweepResult(rows=list(_rows_of(rows)), within=within)
    best, rec, big = result.best, result.recommended, result.largest_fit
    out = {
        "recommended": rec.batch_size if rec else None,
        "largest_fit": big.batch_size if big else None,
        "best": best.batch_size if best else None,
        "text": "",
    }
    flagged = result.flagged_rows
    left_out = ", ".join(f"{r.batch_size} ({r.flag})" for r in flagged)
    if rec is None:
        if flagged:
            out["text"] = (
                f"No batch size is recommended: no point can be trusted ({left_out}). Rerun "
                "with threads='auto' (or 1), or when the machine is quiet."
            )
        elif result.rows:
            out["text"] = (
                "No batch size ran, so there is nothing to recommend: see the marked points."
            )
        else:
            out["text"] = "No point measured yet."
        return out
    so_far = "" if final else " so far"
    share = f"{within:.0%}".replace("%", " %")
    if rec is best:
        why = f"it has the best throughput{so_far} ({_rate(best.throughput)} samples/s)"
    else:
        why = (
            f"it is the smallest within {share} of the best throughput{so_far} "
            f"({_rate(rec.throughput)} vs {_rate(best.throughput)} samples/s at "
            f"{best.batch_size}), "
            "so it needs less memory and has lower latency"
        )
    fits = (
        f"; {big.batch_size} is the largest that fits"
        if big.batch_size != rec.batch_size
        else "; it is also the largest that fits"
    )
    out["text"] = f"Batch size {rec.batch_size} is recommended: {why}{fits}."
    if flagged:
        out["text"] += f" Not considered: {left_out}."
    if result.rivals:
        note = result.machine_note
        out["text"] += f" {note[0].upper()}{note[1:]}: rerun the sweep when the machine is quieter."
    return out


TABLE_COLUMNS = (
    ("batch_size", "batch"),
    ("status", "status"),
    ("throughput", "samples/s"),
    ("median_ms", "median ms"),
    ("p5_ms", "p5 ms"),
    ("p95_ms", "p95 ms"),
    ("memory", "peak MiB"),
    ("note", "note"),
)
"""The sweep table's columns: key and header, in every view's order."""

_MIB = 2**20


def table_cells(row: dict, recommendation: dict) -> list[str]:
    """A table row's texts, one per :data:`TABLE_COLUMNS` column: numbers to fixed decimals
    (no value: an en dash), a failed point's message as its note."""
    ok = row["status"] == "ok"
    return [
        str(row["batch_size"]),
        row["status"],
        _fixed(row["throughput"], 1),
        _fixed(row["median_ms"], 4),
        _fixed(row["p5_ms"], 4),
        _fixed(row["p95_ms"], 4),
        _fixed(row_memory(row), 2, _MIB),
        _row_note(row, recommendation) if ok else row["message"],
    ]


def row_memory(row: dict):
    """A point's memory: the GPU's when measured, else the host's peak."""
    return row["gpu_memory"] if row.get("gpu_memory") is not None else row.get("peak_memory")


def _fixed(value, digits: int, divide: float = 1.0) -> str:
    return NO_VALUE if value is None else f"{value / divide:,.{digits}f}"


def _row_note(row: dict, recommendation: dict) -> str:
    """Its flag, its picks ("best", "recommended", "largest fit") and the kernel's note on it."""
    names = (("best", "best"), ("recommended", "recommended"), ("largest_fit", "largest fit"))
    picks = ", ".join(label for key, label in names if recommendation[key] == row["batch_size"])
    flag = f"! {row['flag']}" if row.get("flag") else ""
    return ", ".join(p for p in (flag, picks, row.get("note") or "") if p)


def progress_text(
    index: int,
    total: int | None,
    batch_size: int,
    elapsed_s: float = 0.0,
    rechecking: list[int] | tuple[int, ...] = (),
) -> str:
    """``"point 4 of 9, batch 64, 2.1 s"`` (``"point 4, batch 64, 2.1 s"`` when the number of
    points is not known in advance, as in an ``"auto"`` sweep); once every point is measured
    and some are re-measured, ``"re-measuring batch 16, 32, 64 interleaved, 2.1 s"``."""
    if rechecking:
        sizes = ", ".join(str(b) for b in rechecking)
        return f"re-measuring batch {sizes} interleaved, {seconds_text(elapsed_s)}"
    of = f" of {total}" if total else ""
    return f"point {index}{of}, batch {batch_size}, {seconds_text(elapsed_s)}"


def build_sweep_report(
    rows,
    *,
    title: str = "Batch-size sweep",
    mode: str | None = None,
    status: str = "completed",
    progress: dict | None = None,
    error: str = "",
    memory_limit: int | None = None,
    machine: dict | None = None,
) -> SweepReport:
    """The report of a sweep: ``rows`` is a ``SweepResult`` or a list of ``SweepRow``.

    ``status`` is one of :data:`STATUSES`; ``progress`` (``index``, ``total``, ``batch_size``,
    ``elapsed_s``) is the point being measured while ``status == "running"``;
    ``memory_limit`` (bytes) is drawn on the memory chart; ``machine`` is the machine's state
    over the sweep (a ``SweepResult`` carries its own), shown as the first note.
    """
    if status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
    within = getattr(rows, "within", WITHIN)
    mode = mode or getattr(rows, "mode", "inference")
    points = sweep_points(rows)
    table = [_table_row(r) for r in sorted(_rows_of(rows), key=lambda r: r.batch_size)]
    notes = []
    state = MachineState.from_dict(
        machine if machine is not None else getattr(rows, "machine", None)
    )
    if state is not None:
        notes.append(state.line())
    flagged = [r for r in _rows_of(rows) if getattr(r, "flag", None)]
    if flagged:
        notes.append(
            f"{_points(len(flagged))} not trusted (marked on the charts): "
            + "; ".join(f"{r.batch_size}: {_point_note(r)}" for r in flagged)
        )
    if status == "running" and not table:
        notes.append("The first point is being measured.")
    return SweepReport(
        title=title,
        mode=mode,
        status=status,
        points=points,
        marks=failed_marks(rows),
        recommendation=recommendation(rows, within=within, final=status == "completed"),
        rows=table,
        memory_kind=memory_label(_rows_of(rows)),
        progress=dict(progress) if progress and status == "running" else None,
        error=error,
        within=within,
        memory_limit=memory_limit,
        notes=notes,
    )


def _point_note(row) -> str:
    """Why a point is flagged, or what its re-measurement found; ``""`` for a plain point."""
    flag = getattr(row, "flag", None)
    note = getattr(row, "note", "") or ""
    if flag == "contended":
        reason = (getattr(row, "machine", None) or {}).get("reason", "")
        note = "; ".join(n for n in (f"measured on a contended machine ({reason})", note) if n)
    return note


def _table_row(row) -> dict:
    keys = (
        "batch_size",
        "status",
        "message",
        "n",
        "median_ms",
        "p5_ms",
        "p95_ms",
        "mean_ms",
        "verdict",
        "flag",
    )
    out = {k: getattr(row, k, None) for k in keys}
    out["note"] = _point_note(row)
    out.update(throughput=row.throughput, peak_memory=row.peak_memory, gpu_memory=row.gpu_memory)
    return out


def _rows_of(rows):
    return getattr(rows, "rows", rows)


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"
