"""Recording faults of the second audit (issue 36): module identity by address, the shape cache,
many threads, and what stop does to open calls (interrupts: test_recording_interrupts.py).

Every test runs with the compiled and the pure-Python recorder (see conftest.py).
"""

from __future__ import annotations

from collections import Counter, UserDict

import numpy as np
import pytest
from recording_checks import check_nesting, record_work

import everyo as eo
from everyo.errors import EveryOProfilerError
from everyo.profiler import Profiler, RunRegistry, record_function
from everyo.profiler.recording import recorder

pytestmark = pytest.mark.usefixtures("recorder_impl")


# -- fault 1: a module's identity is not the address of an object that may die ----------------
def test_modules_freed_during_a_profile_do_not_lend_their_names(registry):
    x = eo.zeros(4, 3)
    with Profiler(registry=registry) as p:
        for _ in range(100):
            relu = eo.ReLU()
            relu(x)
            del relu  # the next module is likely to be made at this address
            sigmoid = eo.Sigmoid()
            sigmoid(x)
            del sigmoid
    assert Counter(e.name for e in p.events) == {"ReLU": 100, "Sigmoid": 100}


class _Fresh(eo.Module):
    """Builds a new activation inside every forward (a pattern the audit found misfiled)."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        act = eo.ReLU() if self.calls % 2 else eo.Sigmoid()
        return act(act(x))  # twice: the compiled path caches a module seen before


def test_modules_built_inside_forward_keep_their_own_names(registry):
    model = eo.Sequential(eo.Linear(3, 3, seed=0), _Fresh())
    x = eo.zeros(2, 3)
    with Profiler(registry=registry) as p:
        for _ in range(50):
            model(x)
    inner = [(e.name, e.path) for e in p.events if e.depth == 2]
    assert inner == ([("ReLU", "1.ReLU")] * 2 + [("Sigmoid", "1.Sigmoid")] * 2) * 25


def test_a_replaced_child_is_recorded_under_its_own_class(registry):
    model = eo.Sequential(eo.Linear(3, 3, seed=0), eo.ReLU())
    x = eo.zeros(2, 3)
    with Profiler(registry=registry) as p:
        for i in range(40):
            model(x)
            model[1] = eo.Sigmoid() if i % 2 == 0 else eo.ReLU()  # the old child is freed
    got = [e.name for e in p.events if e.depth == 1 and e.path == "1"]
    assert got == ["ReLU", "Sigmoid"] * 20


def test_a_model_rebuilt_in_a_loop_keeps_no_dead_keymaps(registry):
    x = eo.zeros(2, 3)
    with Profiler(registry=registry) as p:
        for i in range(30):
            act = eo.ReLU() if i % 2 else eo.Tanh()
            eo.Sequential(eo.Linear(3, 3, seed=i), act)(x)
            del act
        held = len(p._recorder._roots)
    names = [e.name for e in p.events if e.depth == 1 and e.path == "1"]
    assert names == ["Tanh", "ReLU"] * 15
    assert held <= 2  # the dead models' keymaps went with them


# -- fault 2: the shape cache tells apart every call whose shapes differ ----------------------
class _Pool(eo.Module):
    def forward(self, *args, **kwargs):
        return eo.zeros(1, 3)  # the same output whatever the inputs


class _Pair(eo.Module):
    def __init__(self):
        super().__init__()
        self.extra = eo.zeros(1)

    def forward(self, x):
        return (x, self.extra)


def test_lists_of_tensors_do_not_reuse_the_first_calls_shapes(registry):
    model = _Pool()
    with Profiler(registry=registry) as p:
        model([eo.zeros(2, 3), eo.zeros(4, 3)])
        model([eo.zeros(5, 3)])
        model((eo.zeros(6, 1), eo.zeros(6, 1)))
        model([eo.zeros(2, 3), eo.zeros(4, 3)])
    assert [e.shapes for e in p.events] == [
        "[((2, 3), (4, 3))] -> (1, 3)",
        "[((5, 3))] -> (1, 3)",
        "[((6, 1), (6, 1))] -> (1, 3)",
        "[((2, 3), (4, 3))] -> (1, 3)",
    ]
    rows = p.summary(group_by="shape")
    assert sorted(r["calls"] for r in rows) == [1, 1, 2]


def test_tuple_outputs_and_keyword_lists_keep_their_own_shapes(registry):
    pair, pool, x = _Pair(), _Pool(), eo.zeros(2, 3)
    with Profiler(registry=registry) as p:
        pair(x)
        pair.extra = eo.zeros(5)
        pair(x)
        pool(x, xs=[eo.zeros(1, 1)])
        pool(x, xs=[eo.zeros(2, 2)])
    assert [e.shapes for e in p.events] == [
        "[(2, 3)] -> ((2, 3), (1,))",
        "[(2, 3)] -> ((2, 3), (5,))",
        "[(2, 3), xs=((1, 1))] -> (1, 3)",
        "[(2, 3), xs=((2, 2))] -> (1, 3)",
    ]


# -- a `.shape` that raises never turns a call that succeeded into an error --------------------
class _BadShape:
    calls = 0

    @property
    def shape(self):
        _BadShape.calls += 1
        raise RuntimeError("no shape today")


class _Echo(eo.Module):
    def forward(self, x, *rest, **kw):
        return x


def test_a_shape_property_that_raises_does_not_fail_the_call(registry):
    model = _Echo()
    bad = _BadShape()
    with Profiler(registry=registry) as p:
        assert model(bad) is bad
        assert model(bad) is bad
        assert model(eo.zeros(2, 2), bad) is not None
        assert model(eo.zeros(2, 2), mask=bad) is not None
        assert model([bad, eo.zeros(1, 2)]) is not None
    assert _BadShape.calls > 0
    assert [e.shapes for e in p.events] == [
        "[]",
        "[]",
        "[(2, 2)] -> (2, 2)",
        "[(2, 2)] -> (2, 2)",
        "[((1, 2))] -> ((1, 2))",
    ]
    assert p.run.status == "completed"


# -- fault 5: many threads, deep module calls ---------------------------------------------------
def test_more_than_32767_threads_widen_the_thread_column(registry):
    import threading

    p = Profiler(registry=registry)
    with p:
        for i in range(33_000):  # (as many threads' rows as 33,000 threads that ran before)
            p.store.add_thread(10_000_000 + i, f"gone-{i}")
        with record_function("main"):
            pass
        t = threading.Thread(target=record_work, args=(2,), name="late")
        t.start()
        t.join()
    assert p.run.status == "completed"
    batch = p.run.snapshot()
    names = {p.store.threads[i][1] for i in batch.thread}
    assert names == {threading.current_thread().name, "late"}
    assert batch.thread.max() > 33_000 and batch.thread.dtype == np.int32
    assert [e.name for e in p.events][-1] == "r"


def test_parents_of_rows_from_many_threads_are_found_per_thread():
    from everyo.profiler.storage.run import _postorder_parents_numpy

    rng = np.random.default_rng(0)
    # 40,000 rows of 33,000 threads, then two threads' nested rows (child, child, parent)
    thread = np.concatenate([rng.integers(0, 33_000, 40_000), [5, 6, 5, 6, 5, 6]])
    depth = np.concatenate([np.zeros(40_000), [1, 1, 1, 1, 0, 0]]).astype(np.int16)
    parent = _postorder_parents_numpy(thread.astype(np.int32), depth)
    n = 40_000
    assert list(parent[n:]) == [n + 4, n + 5, n + 4, n + 5, -1, -1]
    assert (parent[depth == 0] == -1).all()


class _Recursive(eo.Module):
    def forward(self, x, n):
        return x if n == 0 else self(x, n - 1)


def test_module_calls_nested_past_the_depth_limit_are_refused_not_wrapped(registry, monkeypatch):
    import everyo.profiler.recording.regions as regions

    monkeypatch.setattr(regions, "MAX_DEPTH", 40)
    model = _Recursive()
    with Profiler(registry=registry) as p:
        model(eo.zeros(1), 39)  # 40 levels: fits
        with pytest.raises(EveryOProfilerError, match="deeper than 40"):
            model(eo.zeros(1), 45)
        model(eo.zeros(1), 0)
    depths = [e.depth for e in p.events]
    assert max(depths) == 39 and min(depths) == 0
    assert p.events[-1].depth == 0
    check_nesting(p.events)


# -- misleads: what module_call takes, and stopping inside a module call ----------------------
class _Args(eo.Module):
    def forward(self, *args, **kwargs):
        return len(args), sorted(kwargs)


_CALLS = {
    "tuple": ((1, 2), {"a": 1}),
    "kwargs None": ((1, 2), None),
    "kwargs a mapping": ((1,), UserDict(a=1)),
    "args a list": ([1, 2], {}),
    "args a str": ("ab", {}),
    "args None": (None, {}),
    "kwargs a list": ((1,), [("a", 1)]),
    "kwargs an empty list": ((1,), []),
}


def _outcomes(rec, module) -> dict:
    out = {}
    for name, (args, kwargs) in _CALLS.items():
        try:
            out[name] = rec.module_call(module, module.forward, args, kwargs)
        except TypeError as e:
            out[name] = str(e)
    return out


@pytest.mark.skipif(recorder.CRecorder is None, reason="the C extension was not built here")
def test_both_module_call_paths_take_and_refuse_the_same_arguments(monkeypatch):
    got = {}
    for cls in (recorder.CRecorder, recorder.PythonRecorder):
        monkeypatch.setattr(recorder, "Recorder", cls)
        with Profiler(registry=RunRegistry()) as p:
            got[cls] = _outcomes(p._recorder, _Args())
    assert got[recorder.CRecorder] == got[recorder.PythonRecorder]
    python = got[recorder.PythonRecorder]
    assert python["tuple"] == (2, ["a"]) and python["kwargs None"] == (2, [])
    assert python["kwargs a mapping"] == (1, ["a"])
    assert python["args a list"] == "module_call: args must be a tuple, not list"
    assert python["kwargs an empty list"] == (
        "module_call: kwargs must be a mapping or None, not list"
    )


class _StopsInside(eo.Module):
    def __init__(self, profiler):
        super().__init__()
        self.profiler, self.inner = profiler, eo.Linear(2, 2, seed=0)

    def forward(self, x):
        x = self.inner(x)
        with record_function("inside"):
            x = self.inner(x)
            self.profiler.stop()  # stopped while this call and the region are open
        return self.inner(x)  # (not recorded: after stop)


def test_events_open_at_stop_are_kept_so_their_children_keep_their_parent(registry):
    p = Profiler(registry=registry)
    p.start()
    model = _StopsInside(p)
    model(eo.zeros(1, 2))
    events = p.events
    assert [(e.name, e.depth) for e in events] == [
        ("Linear", 1),
        ("Linear", 2),
        ("inside", 1),
        ("_StopsInside", 0),
    ]
    assert all(e.parent >= 0 for e in events if e.depth > 0)
    check_nesting(events)
    assert p.run.status == "completed"


def test_entering_a_region_does_not_look_at_every_open_region(monkeypatch):
    """Issue 44, case 5: each `record_function` entry checked every open region against the
    whole stack (N nested regions: N³ steps; 1,600 took 17.7 s). Now a region's entry looks at
    the innermost open one only while none was abandoned: counted, not timed."""
    import sys

    from everyo.profiler import Profiler, RunRegistry, record_function
    from everyo.profiler.recording import regions

    looked = []
    real = regions.is_abandoned
    monkeypatch.setattr(regions, "is_abandoned", lambda r, c: looked.append(1) or real(r, c))

    def nest(n):
        if n:
            with record_function("level"):
                nest(n - 1)

    depth = 3000
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * depth))
    try:
        with Profiler(registry=RunRegistry()) as p:
            nest(depth)
    finally:
        sys.setrecursionlimit(limit)
    assert p.run.num_events == depth
    assert len(looked) <= depth  # (it was depth² / 2)
