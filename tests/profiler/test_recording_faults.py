"""Recording faults of the second audit (issue 36): module identity by address, the shape cache,
interrupts at any line, an interrupted stop, many threads, and what stop does to open calls.

Every test runs with the compiled and the pure-Python recorder (see conftest.py).
"""

from __future__ import annotations

import gc
from collections import Counter

import pytest

import everyo as eo
from everyo.profiler import Profiler

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
            gc.collect()
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
