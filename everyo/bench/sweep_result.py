"""The result of a batch-size sweep: rows, best and recommended batch sizes, table, DataFrame."""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from everyo.bench.result import write_json
from everyo.bench.sweep_point import SweepRow, memory_label
from everyo.machine_state import MachineState
from everyo.spelling import NO_VALUE

__all__ = ["SweepResult", "WITHIN", "CSV_COLUMNS"]

WITHIN = 0.05
"""The recommendation is the smallest batch within this fraction of the best throughput."""
CSV_COLUMNS = [f.name for f in fields(SweepRow) if f.name != "machine"]


@dataclass
class SweepResult:
    """Rows of a sweep, sorted by batch size.

    Attributes
    ----------
    rows : list of SweepRow
    mode : str
        ``"inference"`` or ``"train"``.
    environment : dict or None
    stopped : bool
        The sweep was stopped (a stop flag, an interrupt) before it measured every point.
    workers : dict or None
        With an executor: worker name -> that worker's environment record (each row's
        ``worker`` says where it was measured; ``environment`` is the caller's).
    machine : dict or None
        The machine's state over the whole sweep, with the thread policy applied
        (:attr:`machine_state` gives the object); each row has its own ``verdict``.
    """

    rows: list[SweepRow]
    mode: str = "inference"
    environment: dict | None = None
    within: float = field(default=WITHIN)
    stopped: bool = False
    workers: dict | None = None
    machine: dict | None = None

    @property
    def ok_rows(self) -> list[SweepRow]:
        return [r for r in self.rows if r.ok]

    @property
    def trusted_rows(self) -> list[SweepRow]:
        """Measured points that are neither unreliable nor measured on a contended machine."""
        return [r for r in self.rows if r.trusted]

    @property
    def flagged_rows(self) -> list[SweepRow]:
        """Measured points that are not trusted (``row.flag`` says why)."""
        return [r for r in self.rows if r.ok and not r.trusted]

    @property
    def memory_label(self) -> str:
        """What the peak-memory figures measure (see :func:`everyo.bench.sweep_point.
        memory_label`): ``"host"``, ``"GPU"``, ``"GPU, torch allocator"`` or
        ``"host, resident-set growth"``."""
        return memory_label(self.rows)

    @property
    def machine_state(self) -> MachineState | None:
        return MachineState.from_dict(self.machine)

    @property
    def best(self) -> SweepRow | None:
        """The trusted point with the highest throughput."""
        ok = self.trusted_rows
        return max(ok, key=lambda r: r.throughput) if ok else None

    @property
    def recommended(self) -> SweepRow | None:
        """The smallest trusted batch within 5 % of the best throughput (less memory, lower
        latency); ``None`` when no point is trusted (:attr:`recommendation` says why)."""
        return _recommend(self.trusted_rows, self.within)

    @property
    def rivals(self) -> list[SweepRow]:
        """Untrusted points that would have changed the recommendation had they been trusted
        (their figures taken as measured)."""
        rec = self.recommended
        if rec is None:
            return []
        trusted = self.trusted_rows
        return [
            r
            for r in self.flagged_rows
            if r.throughput is not None and _recommend([*trusted, r], self.within) is not rec
        ]

    @property
    def conclusive(self) -> bool:
        """False when there is no recommendation, or untrusted points might have changed it
        (:attr:`rivals`): the sweep should be rerun on a quieter machine before its
        recommendation is taken as the lesson. (``Lab.check(measured=...)`` reads it.)"""
        return self.recommended is not None and not self.rivals

    @property
    def machine_note(self) -> str:
        """Why the recommendation is provisional (``""`` when it is conclusive)."""
        if self.conclusive:
            return ""
        if self.recommended is None:
            return "no point of the sweep could be trusted"
        rivals = ", ".join(f"{r.batch_size} ({r.flag})" for r in self.rivals)
        return (
            f"the recommendation is provisional: {rivals} measured as fast or faster but could "
            "not be trusted"
        )

    @property
    def recommendation(self) -> str:
        """The recommendation in one line, with the points it left out and why."""
        rec, best, big = self.recommended, self.best, self.largest_fit
        left_out = self.flagged_rows
        why = ", ".join(f"{r.batch_size} ({r.flag})" for r in left_out)
        if rec is None:
            if not left_out:
                return "No recommendation: no batch size was measured."
            return (
                f"No recommendation: no point can be trusted ({why}). Rerun with "
                "threads='auto' (or 1), or when the machine is quiet."
            )
        line = (
            f"Recommended batch size: {rec.batch_size} (within {self.within:.0%} of the best "
            f"throughput, {best.throughput:.1f} samples/s at {best.batch_size}); "
            f"largest that fits: {big.batch_size}"
        )
        if left_out:
            line += f"; not considered: {why}"
        if self.rivals:
            line += f". {self.machine_note[0].upper()}{self.machine_note[1:]}: rerun the sweep"
        return line

    @property
    def largest_fit(self) -> SweepRow | None:
        """The largest batch that ran without running out of memory."""
        ok = self.ok_rows
        return max(ok, key=lambda r: r.batch_size) if ok else None

    def __getitem__(self, batch_size: int) -> SweepRow:
        for row in self.rows:
            if row.batch_size == batch_size:
                return row
        raise KeyError(f"batch size {batch_size} was not measured")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict."""
        pick = {"best": self.best, "recommended": self.recommended, "largest_fit": self.largest_fit}
        return {
            "format": "everyo.sweep",
            "mode": self.mode,
            "stopped": self.stopped,
            "rows": [r.to_dict() for r in self.rows],
            **{k: (r.batch_size if r else None) for k, r in pick.items()},
            "recommendation": self.recommendation,
            "machine": self.machine,
            "environment": self.environment,
            "workers": self.workers,
        }

    def to_json(self, path: str | os.PathLike) -> Path:
        """Write :meth:`to_dict` to ``path`` atomically."""
        return write_json(self.to_dict(), path)

    def to_csv(self, path: str | os.PathLike) -> Path:
        """Write the rows as CSV (one line per batch size, :class:`SweepRow`'s fields as
        columns, empty cells for values a failed point lacks) to ``path`` atomically."""
        return write_text(self.csv_text(), path)

    def csv_text(self) -> str:
        """The CSV that :meth:`to_csv` writes."""
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in self.rows:
            values = {k: v for k, v in row.to_dict().items() if k in CSV_COLUMNS}
            writer.writerow({k: ("" if v is None else v) for k, v in values.items()})
        return out.getvalue()

    def to_dataframe(self):
        """The rows as a pandas DataFrame (pandas is imported here, not with everyo)."""
        import pandas as pd

        return pd.DataFrame(
            [{k: v for k, v in r.to_dict().items() if k != "machine"} for r in self.rows]
        )

    def __str__(self) -> str:
        header = (
            f"{'batch':>7} {'status':>8} {'median ms':>10} {'p95 ms':>10} "
            f"{'samples/s':>12} {'peak MiB':>9} {'machine':>9}  note"
        )
        lines = [f"Batch-size sweep ({self.mode})"]
        state = self.machine_state
        if state is not None:
            lines.append(state.line())
        lines.append(f"peak memory: {self.memory_label}")
        lines.append(header)
        best, rec, big = self.best, self.recommended, self.largest_fit
        for r in self.rows:
            notes = [
                n
                for n, pick in (("best", best), ("recommended", rec), ("largest fit", big))
                if pick is r
            ]
            if not r.ok:
                notes = [r.message]
            if r.flag is not None:
                notes.insert(0, f"! {r.flag}")
            if r.note:
                notes.append(r.note)
            if r.worker is not None:
                notes.append(f"on worker {r.worker}")
            lines.append(
                f"{r.batch_size:>7} {r.status:>8} {_num(r.median_ms, 4):>10} "
                f"{_num(r.p95_ms, 4):>10} {_num(r.throughput, 1):>12} {_mib(r):>9} "
                f"{r.verdict or NO_VALUE:>9}  {', '.join(notes)}"
            )
        if self.stopped:
            lines.append(f"Stopped after {len(self.rows)} points; the others were not measured.")
        if self.rows:
            lines.append(self.recommendation)
        return "\n".join(lines)


def _recommend(rows: list[SweepRow], within: float) -> SweepRow | None:
    """The smallest of ``rows`` within ``within`` of their best throughput."""
    if not rows:
        return None
    best = max(rows, key=lambda r: r.throughput)
    good = [r for r in rows if r.throughput >= (1 - within) * best.throughput]
    return min(good, key=lambda r: r.batch_size)


def write_text(text: str, path: str | os.PathLike) -> Path:
    """Write ``text`` to ``path`` atomically (temporary file, then rename), as ``write_json``."""
    from everyo import fileio  # the one atomic writer; removes the temp file on failure

    return fileio.write_text(path, text, parents=True)


def _num(value: float | None, digits: int) -> str:
    return NO_VALUE if value is None else f"{value:.{digits}f}"


def _mib(row: SweepRow) -> str:
    peak = row.gpu_memory if row.gpu_memory is not None else row.peak_memory
    return NO_VALUE if peak is None else f"{peak / 2**20:.2f}"
