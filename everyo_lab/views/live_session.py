"""``LiveSession``: everything the live dashboard knows of one run while it records, in one
owner: the cursors into the run's events and samples, the steps so far, the numbering of its
threads and the running aggregates (:class:`~everyo_lab.views.live_state.LiveState`).

The session is the one live reader: each refresh, :meth:`LiveSession.read` takes the new events
and the new samples once, and every consumer (the running aggregates, the wire stream, the why
panels' :class:`~everyo_lab.views.why_live.LiveWhy`) is fed what it read; a consumer that joins
mid-run catches up once from :meth:`LiveSession.history`. The widget keeps no figure of its
own. The browser's lanes, the live flame chart's bars and the report's steps all come from
here (the steps by :func:`~everyo.profiler.step_stats.step_ends`, the rule the exact summary
applies), so they cannot disagree on a thread's number or a step's end.
"""

from __future__ import annotations

import numpy as np

from everyo.profiler.step_stats import MARKS, StepStats, step_ends
from everyo_lab.views.live_state import LiveState, ThreadNumbers
from everyo_lab.views.report import live_report

__all__ = ["LiveSession"]


class LiveSession:
    """One run as a live dashboard follows it.

    :meth:`read` takes the rows recorded since the last read (and the samples, kept as
    :attr:`new_samples`) and brings the steps up to date;
    :meth:`fold` adds them to the running aggregates (while the run records, every row read
    must be folded, so the aggregates never miss or repeat one); :meth:`report` is the live
    report of what was folded.
    """

    def __init__(self, run):
        self.run = run
        self.cursor = 0  # rows of the run read so far
        self.sample_cursor = 0  # samples read so far
        self.new_samples: dict | None = None  # the samples of the last read (None: unsampled)
        self.threads = ThreadNumbers()
        self.steps = StepStats()  # the steps so far (ns from the run start), summary kept exact
        self.first_start_ns: int | None = None  # where step 0 starts
        self.state = None  # the running aggregates, from the first fold on
        self.step_source = ""  # where the steps come from (step_stats.step_ends)

    def read(self):
        """The rows recorded since the last read (an ``EventBatch``); advances the cursors. The
        samples taken since the last read are :attr:`new_samples` (sample columns) until the
        next read."""
        batch, self.cursor = self.run.events_since(self.cursor)
        samples = getattr(self.run, "samples", None)
        if samples is not None:
            self.new_samples, self.sample_cursor = samples.read_since(self.sample_cursor)
        self._note_steps(batch)
        return batch

    def history(self):
        """What the reads so far returned, read again for a consumer that starts mid-run: the
        rows ``[0, cursor)`` (an ``EventBatch``) and the samples ``[0, sample_cursor)`` (``None``
        for a run without samples). A consumer fed these and then every later read has seen
        each row and sample once."""
        batch = self.run.rows(0, self.cursor)
        samples = getattr(self.run, "samples", None)
        if samples is None:
            return batch, None
        cols, _ = samples.read_since(0)
        return batch, {name: col[: self.sample_cursor] for name, col in cols.items()}

    def fold(self, batch):
        """Add ``batch`` (what :meth:`read` returned) to the running aggregates; returns them."""
        if self.state is None:
            self.state = LiveState(threads=self.threads)
        self.state.feed(batch)
        return self.state

    def report(self, **options):
        """The live :class:`~everyo_lab.views.report.Report` of the rows folded so far (the
        options of :func:`~everyo_lab.views.report.live_report`)."""
        state = self.state if self.state is not None else LiveState(threads=self.threads)
        return live_report(
            self.run, state, steps=self.steps, step_source=self.step_source, **options
        )

    def _note_steps(self, batch) -> None:
        """Bring the steps up to date (O(new rows and steps): a live refresh must not cost more
        as the run grows, see :mod:`everyo.profiler.step_stats`)."""
        if len(batch):
            first = int(np.min(batch.start_ns))
            if self.first_start_ns is None or first < self.first_start_ns:
                self.first_start_ns = first
        first = self.first_start_ns or 0
        marks = getattr(self.run, "step_ns", None)
        if marks and self.step_source != MARKS:  # marks replace the optimizer steps held
            self.steps = StepStats()
        ends, source = step_ends(batch, marks, since=len(self.steps))  # (the new ones only)
        self.step_source = source or self.step_source
        self.steps.add_ends(ends, first)  # also where the first step starts, if that moved
