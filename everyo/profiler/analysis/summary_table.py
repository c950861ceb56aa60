"""``SummaryTable``: a list of row dicts that prints as an aligned text table."""

from __future__ import annotations

from everyo.profiler.analysis import names
from everyo.profiler.analysis.schema import COLUMN_ORDER, TEXT_COLUMNS
from everyo.spelling import NO_VALUE

_PREFERRED = tuple(k for k in COLUMN_ORDER if k != "label")  # rows here have no label
_HIDDEN = {"module", "host_only", "bytes", "paths"}
_UNREAD = object()
PATHS_SHOWN = 4
"""A name grouping's path cell lists at most this many of a row's paths."""


def _paths(row: dict) -> str:
    """The path cell: the row's path, or the paths of a name that runs at several (``0, 2, 4``,
    ``0, 2, 4, 7 +2``); empty for code that is not a module."""
    if not row.get("paths"):
        return str(row.get("path") or "")
    paths = row["paths"].split(", ")
    more = len(paths) - PATHS_SHOWN
    shown = ", ".join(p or "(root)" for p in paths[:PATHS_SHOWN])
    return shown + (f" +{more}" if more > 0 else "")


def _fmt(value, column: str) -> str:
    if value is None:
        return NO_VALUE
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        if column == "share":
            return f"{value:.1%}"
        if column == "gflops":
            return f"{value:.2f}"
        return f"{value:.3f}"
    if isinstance(value, int) and column in ("flops", "mem_bytes", "bytes"):
        return _si(value)
    return str(value)


def _si(n: int) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f}{unit}"
    return str(n)


class SummaryTable(list):
    """Rows (dicts) of a summary; ``print()`` shows an aligned table, ``to_dataframe()`` pandas.

    Attributes
    ----------
    group_by : str
    wall_ms : float
        Wall time of the run (what ``share`` is a fraction of).
    notes : list of str
        Printed under the table (host-only timings, skipped warmup events...).
    sampled : HotLines or None
        Of a run with stack samples: where the time outside every event went (a run without
        events: all of it), printed under the table with its call tree
        (:func:`everyo.profiler.sampling.sampled_lines.outside_events`); ``None`` otherwise.
    """

    def __init__(
        self,
        rows=(),
        *,
        group_by: str = "name",
        wall_ms: float = 0.0,
        notes: list[str] | None = None,
        columns: list[str] | None = None,
        run=None,
    ):
        super().__init__(rows)
        self.group_by = group_by
        self.wall_ms = wall_ms
        self.notes = list(notes or [])
        self._columns = columns
        self._run = run  # read for `sampled`, on first use only (it walks the samples)
        self._sampled = _UNREAD

    @property
    def sampled(self):
        if self._sampled is _UNREAD:
            self._sampled = None
            if getattr(self._run, "samples", None) is not None:
                from everyo.profiler.sampling.sampled_lines import outside_events

                self._sampled = outside_events(self._run)
        return self._sampled

    def _sampled_lines(self) -> list[str]:
        if self.sampled is None:
            return []
        from everyo.profiler.sampling.sampled_lines_text import outside_text

        return ["", outside_text(self.sampled)]

    def find(self, label: str) -> dict:
        """The row a view's label names: ``"RowScale [1]"``, ``"RowScale"`` or the path ``"1"``
        (see :func:`everyo.profiler.analysis.names.matches`); an error lists the labels there are.
        """
        return names.find(self, label)

    def columns(self) -> list[str]:
        if self._columns is not None:
            return list(self._columns)
        seen = {k for row in self for k in row} - _HIDDEN
        ordered = [c for c in _PREFERRED if c in seen]
        return ordered + sorted(seen - set(ordered))

    def to_dataframe(self):
        """The rows as a ``pandas.DataFrame`` (pandas is imported here, not before)."""
        import pandas as pd

        return pd.DataFrame(list(self), columns=self.columns() if self else None)

    def __str__(self) -> str:
        if not self:
            lines = ["(no events recorded)"] + [f"note: {n}" for n in self.notes]
            return "\n".join(lines + self._sampled_lines())
        cols = self.columns()
        cells = [
            [_fmt(row.get(c), c) if c != "path" else _paths(row) for c in cols] for row in self
        ]
        if any(row.get("host_only") for row in self):
            for row, line in zip(self, cells):
                if row.get("host_only"):
                    line[0] += " *"
        widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(cols)]
        numeric = [c not in TEXT_COLUMNS for c in cols]

        def render(values):
            parts = [
                v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)
            ]
            return "  ".join(parts).rstrip()

        out = [render(cols), "  ".join("-" * w for w in widths)]
        out += [render(line) for line in cells]
        if self.wall_ms:
            out.append(
                f"wall time {self.wall_ms:.3f} ms; nested events overlap, so totals "
                "do not add up to it"
            )
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out + self._sampled_lines())

    def __repr__(self) -> str:
        return self.__str__()

    def _repr_html_(self) -> str:
        import html

        sampled = "\n".join(self._sampled_lines()).strip()
        sampled = f"<pre>{html.escape(sampled)}</pre>" if sampled else ""
        if not self:
            return "<p>(no events recorded)</p>" + sampled
        cols = self.columns()
        head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_fmt(r.get(c), c))}</td>" for c in cols) + "</tr>"
            for r in self
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{sampled}"
