"""The comparison of two runs (A, the baseline, and B, the candidate): a header with both wall
times and the speed-up, and one diff row per group with a noise-aware verdict.

The rows are :func:`everyo.profiler.analysis.run_analysis.diff`'s (sorted by the absolute change of
total time); each gets a verdict from :func:`everyo.bench.compare` applied to the group's per-call
durations in A and in B (:func:`everyo.profiler.analysis.run_analysis.call_durations`):
``"faster"`` or ``"slower"`` when the confidence interval of the per-call speed-up excludes 1 and
the change is relevant (:data:`RELEVANT_PER_CALL`, :data:`RELEVANT_SHARE`), ``"negligible
change"`` when it excludes 1 but the change is not relevant (an unchanged layer a few per cent
faster, or a row too small to matter), ``"within noise"`` when it does not, ``"too little
data"`` when a side has fewer than :data:`MIN_CALLS` calls (no spread to judge noise by), and
``"only in A"`` / ``"only in B"``.

>>> from everyo.profiler import profile, record_function
>>> with profile(label="before") as a:
...     with record_function("work"):
...         pass
>>> with profile(label="after") as b:
...     with record_function("work"):
...         pass
>>> c = build_comparison(a.run, b.run)
>>> [(row["label"], row["verdict"]) for row in c.rows]
[('work', 'too little data')]
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from everyo.spelling import NO_VALUE
from everyo_lab.views._batch import as_batch
from everyo_lab.views.report import unfrozen
from everyo_lab.views.table.table_rows import display_label, wall_ns

__all__ = [
    "DIFF_COLUMNS",
    "MIN_CALLS",
    "VERDICTS",
    "Comparison",
    "build_comparison",
    "call_verdict",
    "diff_texts",
    "format_diff_cell",
    "relevant_verdict",
    "speedup_text",
]

MIN_CALLS = 3
"""Calls a group needs on each side for a verdict: fewer give no spread to tell noise from."""

MACHINE_BUSY = "inconclusive: the machine was busy"
"""The verdict of every judged row (and of the steps) when the machine's state makes the runs
incomparable: either recorded on a contended machine, or one on a quiet and one on a busy one."""
VERDICTS = (
    "faster",
    "slower",
    "negligible change",
    "within noise",
    "too little data",
    "only in A",
    "only in B",
    MACHINE_BUSY,
)

_CONFIDENCE = 0.95

RELEVANT_PER_CALL = 0.05
"""A diff row's median per-call time must move by at least this fraction (``max(s, 1/s) - 1``,
``s`` the speed-up) to read "faster" or "slower"."""
RELEVANT_SHARE = 0.01
"""... and its total time by at least this share of the run's wall time (the longer of A and
B): a change beyond noise in a row that takes 0.2 % of the run changes nothing a user sees."""


@dataclasses.dataclass
class Comparison:
    """Run B against run A: plain data (what the widget sends), plus the runs themselves.

    Attributes
    ----------
    a, b : dict
        Each run's ``run_id, label, status, error, wall_ms, events``.
    speedup : float or None
        ``wall_ms`` of A over that of B (above 1: B is faster); ``None`` when B took no time.
    steps : dict or None
        The verdict on the per-step durations when both runs have at least
        :data:`MIN_CALLS` training steps (``verdict``, ``speedup``, ``ci_low``, ``ci_high``,
        ``steps_a``, ``steps_b``).
    rows : list of dict
        One per group, biggest change of total time first: ``label, name, kind, path`` (or
        ``shapes``), ``calls_a/b``, ``total_ms_a/b``, ``per_call_ms_a/b`` (mean), ``self_ms_a/b``
        (self time per call), ``ratio`` (median per-call time B / A, the verdict's statistic),
        ``delta_ms`` (total B - A),
        ``verdict``, ``speedup``/``ci_low``/``ci_high`` (per call, A / B, when judged), ``why``.
    notes : list of str
    machine_note : str
        Why the machine's state makes the runs incomparable (every judged verdict is then
        :data:`MACHINE_BUSY`), or ``""``.
    """

    a: dict
    b: dict
    group_by: str
    speedup: float | None
    steps: dict | None
    rows: list[dict]
    notes: list[str]
    run_a: object = dataclasses.field(default=None, repr=False, compare=False)
    machine_note: str = ""
    run_b: object = dataclasses.field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        """JSON-ready plain data (the runs left out)."""
        return {
            "a": dict(self.a),
            "b": dict(self.b),
            "group_by": self.group_by,
            "speedup": self.speedup,
            "steps": None if self.steps is None else dict(self.steps),
            "rows": [{**r, "texts": diff_texts(r)} for r in self.rows],
            "columns": [{"key": key, "header": header} for key, header in DIFF_COLUMNS],
            "notes": list(self.notes),
            "machine_note": self.machine_note,
            # the front end shows these texts as they are: one producer of each figure's words
            "headline": self.headline,
            "steps_text": self.steps_text,
        }

    @property
    def headline(self) -> str:
        """``"before 12.300 ms → after 8.100 ms: wall time 1.52× faster"`` (``"...:
        inconclusive: the machine was busy"`` when it was). The statistic is named: the wall
        time includes the gaps between calls, so it differs from the per-step and per-call
        speed-ups, which are medians (docs/glossary.md)."""
        failed = [" (failed)" if s.get("status") == "failed" else "" for s in (self.a, self.b)]
        return (
            f"{self.a['label']} {self.a['wall_ms']:.3f} ms{failed[0]} → {self.b['label']} "
            f"{self.b['wall_ms']:.3f} ms{failed[1]}: {self.verdict_text}"
        )

    @property
    def verdict_text(self) -> str:
        """The headline's verdict: ``"wall time 1.52× faster"``, or ``MACHINE_BUSY``."""
        return MACHINE_BUSY if self.machine_note else f"wall time {speedup_text(self.speedup)}"

    @property
    def steps_text(self) -> str:
        """``"per step (median): faster (1.41×, 95% CI 1.30–1.52) over 20 and 21 steps"``
        ("" without steps)."""
        s = self.steps
        if not s:
            return ""
        if s.get("speedup") is None:
            return f"per step (median): {s['verdict']} ({s['why']})"
        return (
            f"per step (median): {s['verdict']} ({s['speedup']:.2f}×, 95% CI "
            f"{s['ci_low']:.2f}–{s['ci_high']:.2f}) over {s['steps_a']} and {s['steps_b']} steps"
        )


def build_comparison(run_a, run_b, *, group_by: str = "name", top: int | None = None):
    """Compare run B (the candidate) with run A (the baseline); see the module.

    ``top`` keeps the rows with the largest changes. Raises
    :class:`~everyo.errors.EveryOProfilerError` for an unknown ``group_by``, or ``"shape"`` on a
    run recorded without shapes.
    """
    from everyo.profiler.analysis import (
        run_analysis as analysis,  # lazily: views import fast and stay pure
    )

    diff = analysis.diff(run_a, run_b, by=group_by)
    calls_a = analysis.call_durations(run_a, group_by)
    calls_b = analysis.call_durations(run_b, group_by)
    rows = []
    wall_ms = max(wall_ns(run_a), wall_ns(run_b)) / 1e6  # what a row's change is a share of
    for row in list(diff)[: None if top is None else max(0, int(top))]:
        key = (
            (row["kind"], row["name"], row["shapes"])
            if "shapes" in row
            else (
                row["kind"],
                row["name"],
            )
        )
        rows.append(_row(row, calls_a.get(key), calls_b.get(key), group_by, wall_ms))
    from everyo.bench.regression import machine_caveat

    a, b = _side(run_a), _side(run_b)
    steps = _step_verdict(run_a, run_b)
    notes = _notes(run_a, run_b, a, b)
    caveat = machine_caveat(run_a, run_b, sides=(f"run A ({a['label']})", f"run B ({b['label']})"))
    if caveat:  # no faster/slower from runs the machine's state makes incomparable
        judged = ("faster", "slower", "negligible change", "within noise")
        rows = [{**r, "verdict": MACHINE_BUSY} if r["verdict"] in judged else r for r in rows]
        if steps is not None and steps["verdict"] in judged:
            steps = {**steps, "verdict": MACHINE_BUSY}
        notes.insert(0, f"{MACHINE_BUSY}: {caveat}")
    at = 1 if caveat else 0  # after the caveat, before the notes on the method
    notes[at:at] = _machine_notes(run_a, run_b, a, b, caveat)
    return Comparison(
        a=a,
        b=b,
        group_by=group_by,
        speedup=a["wall_ms"] / b["wall_ms"] if b["wall_ms"] > 0 else None,
        steps=steps,
        rows=rows,
        notes=notes,
        run_a=unfrozen(run_a),  # (kept with the comparison: not a refresh's snapshot)
        run_b=unfrozen(run_b),
        machine_note=caveat,
    )


DIFF_COLUMNS = (
    ("label", "name"),
    ("calls_a", "calls A"),
    ("calls_b", "calls B"),
    ("per_call_ms_a", "A ms/call"),
    ("per_call_ms_b", "B ms/call"),
    ("self_ms_a", "A self/call"),
    ("self_ms_b", "B self/call"),
    ("ratio", "B/A median"),
    ("delta_ms", "Δ total ms"),
    ("verdict", "verdict"),
)
"""``(key, header)`` of the diff table, in the order every rendering shows them."""


def format_diff_cell(row: dict, key: str) -> str:
    """One cell of the diff table as text (:data:`~everyo.spelling.NO_VALUE` when missing): the
    one spelling of each, which every rendering of a comparison (the widget's too) shows."""
    value = row.get(key)
    if key == "label" and row.get("shapes") not in (None, ""):
        return f"{row['label']} {row['shapes']}"
    if value is None:
        return NO_VALUE
    if key in ("calls_a", "calls_b"):
        return f"{value:,d}"
    if key == "ratio":  # a 700-fold speed-up is not "0.00×"
        return f"{value:.2f}×" if value >= 0.1 else f"{value:.2g}×"
    if key == "delta_ms":
        return f"{value:+.3f}"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1 else f"{value:.3f}"
    return str(value)


def diff_texts(row: dict) -> dict:
    """Every cell of a diff row as text (:func:`format_diff_cell`), by column key."""
    return {key: format_diff_cell(row, key) for key, _ in DIFF_COLUMNS}


def call_verdict(durations_a_ns, durations_b_ns) -> dict:
    """The verdict on B's per-call time against A's, from the calls' durations (ns).

    :func:`everyo.bench.compare`'s noise-aware rule on the two samples: ``verdict`` (see
    :data:`VERDICTS`), ``speedup`` (median per-call time of A over B), ``ci_low``, ``ci_high``
    and ``why`` (one sentence).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> call_verdict(rng.normal(1000, 20, 30), rng.normal(500, 10, 30))["verdict"]
    'faster'
    """
    from everyo.bench.regression import compare  # lazily: views import fast

    a = np.asarray(durations_a_ns if durations_a_ns is not None else [], np.float64)
    b = np.asarray(durations_b_ns if durations_b_ns is not None else [], np.float64)
    if not len(a) or not len(b):
        side = "B" if len(b) else "A"
        return {
            "verdict": f"only in {side}",
            "speedup": None,
            "ci_low": None,
            "ci_high": None,
            "why": f"called only in run {side}",
        }
    if min(len(a), len(b)) < MIN_CALLS:
        return {
            "verdict": "too little data",
            "speedup": None,
            "ci_low": None,
            "ci_high": None,
            "why": (
                f"{len(a)} call{'s' if len(a) != 1 else ''} in A, {len(b)} in B: a verdict "
                f"needs {MIN_CALLS} or more on each side (repeat the call, e.g. in a loop)"
            ),
        }
    # a duration below the clock's resolution reads as 0 ns: count it as 1 ns (ratios need > 0)
    # margin=0: relevant_verdict applies this view's own relevance threshold afterwards
    result = compare(
        np.maximum(a, 1.0) / 1e9, np.maximum(b, 1.0) / 1e9, confidence=_CONFIDENCE, margin=0
    )
    verdict = "within noise" if result.verdict == "no significant change" else result.verdict
    pct = round(_CONFIDENCE * 100)
    return {
        "verdict": verdict,
        "speedup": _finite(result.speedup),
        "ci_low": _finite(result.ci_low),
        "ci_high": _finite(result.ci_high),
        "why": (
            f"median per call {result.baseline_time * 1e3:.4g} ms → "
            f"{result.candidate_time * 1e3:.4g} ms; speed-up {result.speedup:.3g}× "
            f"({pct}% CI {result.ci_low:.3g}–{result.ci_high:.3g}) over {len(a)} and "
            f"{len(b)} calls"
        ),
    }


SAME_SPEED = 0.005
"""A speed-up ``s`` reads "same speed" when the faster side is less than 0.5 % faster:
``max(s, 1/s) - 1 < SAME_SPEED`` (symmetric: 1.004× faster and slower alike)."""


def speedup_text(speedup: float | None) -> str:
    """``"1.52× faster"``, ``"1.20× slower"``, ``"same speed"`` (:data:`SAME_SPEED`) or ``"no
    time in B"``: the one spelling of a speed-up, which every view shows as it is."""
    if speedup is None or not math.isfinite(speedup) or speedup <= 0:
        return "no time in B"
    if max(speedup, 1 / speedup) - 1 < SAME_SPEED:
        return "same speed"
    return f"{speedup:.2f}× faster" if speedup > 1 else f"{1 / speedup:.2f}× slower"


# -- helpers ---------------------------------------------------------------------------------
def relevant_verdict(verdict: dict, delta_ms: float, wall_ms: float) -> dict:
    """``verdict`` (of :func:`call_verdict`) with a "faster" or "slower" that is not relevant
    turned into "negligible change": the median per-call time moved by less than
    :data:`RELEVANT_PER_CALL`, or the row's total time by less than :data:`RELEVANT_SHARE` of
    ``wall_ms`` (``delta_ms``: B's total minus A's). The relevance threshold of the glossary.

    >>> relevant_verdict({"verdict": "slower", "speedup": 0.98, "why": "w"}, 0.5, 10.0)["verdict"]
    'negligible change'
    >>> relevant_verdict({"verdict": "slower", "speedup": 0.5, "why": "w"}, 5.0, 10.0)["verdict"]
    'slower'
    """
    if verdict["verdict"] not in ("faster", "slower"):
        return verdict
    s = verdict["speedup"]
    small_step = s is None or not s > 0 or max(s, 1 / s) - 1 < RELEVANT_PER_CALL
    small_share = abs(delta_ms) < RELEVANT_SHARE * wall_ms
    if not (small_step or small_share):
        return verdict
    reason = (
        f"under {RELEVANT_PER_CALL:.0%} per call"
        if small_step
        else f"{abs(delta_ms) / wall_ms:.2%} of the run's wall time, under {RELEVANT_SHARE:.0%}"
        if wall_ms > 0
        else "no wall time to weigh it by"
    )
    return {
        **verdict,
        "verdict": "negligible change",
        "why": f"{verdict['verdict']} beyond noise but not relevant ({reason}): " + verdict["why"],
    }


def _row(row: dict, durations_a, durations_b, group_by: str, wall_ms: float) -> dict:
    calls_a, calls_b = int(row["calls_a"]), int(row["calls_b"])
    per_a = row["total_ms_a"] / calls_a if calls_a else None
    per_b = row["total_ms_b"] / calls_b if calls_b else None
    out = {
        "label": display_label(row["name"], row.get("path", "")),
        "name": str(row["name"]),
        "kind": str(row["kind"]),
        "calls_a": calls_a,
        "calls_b": calls_b,
        "total_ms_a": float(row["total_ms_a"]),
        "total_ms_b": float(row["total_ms_b"]),
        "per_call_ms_a": per_a,
        "per_call_ms_b": per_b,
        "self_ms_a": row["self_ms_a"] / calls_a if calls_a else None,
        "self_ms_b": row["self_ms_b"] / calls_b if calls_b else None,
        "ratio": _median_ratio(durations_a, durations_b),
        "delta_ms": float(row["delta_ms"]),
    }
    if group_by == "shape":
        out["shapes"] = str(row.get("shapes") or "")
    else:
        out["path"] = str(row.get("path") or "")
    out.update(relevant_verdict(call_verdict(durations_a, durations_b), out["delta_ms"], wall_ms))
    return out


def _median_ratio(durations_a, durations_b) -> float | None:
    """Median per-call time of B over A: the same statistic as the verdict (a mean would let
    one slow call, a first call say, turn a faster group into a "slower" ratio)."""
    if durations_a is None or durations_b is None or not len(durations_a) or not len(durations_b):
        return None
    med_a = float(np.median(durations_a))
    return float(np.median(durations_b)) / med_a if med_a > 0 else None


def _side(run) -> dict:
    return {
        "run_id": str(getattr(run, "id", "") or ""),
        "label": str(getattr(run, "label", "") or "run"),
        "status": str(getattr(run, "status", "completed")),
        "error": getattr(run, "error", None),
        "wall_ms": wall_ns(run) / 1e6,  # the wall time every view of a run shows
        "wall": f"{wall_ns(run) / 1e6:.3f} ms",
        "events": len(as_batch(run)),
    }


def _step_verdict(run_a, run_b) -> dict | None:
    from everyo.profiler.analysis import run_analysis as analysis

    try:
        sa, ea, _ = analysis.step_bounds(run_a)
        sb, eb, _ = analysis.step_bounds(run_b)
    except Exception:  # a source without steps (an event batch of another shape)
        return None
    if min(len(ea), len(eb)) < MIN_CALLS:
        return None
    verdict = call_verdict(ea - sa, eb - sb)
    return {**verdict, "steps_a": len(ea), "steps_b": len(eb)}


def _machine_notes(run_a, run_b, a: dict, b: dict, caveat: str) -> list[str]:
    """Each side's machine when it was busy or contended, or ran with a thread limit (as a
    run's own notes say it): two runs on a machine busy alike stay comparable, but their times
    are not a quiet machine's. A side the caveat already quotes is not repeated."""
    notes = []
    for name, run, side in (("A", run_a, a), ("B", run_b, b)):
        state = getattr(run, "machine_state", None)
        if state is None or (caveat and state.reason and state.reason in caveat):
            continue
        if state.verdict in ("busy", "contended") or state.threads_applied is not None:
            notes.append(f"run {name} ({side['label']}): {state.line()}")
    return notes


def _notes(run_a, run_b, a: dict, b: dict) -> list[str]:
    notes = []
    for name, side in (("A", a), ("B", b)):
        if side["status"] == "failed":
            notes.append(
                f"run {name} ({side['label']}) failed ({side['error']}): its events up to the "
                "failure are compared"
            )
        if side["events"] == 0:
            notes.append(
                f"run {name} ({side['label']}) recorded no events: nothing of it to compare"
            )
    if a["events"] and b["events"]:
        notes.append(
            f"verdicts use the per-call durations of each row (everyo.bench.compare, "
            f"{round(_CONFIDENCE * 100)}% confidence); rows with fewer than {MIN_CALLS} calls "
            "on a side have too little data for one"
        )
    return notes


def _finite(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None
