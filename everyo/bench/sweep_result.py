"""The result of a batch-size sweep: rows, best and recommended batch sizes, table, DataFrame."""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from everyo.bench.result import write_json
from everyo.bench.sweep_point import SweepRow

__all__ = ["SweepResult", "WITHIN", "CSV_COLUMNS"]

WITHIN = 0.05
"""The recommendation is the smallest batch within this fraction of the best throughput."""
CSV_COLUMNS = [f.name for f in fields(SweepRow)]


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
    """

    rows: list[SweepRow]
    mode: str = "inference"
    environment: dict | None = None
    within: float = field(default=WITHIN)
    stopped: bool = False
    workers: dict | None = None

    @property
    def ok_rows(self) -> list[SweepRow]:
        return [r for r in self.rows if r.ok]

    @property
    def best(self) -> SweepRow | None:
        """The point with the highest throughput."""
        ok = self.ok_rows
        return max(ok, key=lambda r: r.throughput) if ok else None

    @property
    def recommended(self) -> SweepRow | None:
        """The smallest batch within 5 % of the best throughput (less memory, lower latency)."""
        best = self.best
        if best is None:
            return None
        good = [r for r in self.ok_rows if r.throughput >= (1 - self.within) * best.throughput]
        return min(good, key=lambda r: r.batch_size)

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
            writer.writerow({k: ("" if v is None else v) for k, v in row.to_dict().items()})
        return out.getvalue()

    def to_dataframe(self):
        """The rows as a pandas DataFrame (pandas is imported here, not with everyo)."""
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.rows])

    def __str__(self) -> str:
        header = (
            f"{'batch':>7} {'status':>8} {'mean ms':>10} {'p95 ms':>10} "
            f"{'samples/s':>12} {'peak MiB':>9}  note"
        )
        lines = [f"Batch-size sweep ({self.mode})", header]
        best, rec, big = self.best, self.recommended, self.largest_fit
        for r in self.rows:
            notes = [
                n
                for n, pick in (("best", best), ("recommended", rec), ("largest fit", big))
                if pick is r
            ]
            if not r.ok:
                notes = [r.message]
            if r.worker is not None:
                notes.append(f"on worker {r.worker}")
            lines.append(
                f"{r.batch_size:>7} {r.status:>8} {_num(r.mean_ms, 4):>10} {_num(r.p95_ms, 4):>10} "
                f"{_num(r.throughput, 1):>12} {_mib(r):>9}  {', '.join(notes)}"
            )
        if self.stopped:
            lines.append(f"Stopped after {len(self.rows)} points; the others were not measured.")
        if rec is not None:
            lines.append(
                f"Recommended batch size: {rec.batch_size} (within {self.within:.0%} of the best "
                f"throughput, {best.throughput:.1f} samples/s at {best.batch_size}); "
                f"largest that fits: {big.batch_size}"
            )
        return "\n".join(lines)


def write_text(text: str, path: str | os.PathLike) -> Path:
    """Write ``text`` to ``path`` atomically (temporary file, then rename), as ``write_json``."""
    from everyo import fileio  # the one atomic writer; removes the temp file on failure

    return fileio.write_text(path, text, parents=True)


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _mib(row: SweepRow) -> str:
    peak = row.gpu_memory if row.gpu_memory is not None else row.peak_memory
    return "-" if peak is None else f"{peak / 2**20:.2f}"
