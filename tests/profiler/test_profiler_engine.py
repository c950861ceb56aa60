"""The profiler on the real engine: the guide's examples, backward, optimizer, data, Trainer."""

from __future__ import annotations

import json

import numpy as np
import pytest

import everyo as eo
from everyo.profiler import profile, runs
from everyo.profiler.analysis import run_analysis as analysis
from everyo.profiler.recording import hooks

# every test runs with the compiled and the pure-Python recorder (see conftest.py)
pytestmark = pytest.mark.usefixtures("recorder_impl")

GUIDE_PROFILE = """
import everyo as eo
from everyo.profiler import profile
model = eo.Sequential(
    eo.Linear(4, 16, seed=0),
    eo.ReLU(),
    eo.Linear(16, 2, seed=1)
)
x = eo.zeros(32, 4)
with profile(record_shapes=True) as profiler:
    for _ in range(20):
        output = model(x)
for row in profiler.summary():
    print(row)
"""

GUIDE_RECORD_FUNCTION = """
import everyo as eo
from everyo.profiler import (
    profile,
    record_function,
)
model = eo.Sequential(
    eo.Linear(4, 8, seed=0),
    eo.ReLU(),
    eo.Linear(8, 2, seed=1)
)
x = eo.zeros(64, 4)
with profile() as profiler:
    with record_function(
        "inference",
        batch_size=64
    ):
        result = model(x)
print(profiler.summary())
"""

GUIDE_CHROME = """
from pathlib import Path
from everyo.profiler import profile
Path("profiles").mkdir(exist_ok=True)
with profile() as profiler:
    output = model(x)
profiler.export_chrome_trace(
    "profiles/model-trace.json"
)
profiler.export_json(
    "profiles/raw-events.json"
)
"""


def test_guide_profiling_a_network(capsys):
    ns = {}
    exec(GUIDE_PROFILE, ns)
    out = capsys.readouterr().out.splitlines()
    rows = ns["profiler"].summary()
    # the container encloses its layers, so it comes first; Linear vs ReLU is up to the clock
    assert rows[0]["name"] == "Sequential"
    assert {r["name"]: r["calls"] for r in rows} == {"Sequential": 20, "Linear": 40, "ReLU": 20}
    assert len(out) == 3 and all("total_ms" in line and "mean_ms" in line for line in out)
    assert rows[0]["total_ms"] >= rows[1]["total_ms"] / 2  # the container encloses its layers
    paths = analysis.summarize(ns["profiler"].run, group_by="path")
    assert {r["name"] for r in paths} == {"Sequential", "0", "1", "2"}
    shapes = {e.shapes for e in ns["profiler"].events}
    assert "[(32, 4)] -> (32, 16)" in shapes and "[(32, 16)] -> (32, 2)" in shapes


def test_guide_record_function_and_chrome_export(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns = {}
    exec(GUIDE_RECORD_FUNCTION, ns)
    text = capsys.readouterr().out
    assert "inference" in text and "Sequential" in text
    inference = next(e for e in ns["profiler"].events if e.name == "inference")
    assert inference.metadata == {"batch_size": 64} and inference.kind == "user"
    exec(GUIDE_CHROME, ns)
    trace = json.loads((tmp_path / "profiles/model-trace.json").read_text())
    assert {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"} == {
        "Sequential",
        "Linear",
        "ReLU",
    }
    events = json.loads((tmp_path / "profiles/raw-events.json").read_text())
    assert len(events) == 4  # the reference's array of events, inner regions first
    assert [e["name"] for e in events] == ["Linear", "ReLU", "Linear", "Sequential"]


def test_training_step_records_backward_optimizer_and_data():
    rng = np.random.default_rng(0)
    ds = eo.ArrayDataset(rng.standard_normal((64, 4)).astype(np.float32), rng.integers(0, 3, 64))
    loader = eo.DataLoader(ds, batch_size=16)
    model = eo.Sequential(eo.Linear(4, 8, seed=0), eo.ReLU(), eo.Linear(8, 3, seed=1))
    loss_fn = eo.CrossEntropyLoss()
    opt = eo.optim.Adam(model.parameters(), lr=1e-2)
    with profile(label="train-test") as p:
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()
            opt.step()
    names = {(e.kind, e.name, e.path) for e in p.events}
    assert ("backward", "backward", "") in names
    assert ("backward", "Linear.backward", "0") in names
    assert ("backward", "Linear.backward", "2") in names
    assert ("optimizer", "Adam.step", "") in names
    assert ("data", "DataLoader.next", "") in names
    rows = {(r["kind"], r["name"]): r for r in p.summary()}
    assert rows[("optimizer", "Adam.step")]["calls"] == 4
    assert rows[("backward", "backward")]["calls"] == 4
    batch = p.run.snapshot()
    bw_children = batch.parent[(batch.kind == "backward") & (batch.depth > 0)]
    assert (batch.name[bw_children] == "backward").all()
    assert runs["train-test"] is p.run  # the default registry is the kernel-wide one


def test_record_ops_gives_module_flops_on_the_engine():
    model = eo.Sequential(eo.Linear(4, 16, seed=0), eo.ReLU(), eo.Linear(16, 2, seed=1))
    x = eo.zeros(32, 4)
    with profile(record_ops=True) as p:
        assert hooks.active.record_ops
        model(x)
    ops = [e for e in p.events if e.kind == "op"]
    assert ops and all(e.flops >= 0 for e in ops)  # every op here is classified (-1: unknown)
    rows = {r["name"]: r for r in p.summary(group_by="path")}
    # Linear(4, 16) on 32 rows: 2*32*4*16 multiply-adds plus the bias
    assert rows["0"]["flops"] >= 2 * 32 * 4 * 16
    assert rows["Sequential"]["flops"] >= rows["0"]["flops"] + rows["2"]["flops"]


def test_trainer_phases_are_recorded():
    rng = np.random.default_rng(1)
    ds = eo.ArrayDataset(rng.standard_normal((32, 4)).astype(np.float32), rng.integers(0, 2, 32))
    model = eo.Sequential(eo.Linear(4, 2, seed=0))
    trainer = eo.Trainer(model, eo.optim.SGD(model.parameters(), lr=0.1), eo.CrossEntropyLoss())
    with profile() as p:
        trainer.fit(eo.DataLoader(ds, batch_size=8), epochs=1, progress=False)
    kinds = {(e.kind, e.name) for e in p.events}
    assert {("train", "forward"), ("train", "backward"), ("train", "optimizer")} <= kinds
    assert ("optimizer", "SGD.step") in kinds


def _observer_loop_step():
    """A step of the loop the observer-effect benchmarks time (benchmarks/training_observer.py)."""
    model = eo.Sequential(eo.Linear(32, 64, seed=0), eo.ReLU(), eo.Linear(64, 8, seed=1))
    opt = eo.optim.SGD(model.parameters(), lr=1e-3)
    x = eo.ones(64, 32)

    def step():
        opt.zero_grad()
        eo.sum(model(x) ** 2).backward()
        opt.step()

    return step


def _rows(p) -> list:
    return [(e.kind, e.name, e.path, e.depth, e.parent, e.shapes) for e in p.events]


OBSERVER_STEP = [
    ("module", "Linear", "0", 1, 3, "[(64, 32)] -> (64, 64)"),
    ("module", "ReLU", "1", 1, 3, "[(64, 64)] -> (64, 64)"),
    ("module", "Linear", "2", 1, 3, "[(64, 64)] -> (64, 8)"),
    ("module", "Sequential", "", 0, -1, "[(64, 32)] -> (64, 8)"),
    ("backward", "sum.backward", "", 1, 9, ""),
    ("backward", "power.backward", "", 1, 9, ""),
    ("backward", "Linear.backward", "2", 1, 9, ""),
    ("backward", "ReLU.backward", "1", 1, 9, ""),
    ("backward", "Linear.backward", "0", 1, 9, ""),
    ("backward", "backward", "", 0, -1, ""),
    ("optimizer", "SGD.step", "", 0, -1, ""),
]


def test_training_step_events_exactly():
    """Every event of one training step, in row order: what the fast recording paths keep."""
    step = _observer_loop_step()
    with profile() as p:
        step()
    assert _rows(p) == OBSERVER_STEP
    with profile(record_shapes=False) as p:
        step()
    assert _rows(p) == [row[:5] + (None,) for row in OBSERVER_STEP]
    with profile() as p:  # repeated steps: the same events again, shapes from the cache
        for _ in range(3):
            step()
    assert _rows(p)[22:] == [
        row[:4] + (row[4] + 22 if row[4] >= 0 else -1, row[5]) for row in OBSERVER_STEP
    ]


def test_backward_grouping_without_backward_groups_is_the_same():
    """A profiler without the optional ``backward_groups`` gets every node through
    ``backward_node``; both ways give the same events."""

    class PerNode(eo.profiler.Profiler):
        backward_groups = None

    step = _observer_loop_step()
    with PerNode() as p:
        step()
    assert _rows(p) == OBSERVER_STEP


def test_warmup_ending_inside_backward_keeps_the_rest():
    step = _observer_loop_step()
    for skip in range(len(OBSERVER_STEP) + 1):
        with profile(warmup=skip) as p:
            step()
        kept = [row[:4] for row in _rows(p)]
        assert kept == [row[:4] for row in OBSERVER_STEP[skip:]], skip
        assert p.run.skipped == skip


@pytest.mark.parametrize("options", [{"record_ops": True}, {"profile_memory": True}])
def test_training_step_events_with_extra_columns(options):
    """With extra columns every event takes the general path (``Recorder._emit``): the same
    module, backward and optimizer events."""
    step = _observer_loop_step()
    with profile(**options) as p:
        step()
    got = [(e.kind, e.name, e.path, e.depth) for e in p.events if e.kind != "op"]
    assert got == [row[:4] for row in OBSERVER_STEP]
