"""The compiled loops over event batches (``everyo.profiler.storage._cbatch``) against their NumPy
specifications, and what they do with arrays they cannot take."""

from __future__ import annotations

import numpy as np
import pytest

from everyo import _compiled
from everyo_lab.views.flame import live_flame

LOOPS = _compiled.load("everyo.profiler.storage._cbatch")
pytestmark = pytest.mark.skipif(LOOPS is None, reason="everyo.profiler.storage._cbatch not built")


def random_columns(rng, lanes: int, n_cols: int) -> dict:
    cols = {}
    for f in (*live_flame._FIELDS, *live_flame._REP):
        fill = live_flame._FIELDS[f][0] if f in live_flame._FIELDS else 0
        cols[f] = np.full((lanes, n_cols), fill, np.int64)
    return cols


@pytest.mark.parametrize("seed", range(5))
def test_mark_columns_equals_the_numpy_marking(seed):
    rng = np.random.default_rng(seed)
    n, lanes, n_cols, width = 2000, 4, 64, 1 << 10
    ev = {
        # some before the run's origin (a clock restarted after them), some past the end
        "start": np.sort(rng.integers(-3 * width, 80 * width, n)).astype(np.int64),
        "dur": rng.integers(1, width, n).astype(np.int64),
        "lane": rng.integers(0, lanes, n).astype(np.int64),
        "code": rng.integers(0, 9, n).astype(np.int64),
        "key": rng.integers(0, 20, n).astype(np.int64),
        "self": rng.integers(0, 500, n).astype(np.int64),
        "shape": rng.integers(-1, 6, n).astype(np.int64),
    }
    a, b = random_columns(rng, lanes, n_cols), random_columns(rng, lanes, n_cols)
    live_flame._mark(a, width, ev)
    live_flame._mark_numpy(b, width, ev)
    for f in a:
        assert np.array_equal(a[f], b[f]), f


def test_mark_columns_refuses_a_lane_outside_the_columns_and_marks_nothing():
    cols = random_columns(None, 2, 8)
    flat = live_flame._flat_columns(cols)
    events = tuple(np.array([1, 2], np.int64) for _ in live_flame._EVENT)
    bad = list(events)
    bad[2] = np.array([0, 2], np.int64)  # lane 2 of 2
    with pytest.raises(ValueError, match="lane"):
        LOOPS.mark_columns(0, 8, tuple(bad), flat)
    assert (cols["count"] == 0).all()


def test_loops_refuse_arrays_of_other_types():
    out = np.zeros(3, np.int64)
    with pytest.raises(TypeError, match="signed integer"):
        LOOPS.postorder_parents(np.zeros(3, np.float64), np.zeros(3, np.int16), 0, out)
    with pytest.raises(TypeError, match="int64"):
        LOOPS.postorder_parents(
            np.zeros(3, np.int16), np.zeros(3, np.int16), 0, np.zeros(3, np.int32)
        )
    with pytest.raises(ValueError, match="items"):
        LOOPS.postorder_parents(np.zeros(3, np.int16), np.zeros(2, np.int16), 0, out)


def test_postorder_parents_refuses_labels_past_its_table_limit():
    # its table is (largest label + 1) x (largest depth + 1) cells: capped, not unbounded
    out = np.zeros(2, np.int64)
    for tid, depth in (([4095, 4095], [1, 0]), ([0, 0], [4095, 4094])):
        LOOPS.postorder_parents(np.array(tid), np.array(depth), 0, out)
        assert out.tolist() == [1, -1]
    for tid, depth in (([4096, 4096], [1, 0]), ([0, 0], [4096, 4095]), ([-1, 0], [0, 0])):
        with pytest.raises(ValueError, match="4096"):
            LOOPS.postorder_parents(np.array(tid), np.array(depth), 0, out)


def test_table_add_and_add_at():
    calls, total, own_sum = np.zeros(2, np.int64), np.zeros(2, np.int64), np.zeros(2, np.int64)
    lo, hi = np.full(2, 1 << 62, np.int64), np.full(2, -1, np.int64)
    slot, dur, own = (np.array(v, np.int64) for v in ([0, 1, 0], [5, 7, 3], [1, 2, 3]))
    LOOPS.table_add(slot, dur, own, calls, total, own_sum, lo, hi)
    assert calls.tolist() == [2, 1] and total.tolist() == [8, 7] and own_sum.tolist() == [4, 2]
    assert lo.tolist() == [3, 7] and hi.tolist() == [5, 7]
    with pytest.raises(ValueError, match="slot"):
        LOOPS.table_add(slot + 5, dur, own, calls, total, own_sum, lo, hi)
    assert calls.tolist() == [2, 1]  # nothing added
    child = np.zeros(3, np.int64)
    LOOPS.add_at(child, np.array([2, -1, 2], np.int64), np.array([4, 9, 5], np.int64))
    assert child.tolist() == [0, 0, 9]
