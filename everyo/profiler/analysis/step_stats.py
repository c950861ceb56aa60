"""Training-step statistics kept up to date as steps arrive.

:class:`StepStats` answers :func:`everyo.profiler.analysis.run_analysis.step_summary` (count, mean,
median, p95, and the median, p95, slowest and fastest step) for a growing list of steps, cheaply
however many steps it already holds: a live dashboard asks for the summary a few times a second, and
recomputing it from every step (a partition and four passes over the durations) cost a loop
recording 15,000 steps a second 2 ms a refresh after 3 s and 10 ms after 30 s. Kept up to date, the
summary reads in about 50 us and adding a refresh's 5,000 steps costs 0.4 ms at 45,000 steps held
and 1-2 ms at 600,000-900,000 (memory copies of the small part and, now and then, of the large one).

The durations are held sorted by (duration, step index), in two parts: a large one, and a small
one that new steps are inserted into, which is merged into the large one once it holds an
eighth as many. A step's index is larger than every index already held, so an insertion after
the equal durations keeps that order. Order statistics select across the two parts in
O(log n); adding ``k`` steps sorts them (O(k log k)) and copies the small part (at most an
eighth of the steps) once, plus, amortised over the merges, about eight copies per step.

``step_summary`` itself builds a ``StepStats`` of all the steps, so a live summary and the
final one are the same numbers by construction.
"""

from __future__ import annotations

import numpy as np

__all__ = ["StepStats", "step_ends", "step_spans", "MARKS", "OPTIMIZER"]

MARKS = "profiler.step()"
"""The source of steps marked by ``profiler.step()``."""
OPTIMIZER = "optimizer"
"""The source of steps ended by optimizer events."""

MERGE_FRACTION = 8  # the small part merges into the large one at 1/MERGE_FRACTION of its size
MERGE_MIN = 4096  # ... or at this many steps, whichever is more


class _Column:
    """An int64 column that grows by appending (capacity doubles: O(1) amortised per value)."""

    def __init__(self):
        self._data = np.zeros(64, np.int64)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def extend(self, values: np.ndarray) -> None:
        need = self._n + len(values)
        if need > len(self._data):
            grown = np.zeros(max(need, 2 * len(self._data)), np.int64)
            grown[: self._n] = self._data[: self._n]
            self._data = grown
        self._data[self._n : need] = values
        self._n = need

    def view(self) -> np.ndarray:
        """The values so far (a view: appending later does not change it)."""
        return self._data[: self._n]


def step_ends(batch, marks=None, since: int = 0) -> tuple[np.ndarray, str]:
    """The step rule, stated once (the exact summary and the live dashboard both apply it):
    the ends (ns from the run start, sorted) of the training steps that ``batch`` (an
    ``EventBatch``) and ``marks`` (a run's ``step_ns``) hold, and their source. Explicit marks
    win: each ``profiler.step()`` mark ends a step (:data:`MARKS`). Otherwise each optimizer
    event (kind ``"optimizer"``, ``SGD.step``) ends one where it ends (:data:`OPTIMIZER`). No
    steps: an empty array and ``""``. Step ``k`` starts where step ``k - 1`` ended
    (:func:`step_spans`). ``since``: only the marks from that one on (a live reader's new ones:
    the rule is still that marks win)."""
    if marks is not None and len(marks):
        return np.asarray(marks[since:], np.int64), MARKS
    if not len(batch):
        return np.zeros(0, np.int64), ""
    kinds = np.array([k[0] == "optimizer" for k in batch.keys] or [False], bool)
    opt = kinds[np.asarray(batch.key, np.int64)]
    if not opt.any():
        return np.zeros(0, np.int64), ""
    return np.sort(batch.start_ns[opt] + batch.dur_ns[opt]), OPTIMIZER


def step_spans(ends_ns, first_ns: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` of consecutive steps ending at ``ends_ns`` (sorted), the first one
    starting at ``first_ns`` (or at its end, if that comes earlier)."""
    ends = np.asarray(ends_ns, np.int64)
    if len(ends) > 1 and not (ends[1:] >= ends[:-1]).all():  # usually sorted already
        ends = np.sort(ends)
    if not len(ends):
        return np.zeros(0, np.int64), ends
    starts = np.concatenate(([min(int(first_ns), int(ends[0]))], ends[:-1]))
    return starts, ends


def _stable_order(dur: np.ndarray) -> np.ndarray:
    """``argsort(dur, kind="stable")``; where (duration, position) packs into one int64, as an
    unstable sort of those keys (faster than NumPy's stable sort: benchmarks/RESULTS.md)."""
    n = len(dur)
    if n < 2:
        return np.arange(n)
    lo, hi = int(dur.min()), int(dur.max())
    if (hi - lo + 1) * n < 1 << 62:
        return np.argsort((dur - lo) * n + np.arange(n))
    return np.argsort(dur, kind="stable")


class StepStats:
    """Exact summary statistics of a growing sequence of training steps.

    Examples
    --------
    >>> stats = StepStats().add_ends([10, 30, 45], first_ns=0)
    >>> stats.summary("optimizer")["median"]
    {'index': 2, 'start_ms': 3e-05, 'end_ms': 4.5e-05, 'dur_ms': 1.5e-05}
    >>> stats.add_ends([100]).summary("optimizer")["slowest"]["index"]
    3
    """

    def __init__(self):
        self._starts = _Column()
        self._ends = _Column()
        self._total_ns = 0
        empty = np.zeros(0, np.int64)
        # [duration, step index] of the large and the small part, each in (duration, index) order
        self._parts = [[empty, empty], [empty, empty]]

    def __len__(self) -> int:
        return len(self._ends)

    @property
    def starts(self) -> np.ndarray:
        """Each step's start (ns), in step order."""
        return self._starts.view()

    @property
    def ends(self) -> np.ndarray:
        """Each step's end (ns), in step order."""
        return self._ends.view()

    # -- adding steps ----------------------------------------------------------------------
    def add_spans(self, starts_ns, ends_ns) -> StepStats:
        """Append steps given by their starts and ends (ns, in step order); returns ``self``."""
        starts = np.asarray(starts_ns, np.int64).ravel()
        ends = np.asarray(ends_ns, np.int64).ravel()
        if len(starts) != len(ends):
            raise ValueError(f"{len(starts)} step starts for {len(ends)} step ends")
        if not len(ends):
            return self
        dur = ends - starts
        order = _stable_order(dur)  # (duration, index) order of the new steps
        self._insert(self._parts[1], dur[order], order + len(self))
        self._starts.extend(starts)
        self._ends.extend(ends)
        self._total_ns += int(dur.sum())
        large, small = self._parts
        if len(small[0]) > max(MERGE_MIN, len(large[0]) // MERGE_FRACTION):
            self._insert(large, *small)
            self._parts[1] = [small[0][:0], small[1][:0]]
        return self

    def add_ends(self, ends_ns=(), first_ns: int = 0) -> StepStats:
        """Append steps ending at ``ends_ns``, each starting where the one before ended and the
        first at ``first_ns`` (or at its own end, if that is earlier): what
        :func:`~everyo.profiler.analysis.run_analysis.step_spans` makes of all the ends, kept up to
        date.

        The new ends need not be sorted. An end earlier than one already held, or a first step
        that now starts elsewhere (``first_ns`` moved), rebuilds the statistics from all the
        ends (rare: steps of several threads, or a thread's first events arriving late).
        Returns ``self``.
        """
        new = np.sort(np.asarray(ends_ns, np.int64).ravel())
        n = len(self)
        if n == 0:
            if len(new):
                self.add_spans(np.concatenate(([min(int(first_ns), int(new[0]))], new[:-1])), new)
            return self
        held = self.ends
        out_of_order = len(new) and int(new[0]) < int(held[-1])
        if out_of_order or min(int(first_ns), int(held[0])) != int(self.starts[0]):
            everything = np.concatenate((held, new))
            self.__init__()
            return self.add_spans(*step_spans(everything, first_ns))
        if len(new):
            self.add_spans(np.concatenate((held[-1:], new[:-1])), new)
        return self

    @staticmethod
    def _insert(part: list, dur: np.ndarray, index: np.ndarray) -> None:
        """Insert (dur, index) pairs, sorted and with indices above the part's, into ``part``."""
        if not len(part[0]):
            part[0], part[1] = dur, index
            return
        at = np.searchsorted(part[0], dur, side="right")  # after equal durations: lower indices
        part[0] = np.insert(part[0], at, dur)
        part[1] = np.insert(part[1], at, index)

    # -- reading ---------------------------------------------------------------------------
    def summary(self, source: str) -> dict | None:
        """:func:`~everyo.profiler.analysis.run_analysis.step_summary` of the steps so far
        (``None``: none)."""
        n = len(self)
        if n == 0:
            return None
        median, p95 = self._percentile(50), self._percentile(95)
        return {
            "count": n,
            "source": str(source),
            "mean_ms": self._total_ns / n / 1e6,
            "median_ms": median / 1e6,
            "p95_ms": p95 / 1e6,
            "first_start_ms": int(self.starts[0]) / 1e6,  # step k > 0 starts at end k - 1
            "median": self._step(self._nearest(median)),
            "p95": self._step(self._nearest(p95)),
            "slowest": self._step(self._first_index(self._select(n - 1))),
            "fastest": self._step(self._first_index(self._select(0))),
        }

    def _step(self, i: int) -> dict:
        start, end = int(self._starts.view()[i]), int(self._ends.view()[i])
        dur = end - start
        return {"index": i, "start_ms": start / 1e6, "end_ms": end / 1e6, "dur_ms": dur / 1e6}

    def _percentile(self, percent: int) -> int:
        """The duration of the step at ``percent``: nearest rank, NumPy's
        ``percentile(durations, percent, method="inverted_cdf")``, the shortest duration that
        at least ``percent`` % of the steps do not exceed.

        A step statistic is a step: the median of four steps is the second shortest, not the
        mean of two, so the step table's "median" and "p95" rows show the very numbers of the
        summary line (with interpolation they showed the nearest step's, which differed)."""
        rank = -(-percent * len(self) // 100)  # ceil(percent * n / 100), in integers
        return self._select(max(rank, 1) - 1)

    def _select(self, r: int) -> int:
        """The ``r``-th smallest duration (0-based) of both parts."""
        large, small = self._parts[0][0], self._parts[1][0]
        if not len(small):
            return int(large[r])
        if not len(large):
            return int(small[r])
        # i values from the large part and r + 1 - i from the small one are the r + 1 smallest
        lo, hi = max(0, r + 1 - len(small)), min(r + 1, len(large))
        while lo < hi:
            i = (lo + hi) // 2
            j = r + 1 - i
            if j > 0 and i < len(large) and small[j - 1] > large[i]:
                lo = i + 1  # the small part's largest taken is above an untaken one: take more
            else:
                hi = i
        i, j = lo, r + 1 - lo
        taken = ([large[i - 1]] if i > 0 else []) + ([small[j - 1]] if j > 0 else [])
        return int(max(taken))

    def _first_index(self, value: int) -> int:
        """The lowest step index with duration ``value`` (one that is held)."""
        found = []
        for dur, index in self._parts:
            at = int(np.searchsorted(dur, value, side="left"))
            if at < len(dur) and dur[at] == value:
                found.append(int(index[at]))
        return min(found)

    def _nearest(self, x: float) -> int:
        """The lowest step index among the durations nearest ``x``: ``abs(dur - x).argmin()``."""
        near = []
        for dur, _ in self._parts:
            at = int(np.searchsorted(dur, x, side="left"))
            near += [int(dur[k]) for k in (at - 1, at) if 0 <= k < len(dur)]
        best = min(abs(v - x) for v in near)
        return min(self._first_index(v) for v in set(near) if abs(v - x) == best)
