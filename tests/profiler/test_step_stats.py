"""StepStats: step_summary's numbers for a growing run, checked against a direct NumPy reading
of every step (the computation step_summary made before it kept them up to date)."""

from __future__ import annotations

import numpy as np
import pytest

from everyo.profiler.analysis import run_analysis as analysis
from everyo.profiler.analysis import step_stats
from everyo.profiler.analysis.step_stats import StepStats


def direct(starts, ends, source="optimizer"):
    starts, ends = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
    dur = ends - starts
    median, p95 = np.percentile(dur, [50, 95], method="inverted_cdf").tolist()

    def step(i):
        i = int(i)
        return {
            "index": i,
            "start_ms": int(starts[i]) / 1e6,
            "end_ms": int(ends[i]) / 1e6,
            "dur_ms": int(dur[i]) / 1e6,
        }

    return {
        "count": len(dur),
        "source": source,
        "mean_ms": float(dur.mean()) / 1e6,
        "median_ms": median / 1e6,
        "p95_ms": p95 / 1e6,
        "first_start_ms": int(starts[0]) / 1e6,
        "median": step(np.abs(dur - median).argmin()),
        "p95": step(np.abs(dur - p95).argmin()),
        "slowest": step(dur.argmax()),
        "fastest": step(dur.argmin()),
    }


def same(got, want):
    """Equal, but the mean only to rounding (an integer total over n, against NumPy's mean)."""
    got, want = dict(got), dict(want)
    assert got.pop("mean_ms") == pytest.approx(want.pop("mean_ms"), rel=1e-12)
    assert got == want


@pytest.fixture
def small_parts(monkeypatch):
    """Merge the small part into the large one often, so that reads span both parts."""
    monkeypatch.setattr(step_stats, "MERGE_MIN", 4)
    monkeypatch.setattr(step_stats, "MERGE_FRACTION", 3)


@pytest.mark.parametrize("widest", [3, 40, 10**7])  # mostly ties ... hardly any
def test_steps_added_in_batches_summarise_as_all_of_them_at_once(small_parts, widest):
    rng = np.random.default_rng(widest)
    ends = np.cumsum(rng.integers(1, widest, 700)) + 100
    stats, done = StepStats(), 0
    while done < len(ends):
        k = int(rng.integers(0, 40))
        stats.add_ends(rng.permutation(ends[done : done + k]), first_ns=90)  # any order within
        done += len(ends[done : done + k])
        if done:
            same(stats.summary("optimizer"), direct(*analysis.step_spans(ends[:done], 90)))
    assert stats.ends.tolist() == ends.tolist()
    assert stats.starts.tolist() == [90, *ends[:-1].tolist()]


def test_an_early_end_or_a_moved_first_step_is_taken_in(small_parts):
    stats = StepStats().add_ends([10, 20, 35, 50], first_ns=5)
    stats.add_ends([60, 15], first_ns=5)  # 15 ends before steps already held (another thread)
    want = direct(*analysis.step_spans([10, 15, 20, 35, 50, 60], 5))
    same(stats.summary("optimizer"), want)
    stats.add_ends([], first_ns=0)  # an earlier first event: the first step starts sooner
    same(stats.summary("optimizer"), direct(*analysis.step_spans([10, 15, 20, 35, 50, 60], 0)))
    assert stats.starts.tolist() == [0, 10, 15, 20, 35, 50]


def test_percentiles_are_nearest_rank_so_each_is_a_step():
    """Issue 33: the step table's median and p95 rows show the summary's numbers."""
    rng = np.random.default_rng(0)
    for n in [*range(1, 30), 99, 1000]:
        dur = rng.integers(0, 10**9, n)
        ends = np.cumsum(dur)
        summary = StepStats().add_spans(ends - dur, ends).summary("s")
        median, p95 = np.percentile(dur, [50, 95], method="inverted_cdf").tolist()
        assert (summary["median_ms"], summary["p95_ms"]) == (median / 1e6, p95 / 1e6)
        assert summary["median"]["dur_ms"] == summary["median_ms"]
        assert summary["p95"]["dur_ms"] == summary["p95_ms"]


def test_step_summary_is_a_summary_of_all_the_steps():
    starts, ends = np.array([0, 35, 50]), np.array([35, 50, 75])
    assert analysis.step_summary(starts, ends, "optimizer") == direct(starts, ends)
    assert StepStats().summary("optimizer") is None
    assert StepStats().add_ends([]).summary("optimizer") is None
    with pytest.raises(ValueError, match="2 step starts for 3 step ends"):
        StepStats().add_spans([0, 1], [1, 2, 3])


def test_durations_too_wide_to_pack_are_still_ordered_stably():
    dur = np.array([2**62, 0, 2**62, 5, 0, 2**61], np.int64)
    expected = np.argsort(dur, kind="stable")
    assert step_stats._stable_order(dur).tolist() == expected.tolist()
    ends = np.cumsum(dur)
    summary = StepStats().add_spans(ends - dur, ends).summary("s")
    assert summary["slowest"]["index"] == 0 and summary["fastest"]["index"] == 1
