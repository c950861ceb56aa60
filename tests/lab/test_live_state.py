"""The live dashboard's incremental state: fed in chunks, it agrees with the exact views."""

from __future__ import annotations

import numpy as np
import pytest
from views_runs import FakeClock, model_run, regions_run, synthetic_run

from everyo import _compiled
from everyo.errors import EveryOProfilerError
from everyo.profiler import Profiler, record_function
from everyo.profiler.analysis import aggregates
from everyo.profiler.analysis import run_analysis as analysis
from everyo.profiler.storage import run as run_module
from everyo.profiler.storage.run import Run
from everyo.profiler.storage.store import OPTIONAL_COLUMNS, EventStore
from everyo_lab.views import flame_figure, table_rows
from everyo_lab.views._batch import lanes
from everyo_lab.views.flame import live_flame
from everyo_lab.views.flame.live_flame import LiveFlame
from everyo_lab.views.live_session import LiveState


@pytest.fixture(autouse=True, params=["compiled", "numpy"])
def batch_loops(request, monkeypatch):
    """Every test twice: with the compiled batch loops (where built) and with NumPy's."""
    if request.param == "compiled" and _compiled.load("everyo.profiler.storage._cbatch") is None:
        pytest.skip("everyo.profiler.storage._cbatch is not built here")
    if request.param == "numpy":
        for module in (run_module, live_flame, aggregates):
            monkeypatch.setattr(module, "LOOPS", None)
    return request.param


def replay(run, cuts):
    """Batches of ``events_since`` on a copy of ``run`` whose store grows up to each cut."""
    src = run.store
    store = EventStore(optional=[c for c in src.columns if c in OPTIONAL_COLUMNS])
    for kind, name, path in src.keys:
        store.intern_key(kind, name, path)
    for text in src.shapes:
        store.intern_shape(text)
    store.threads = list(src.threads)
    copy = Run(store, label="replay", clock=lambda: 0, environment={})
    cursor = 0
    for cut in list(cuts) + [len(src)]:
        if cut > len(store):
            store.append(src.read(len(store), cut))
        batch, cursor = copy.events_since(cursor)
        yield batch


def fed(run, cuts, **kwargs) -> LiveState:
    state = LiveState(**kwargs)
    for batch in replay(run, cuts):
        state.feed(batch)
    return state


def random_run(seed: int, *, threads: int = 2, roots: int = 40) -> Run:
    """Random call trees on several threads, stored in post-order as the profiler writes them."""
    rng = np.random.default_rng(seed)
    cols = {k: [] for k in ("start_ns", "dur_ns", "key", "thread", "depth")}

    def tree(t0, t1, depth, tid):
        if depth < 5 and t1 - t0 > 4:
            t = t0 + 1
            for _ in range(int(rng.integers(0, 4))):
                a = int(rng.integers(t, t1)) if t < t1 else t1
                b = int(rng.integers(a, t1)) + 1 if a < t1 else a
                if b > t1 or b - a < 1:
                    break
                tree(a, min(b, t1), depth + 1, tid)
                t = b + 1
        cols["start_ns"].append(t0)
        cols["dur_ns"].append(t1 - t0)
        cols["key"].append(int(rng.integers(0, 5)))
        cols["thread"].append(tid)
        cols["depth"].append(depth)

    for tid in range(threads):
        t = int(rng.integers(0, 1000))
        for _ in range(roots):
            length = int(rng.choice([50, 5_000, 500_000]))
            tree(t, t + length, 0, tid)
            t += length + int(rng.integers(0, 3000))
    keys = [("module", "Linear", "0"), ("module", "ReLU", "1"), ("op", "matmul", "")]
    keys += [("user", "step", ""), ("module", "Linear", "2")]
    columns = {
        "start_ns": np.array(cols["start_ns"], np.int64),
        "dur_ns": np.array(cols["dur_ns"], np.int64),
        "key": np.array(cols["key"], np.int32),
        "thread": np.array(cols["thread"], np.int16),
        "depth": np.array(cols["depth"], np.int16),
    }
    threads_table = [(100 + i, f"worker-{i}") for i in range(threads)]
    store = EventStore.from_columns(columns, keys, threads=threads_table)
    run = Run(store, label=f"random-{seed}", clock=lambda: 0, environment={})
    run.finish()
    return run


def assert_same_aggregates(state: LiveState, run, group_by: str = "name") -> None:
    snap = run.snapshot()
    exact = analysis.summarize(snap, group_by=group_by)
    groups = state.table.groups(snap.keys, group_by)
    live = {}
    for i, label in enumerate(groups.labels):
        sid = int(groups.shape[i])
        live[(label, sid) if group_by == "shape" else label] = {
            f: int(getattr(groups, f)[i])
            for f in ("calls", "total_ns", "self_ns", "min_ns", "max_ns")
        }
    assert len(live) == len(exact)
    for row in exact:
        label = (row["kind"], row["name"])
        if group_by == "shape":
            label = (label, snap.shape_table.index(row["shapes"]) if row["shapes"] else -1)
        agg = live[label]
        assert agg["calls"] == row["calls"]
        assert agg["total_ns"] == round(row["total_ms"] * 1e6)
        assert agg["self_ns"] == round(row["self_ms"] * 1e6)
        assert agg["min_ns"] == round(row["min_ms"] * 1e6)
        assert agg["max_ns"] == round(row["max_ms"] * 1e6)


def assert_covered(state: LiveState, run, max_shapes: int = 20000) -> None:
    """Every event's interval lies inside one bar of its lane (the exact view's lanes)."""
    snap = run.snapshot()
    bars, _ = state.flame.bars(max_shapes)
    assert len(bars) <= max_shapes
    display, _ = state._display_lanes()
    lane = display[bars.lane]
    event_lane, _ = lanes(snap)
    start = snap.start_ns
    end = start + snap.dur_ns
    for ln in np.unique(event_lane):
        mine = lane == ln
        order = np.argsort(bars.start[mine], kind="stable")
        b_start, b_end = bars.start[mine][order], np.maximum.accumulate(bars.end[mine][order])
        ev = event_lane == ln
        at = np.searchsorted(b_start, start[ev], side="right") - 1
        assert (at >= 0).all(), f"lane {ln}: an event starts before every bar"
        assert (b_end[at] >= end[ev]).all(), f"lane {ln}: an event ends outside its bar"


@pytest.mark.parametrize("group_by", ["name", "path", "shape"])
def test_fed_one_event_at_a_time_equals_the_summary(group_by):
    run = model_run(iterations=4)
    state = fed(run, range(1, run.num_events))
    assert_same_aggregates(state, run, group_by)


@pytest.mark.parametrize("seed", range(6))
def test_random_trees_in_chunks_equal_the_summary(seed):
    run = random_run(seed)
    cuts = np.sort(np.random.default_rng(seed).integers(0, run.num_events, 7))
    state = fed(run, cuts)
    assert_same_aggregates(state, run, "name")
    assert_same_aggregates(state, run, "path")
    assert_covered(state, run)


def test_regions_and_synthetic_runs_equal_the_summary():
    for run in (regions_run(iterations=5), synthetic_run(3000)):
        state = fed(run, [1, 7, 100, 2500])
        assert_same_aggregates(state, run)
        assert_covered(state, run)


def test_live_rows_have_the_exact_table_columns():
    run = model_run(iterations=3)
    state = fed(run, [5, 11])
    wall = run.wall_ns
    exact = {r["name"]: r for r in table_rows(run, group_by="path")}
    live = state.table_rows(group_by="path", wall_ns=wall)
    assert [r["name"] for r in live] == sorted(exact, key=lambda n: -exact[n]["total_ms"])
    for row in live:
        ref = exact[row["name"]]
        for key in ("calls", "kind", "module", "path"):
            assert row[key] == ref[key]
        for key in ("total_ms", "self_ms", "mean_ms", "min_ms", "max_ms", "share"):
            assert row[key] == pytest.approx(ref[key])
        assert row["median_ms"] is None and row["std_ms"] is None  # final table only
    assert state.table_rows(top=2, sort_by="calls", wall_ns=wall)[0]["calls"] == 3 * 2


def test_shape_grouping_needs_shapes():
    state = fed(synthetic_run(10), [])
    with pytest.raises(EveryOProfilerError, match="record_shapes"):
        state.table_rows(group_by="shape")


def test_column_doubling_keeps_every_event_covered():
    run = synthetic_run(2000, step_ns=7_919)
    state = LiveState(columns=64)
    widths = []
    for i, batch in enumerate(replay(run, np.linspace(4, run.num_events, 12).astype(int))):
        state.feed(batch)
        widths.append(state.flame.width)
        if i % 4 == 3:
            assert_covered(state, _prefix(run, state.events))
    assert widths[-1] >= 8 * widths[0]  # the extent grew, the columns doubled several times
    assert_covered(state, run)
    assert len(state.flame.bars()[0]) <= 2 * 64 * 2 + len(state.flame.wide["start"])


def _prefix(run, n):
    store = EventStore()
    for kind, name, path in run.store.keys:
        store.intern_key(kind, name, path)
    store.threads = list(run.store.threads)
    store.append(run.store.read(0, n))
    return Run(store, label="prefix", clock=lambda: 0, environment={})


def test_bars_stay_under_max_shapes_with_many_lanes():
    run = random_run(3, threads=6, roots=60)
    state = fed(run, [500])
    n_lanes = len(state._lane_depth)
    for cap in (n_lanes, 300, 4000):
        assert_covered(state, run, max_shapes=cap)
    assert len(state.flame.bars(n_lanes // 2)[0]) == n_lanes // 2  # fewer than lanes: cut


def test_figure_matches_the_exact_view_when_nothing_is_merged():
    run = model_run(iterations=3)
    live = fed(run, [4, 9]).flame_figure(theme="dark")
    exact = flame_figure(run.snapshot(), theme="dark", by_call_path=False)
    assert live["layout"]["meta"]["events"] == exact["layout"]["meta"]["events"]
    assert live["layout"]["meta"]["bars"] == exact["layout"]["meta"]["bars"]
    as_set = [
        {(t["name"], b, x, y) for t in fig["data"] for b, x, y in zip(*_xy(t))}
        for fig in (
            live,
            exact,
        )
    ]
    assert as_set[0] == as_set[1]
    hover = {tuple(c) for t in live["data"] for c in t["customdata"]}
    assert hover == {tuple(c) for t in exact["data"] for c in t["customdata"]}
    assert live["layout"]["plot_bgcolor"] == exact["layout"]["plot_bgcolor"]


def _xy(trace):
    return trace["base"], trace["x"], trace["y"]


def test_threads_get_the_exact_views_bands():
    run = random_run(1, threads=3, roots=5)
    live = fed(run, [10]).flame_figure()
    exact = flame_figure(run.snapshot())
    assert live["layout"]["yaxis"]["ticktext"] == exact["layout"]["yaxis"]["ticktext"]
    assert live["layout"]["yaxis"]["tickvals"] == exact["layout"]["yaxis"]["tickvals"]


def test_empty_state_draws_the_empty_figure():
    fig = LiveState().flame_figure()
    assert fig["data"] == [] and "no events" in str(fig["layout"]["annotations"])
    assert LiveState().table_rows() == []


def test_state_size_does_not_grow_with_events():
    """What a refresh reads is O(lanes x columns + keys): the same at 40k and at 1M events."""

    def nbytes(state):
        flame = state.flame
        arrays = [*flame.cols.values(), *flame.wide.values()]
        table = state.table
        arrays += [table.calls, table.total_ns, table.self_ns, table.min_ns, table.max_ns]
        return sum(a.nbytes for a in arrays)

    small, big = synthetic_run(10_000), synthetic_run(250_000)
    a, b = fed(small, [20_000]), fed(big, [500_000])
    assert b.events == 1_000_000
    assert nbytes(a) == nbytes(b)
    before = nbytes(b)
    b.feed(next(replay(small, [1])))  # one more event: nothing grows
    assert nbytes(b) == before and len(b.flame_figure(max_shapes=4000)["data"]) >= 1


def test_flame_rejects_odd_columns():
    with pytest.raises(ValueError, match="even"):
        LiveFlame(columns=25)


class _GrowingRun:
    """A running run whose ``snapshot`` must not be read by a live refresh."""

    def __init__(self, run):
        self._run = run
        self.rows_read = []

    def __getattr__(self, name):
        return getattr(self._run, name)

    def events_since(self, cursor=0):
        batch, new = self._run.events_since(cursor)
        self.rows_read.append(len(batch))
        return batch, new

    def snapshot(self):
        raise AssertionError("a live refresh read every event")


def test_dashboard_live_refresh_reads_only_new_events():
    pytest.importorskip("anywidget")
    from everyo_lab.widgets.dashboard import Dashboard

    p = Profiler(label="incremental", registry=None, clock=FakeClock(500)).start()
    try:
        board = Dashboard(p.run)
        spy = _GrowingRun(p.run)
        board._run = spy
        board._stream.run = spy
        for n in (3, 5, 2):
            for _ in range(n):
                with record_function("step"):
                    with record_function("inner"):
                        pass
            p.flush()
            board.refresh(live=True)
        assert spy.rows_read == [6, 10, 4]
        assert board._stream.sent == 20
        live = {r["name"]: r["calls"] for r in board.shown_report["rows"]}
        assert live == {"step": 10, "inner": 10}
        assert board.icicle == {}  # the icicle waits for the end
    finally:
        p.stop()
    board._run = board._stream.run = p.run
    board.refresh()
    exact = {r["name"]: r for r in board.shown_report["rows"]}
    assert exact["step"]["calls"] == 10 and exact["step"]["median_ms"] is not None
    assert len(board.icicle["data"]) == 1


def test_table_option_change_while_live_reorders_the_live_rows():
    pytest.importorskip("anywidget")
    from everyo_lab.widgets.dashboard import Dashboard

    p = Profiler(label="resort", registry=None, clock=FakeClock(500)).start()
    try:
        board = Dashboard(p.run)
        for _ in range(4):
            with record_function("step"):
                with record_function("inner"):
                    pass
        p.flush()
        board.refresh(live=True)
        assert board.shown_report["rows"][0]["median_ms"] is None  # live rows
        board.sort_by = "self_ms"  # what clicking a header does
        board.descending = False
        rows = board.shown_report["rows"]
        assert [r["self_ms"] for r in rows] == sorted(r["self_ms"] for r in rows)
        assert board.shown_report["live"]
    finally:
        p.stop()


def test_live_steps_equal_the_exact_steps_at_every_refresh():
    """The dashboard keeps the steps' summary up to date from the new rows (StepStats); at every
    refresh it is the one step_summary gives on the whole run so far, also once profiler.step()
    marks take over from the optimizer steps."""
    pytest.importorskip("anywidget")
    from everyo.profiler.recording import hooks
    from everyo_lab.widgets.dashboard import Dashboard

    clock = FakeClock()
    p = Profiler(label="steps", registry=None, clock=clock).start()
    try:
        board = Dashboard(p.run)
        for durations in ((30, 10, 20), (10, 10), (50, 5, 5, 40)):
            for dt in durations:
                with record_function("forward"):
                    clock.advance(dt)
                with hooks.active.region("SGD.step", "optimizer"):
                    clock.advance(5)
            p.flush()
            board.refresh(live=True)
            assert board.shown_report["steps"] == analysis.step_summary(
                *analysis.step_bounds(p.run)
            )
        assert board.shown_report["steps"]["count"] == 9
        for dt in (7, 3):
            clock.advance(dt)
            p.step()  # marks win over the optimizer steps, live as at the end
        board.refresh(live=True)
        steps = board.shown_report["steps"]
        assert steps == analysis.step_summary(*analysis.step_bounds(p.run))
        assert (steps["count"], steps["source"]) == (2, "profiler.step()")
    finally:
        p.stop()


SUMS = ("calls", "total_ms", "self_ms", "min_ms", "max_ms", "mean_ms", "share")


def assert_live_rows_are_the_final_rows(state: LiveState, run, group_by: str) -> None:
    """At the end of a run, every live row is the final row of the same label, equal (not
    close) in the columns both have: one kernel made them."""
    wall = run.wall_ns
    final = {(r["label"], r.get("shapes")): r for r in table_rows(run, group_by=group_by)}
    live = {
        (r["label"], r.get("shapes")): r for r in state.table_rows(group_by=group_by, wall_ns=wall)
    }
    assert live.keys() == final.keys()
    for label, row in live.items():
        assert {k: row[k] for k in SUMS} == {k: final[label][k] for k in SUMS}, label
        assert row["median_ms"] is None and final[label]["median_ms"] is not None


def threads_run() -> Run:
    """Three threads, each nesting regions around the guide's MLP, recorded for real."""
    import threading

    import everyo as eo

    model = eo.Sequential(eo.Linear(4, 8, seed=0), eo.ReLU(), eo.Linear(8, 2, seed=1))
    p = Profiler(label="threads", registry=None, record_shapes=True).start()

    def work(n):
        for i in range(n):
            with record_function("step"):
                with record_function("forward"):
                    model(eo.zeros(1 + i % 3, 4))  # three input shapes

    try:
        workers = [threading.Thread(target=work, args=(20 + 5 * k,)) for k in range(3)]
        for t in workers:
            t.start()
        work(10)
        for t in workers:
            t.join()
    finally:
        p.stop()
    return p.run


@pytest.mark.parametrize("group_by", ["name", "path", "shape"])
@pytest.mark.parametrize(
    "make",
    [
        lambda: model_run(iterations=5),  # nested modules, with shapes
        threads_run,  # several threads
        lambda: regions_run(iterations=4),  # regions (no shapes)
        lambda: random_run(4, threads=3),  # deep random trees on three threads
    ],
    ids=["modules", "threads", "regions", "random"],
)
def test_live_rows_at_the_end_of_a_run_are_the_final_rows(make, group_by):
    run = make()
    state = fed(run, np.linspace(1, run.num_events - 1, 6).astype(int))
    if group_by == "shape" and run.snapshot().shape_id is None:
        for source in (
            lambda: state.table_rows(group_by="shape"),
            lambda: table_rows(run, group_by="shape"),
        ):
            with pytest.raises(EveryOProfilerError, match="record_shapes"):
                source()
        return
    assert_live_rows_are_the_final_rows(state, run, group_by)


def test_live_rows_of_a_session_read_while_threads_record_are_the_final_rows():
    """The dashboard's path: a LiveSession reads and folds while three threads record; once
    the run stops and the last rows are folded, its rows are the final report's."""
    import threading

    from everyo_lab.views.live_session import LiveSession

    p = Profiler(label="live-threads", registry=None, record_shapes=True).start()
    session = LiveSession(p.run)
    stop = threading.Event()

    def work():
        while not stop.is_set():
            with record_function("step"):
                with record_function("inner"):
                    pass

    workers = [threading.Thread(target=work) for _ in range(3)]
    try:
        for t in workers:
            t.start()
        for _ in range(5):
            p.flush()
            session.fold(session.read())
        stop.set()
        for t in workers:
            t.join()
    finally:
        stop.set()
        p.stop()
    session.fold(session.read())
    assert session.state.events == p.run.num_events > 0
    for group_by in ("name", "path", "shape"):
        assert_live_rows_are_the_final_rows(session.state, p.run, group_by)
