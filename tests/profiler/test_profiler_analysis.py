"""Analysis: summary columns and values (fake clock), grouping, sorting, call tree, diff."""

from __future__ import annotations

import numpy as np
import pytest
from profiler_fakes import FakeClock, mlp

from everyo.errors import EveryOProfilerError
from everyo.profiler import profile, record_function
from everyo.profiler.analysis import run_analysis as analysis


@pytest.fixture
def run20(clock, registry):
    """The guide's example with a fake clock: 20 calls of Sequential(Linear, ReLU, Linear)."""
    model = mlp(clock)
    with profile(clock=clock, registry=registry, label="r20") as p:
        for i in range(20):
            clock.advance(40)  # time outside any module
            model.children[0].work_ns = 10 + i  # Linear "0" gets slower each call
            model(np.zeros((32, 4)))
    return p


def test_summary_rows_hold_guide_columns_sorted_by_total(run20):
    rows = run20.summary()
    assert [r["name"] for r in rows] == ["Sequential", "Linear", "ReLU"]
    for r in rows:
        assert {
            "name",
            "calls",
            "total_ms",
            "mean_ms",
            "max_ms",
            "min_ms",
            "median_ms",
            "std_ms",
            "self_ms",
            "share",
            "kind",
            "path",
        } <= set(r)
    seq, lin, relu = rows
    assert seq["calls"] == 20 and lin["calls"] == 40 and relu["calls"] == 20
    lin0 = [10 + i for i in range(20)]
    lin_all = np.array(lin0 + [30] * 20)
    assert lin["total_ms"] == pytest.approx(lin_all.sum() / 1e6)
    assert lin["mean_ms"] == pytest.approx(lin_all.mean() / 1e6)
    assert lin["max_ms"] == pytest.approx(30e-6) and lin["min_ms"] == pytest.approx(10e-6)
    assert lin["median_ms"] == pytest.approx(np.median(lin_all) / 1e6)
    assert lin["std_ms"] == pytest.approx(lin_all.std() / 1e6)
    assert seq["self_ms"] == pytest.approx(20 * 100 / 1e6)
    assert lin["path"] == ""  # two paths, "0" and "2"
    assert relu["path"] == "1"
    wall = run20.run.wall_ns
    assert seq["share"] == pytest.approx(seq["total_ms"] * 1e6 / wall)


def test_group_by_path_and_shape(run20):
    rows = run20.summary(group_by="path")
    names = {r["name"]: r for r in rows}
    assert set(names) == {"Sequential", "0", "1", "2"}
    assert names["Sequential"]["path"] == "" and names["0"]["module"] == "Linear"
    assert names["0"]["total_ms"] == pytest.approx(sum(10 + i for i in range(20)) / 1e6)
    shaped = run20.summary(group_by="shape")
    assert {(r["name"], r["shapes"]) for r in shaped} == {
        ("Sequential", "[(32, 4) float64] -> (32, 2) float64"),  # (NumPy's default dtype)
        ("Linear", "[(32, 4) float64] -> (32, 16) float64"),
        ("Linear", "[(32, 16) float64] -> (32, 2) float64"),
        ("ReLU", "[(32, 16) float64] -> (32, 16) float64"),
    }


def test_sort_top_and_ascending(run20):
    rows = run20.summary(sort_by="calls", top=1)
    assert len(rows) == 1 and rows[0]["name"] == "Linear"
    rows = run20.summary(sort_by="self_ms", descending=False)
    assert [r["self_ms"] for r in rows] == sorted(r["self_ms"] for r in rows)


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"group_by": "layer"}, "name, path, shape"),
        ({"sort_by": "speed"}, "total_ms"),
        ({"top": 0}, "top"),
    ],
)
def test_bad_options_list_valid_values(run20, kw, match):
    with pytest.raises(EveryOProfilerError, match=match):
        run20.summary(**kw)


def test_shape_grouping_needs_shapes(clock, registry):
    with profile(clock=clock, registry=registry, record_shapes=False) as p:
        mlp(clock)(np.zeros((2, 4)))
    with pytest.raises(EveryOProfilerError, match="record_shapes=True"):
        p.summary(group_by="shape")


def test_summary_prints_an_aligned_table_and_converts_to_dataframe(run20):
    table = run20.summary()
    text = str(table)
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["name", "kind", "calls"]
    end = lines[0].index("total_ms") + len("total_ms")  # numbers are right-aligned under it
    for line, row in zip(lines[2:5], table):
        assert line[:end].endswith(f"{row['total_ms']:.3f}")
    assert "wall time" in text
    pd = pytest.importorskip("pandas")
    df = table.to_dataframe()
    assert isinstance(df, pd.DataFrame) and list(df["name"]) == ["Sequential", "Linear", "ReLU"]


def test_self_times_subtract_children(run20):
    batch = run20.run.snapshot()
    selfs = analysis.self_times(batch)
    assert selfs.dtype == np.int64
    root = batch.depth == 0
    assert (selfs[root] == 100).all()
    assert (selfs[~root] == batch.dur_ns[~root]).all()


def test_call_tree_for_icicle(run20):
    nodes = analysis.call_tree(run20.run)
    ids = [n["id"] for n in nodes]
    assert ids == ["Sequential", "Sequential/0", "Sequential/1", "Sequential/2"]
    root = nodes[0]
    assert root["parent"] == "" and root["calls"] == 20
    assert root["total_ns"] == sum(n["total_ns"] for n in nodes[1:]) + root["self_ns"]
    assert all(n["parent"] == "Sequential" for n in nodes[1:])
    by_name = analysis.call_tree(run20.run, by="name")
    assert [n["label"] for n in by_name] == ["Sequential", "Linear", "ReLU"]
    assert by_name[1]["calls"] == 40
    with pytest.raises(EveryOProfilerError, match="by"):
        analysis.call_tree(run20.run, by="shape")


def test_call_tree_nests_regions_and_backward(clock, registry):
    with profile(clock=clock, registry=registry) as p:
        with record_function("train_step"):
            mlp(clock)(np.zeros((1, 4)))
    ids = [n["id"] for n in analysis.call_tree(p)]
    assert ids[:2] == ["train_step", "train_step/Sequential"]
    assert "train_step/Sequential/1" in ids


def test_diff_and_top_self(run20, registry):
    clock = FakeClock()
    model = mlp(clock)
    with profile(clock=clock, registry=registry) as other:
        for _ in range(20):
            model(np.zeros((32, 4)))
    rows = analysis.diff(run20.run, other.run, by="path")
    first = rows[0]
    assert first["name"] == "0" and first["calls_a"] == first["calls_b"] == 20
    assert first["delta_ms"] == pytest.approx((20 * 10 - sum(10 + i for i in range(20))) / 1e6)
    assert "delta_ms" in str(rows)
    top = analysis.top_self(run20.run, k=1)
    assert len(top) == 1 and top[0]["name"] == "Sequential"


def test_summary_of_batch_and_live_batches(run20):
    batch, cursor = run20.run.events_since(0)
    assert cursor == 80
    rows = analysis.summarize(batch)
    assert rows[0]["calls"] == 20
    tail, cursor2 = run20.run.events_since(76)
    assert len(tail) == 4 and cursor2 == 80 and tail.row[0] == 76
    rows = analysis.summarize(tail)  # keys with no rows in this batch give no rows
    assert sum(r["calls"] for r in rows) == 4 and all(r["calls"] > 0 for r in rows)


def test_run_notes_say_when_the_threads_outnumbered_the_cores_on_a_quiet_machine(run20):
    # threads=None with 3 BLAS threads on 2 cores: they take turns even with nothing else
    # running, and the state's reason says so; the notes beside the figures must show it
    quiet = {"verdict": "quiet", "usable_cores": 2, "others_cores": 0.0, "blas_threads": 3}
    quiet["reason"] = (
        "other processes used 0.0 of 2 cores; 3 BLAS threads, more than the 2 usable cores"
    )
    run20.run.machine = dict(quiet)
    assert any("more than the 2 usable cores" in n for n in analysis.run_notes(run20.run))
    run20.run.machine = dict(quiet, blas_threads=2, reason="other processes used 0.0 of 2 cores")
    assert not any(n.startswith("Machine:") for n in analysis.run_notes(run20.run))


def test_the_analysis_package_reaches_every_function_of_run_analysis():
    """``everyo.profiler.analysis.summarize`` and its kin load lazily from ``run_analysis`` by a
    list of names: a public function added there and not listed would be unreachable."""
    import inspect

    import everyo.profiler as ep
    from everyo.profiler import analysis
    from everyo.profiler.analysis import run_analysis

    defined = {
        name
        for name, fn in vars(run_analysis).items()
        if inspect.isfunction(fn)
        and fn.__module__ == run_analysis.__name__
        and not name.startswith("_")
    }
    assert set(analysis.FUNCTIONS) == defined
    assert all(getattr(ep.analysis, name) is getattr(run_analysis, name) for name in defined)
    with pytest.raises(AttributeError):
        analysis.not_a_function  # noqa: B018
