"""The two module-call paths of the recorder: compiled (``_crecorder``) and pure Python."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from profiler_fakes import FakeClock, mlp

import everyo as eo
from everyo import _compiled
from everyo.nn import module as nn_module
from everyo.profiler import Profiler, RunRegistry, record_function
from everyo.profiler.recording import hooks, recorder


def _events(cls, monkeypatch, work):
    monkeypatch.setattr(recorder, "Recorder", cls)
    clock = FakeClock(tick=7)
    p = Profiler(clock=clock, registry=RunRegistry())
    with p:
        work(clock)
    return [
        (e.kind, e.name, e.path, e.depth, e.parent, e.start_ns, e.duration_ns, e.shapes)
        for e in p.events
    ]


def _workload(clock):
    model = mlp(clock)
    for n in (2, 2, 3, 2):  # repeated shapes reuse the last call's packed int; 3 is a new shape
        model(np.zeros((n, 4)))
    real = eo.Sequential(eo.Linear(4, 3, seed=0), eo.ReLU())
    real(eo.zeros(2, 4))
    real(eo.zeros(2, 4))
    real(eo.zeros(5, 4))  # same rank, new size: the compiled path compares dims in place
    real(eo.zeros(2, 4))
    real(eo.zeros(2, 1, 4))  # one more dimension
    real(eo.zeros(2, 4, dtype="float64"))  # same shape, other dtype: another shape id
    real[1].register_forward_hook(lambda mod, args, out: None)  # through _call_impl
    real(eo.zeros(2, 4))


@pytest.mark.skipif(recorder.CRecorder is None, reason="the C extension was not built here")
def test_compiled_and_python_paths_record_the_same_events(monkeypatch):
    compiled = _events(recorder.CRecorder, monkeypatch, _workload)
    python = _events(recorder.PythonRecorder, monkeypatch, _workload)
    assert compiled == python
    assert len(compiled) == 4 * 4 + 7 * 3
    real = [e[-1] for e in compiled if e[1] == "Linear" and "3)" in e[-1].split(" -> ")[1]]
    assert real == [
        *["[(2, 4)] -> (2, 3)"] * 2,
        "[(5, 4)] -> (5, 3)",
        "[(2, 4)] -> (2, 3)",
        "[(2, 1, 4)] -> (2, 1, 3)",
        "[(2, 4) float64] -> (2, 3) float64",
        "[(2, 4)] -> (2, 3)",
    ]


@pytest.mark.skipif(recorder.CRecorder is None, reason="the C extension was not built here")
def test_compiled_path_reads_the_same_clock_as_perf_counter_ns(monkeypatch):
    monkeypatch.setattr(recorder, "Recorder", recorder.CRecorder)
    model = eo.Sequential(eo.Linear(4, 3, seed=0))
    p = Profiler(registry=RunRegistry())
    with p:
        model(eo.zeros(2, 4))  # the outermost call: thread set-up
        before = time.perf_counter_ns()
        model(eo.zeros(2, 4))
        after = time.perf_counter_ns()
    inner = [e for e in p.events if e.path == "0"][-1]
    start = p.run.t0_ns + inner.start_ns
    assert before <= start and start + inner.duration_ns <= after


def test_ci_runs_the_compiled_path():
    """CI sets EVERYO_REQUIRE_COMPILED=1: there the extension must be built and in use."""
    if not os.environ.get("EVERYO_REQUIRE_COMPILED"):
        pytest.skip("EVERYO_REQUIRE_COMPILED is not set (only CI requires the extension)")
    recording = (
        "nn._cmodule",
        "profiler.recording._crecorder",
        "profiler.storage._cbatch",
        "profiler.sampling._csampler",
    )
    assert {n: _compiled.why(f"everyo.{n}") for n in recording} == dict.fromkeys(recording)
    assert recorder.IMPLEMENTATION == "c"
    assert recorder.Recorder is recorder.CRecorder
    assert nn_module.IMPLEMENTATION == "c", "the engine's _cmodule was not built or not bound"


def test_pure_python_can_be_forced(tmp_path):
    import subprocess
    import sys

    code = (
        "import everyo.profiler.recording.recorder as r, everyo.profiler.analysis.aggregates as a,"
        " everyo.profiler.sampling.sampler as s;"
        " print(r.IMPLEMENTATION, a.LOOPS, s.compiled())"
    )
    env = {**os.environ, "EVERYO_PURE_PYTHON": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "python None None", out.stderr


def test_stopped_recorders_give_their_thread_keys_back():
    """The compiled recorder holds an OS thread-specific key while it records; profilers kept
    alive after they stop (a list of them, a sweep) must not run the process out of keys
    (PTHREAD_KEYS_MAX is 1024 on Linux)."""
    model = eo.Sequential(eo.Linear(2, 2, seed=0))
    kept = []
    for _ in range(1100):
        p = Profiler(registry=RunRegistry())
        with p:
            model(eo.zeros(1, 2))
        kept.append(p)
    assert all(len(p.events) == 2 for p in kept[-3:])
    kept[0].start()  # a resumed profiler records through a new key
    model(eo.zeros(1, 2))
    kept[0].stop()
    assert len(kept[0].events) == 4


@pytest.mark.skipif(recorder.CRecorder is None, reason="the C extension was not built here")
def test_event_buffer_behaves_like_the_list_it_replaces():
    from everyo.profiler.recording import _crecorder

    buf = _crecorder.EventBuffer()
    assert len(buf) == 0
    buf += (1, 2, 3)
    buf += [4, 5.9, np.int64(6)]  # floats truncate, as np.fromiter(..., np.int64) does
    assert len(buf) == 6 and list(buf) == [1, 2, 3, 4, 5, 6] and buf[-1 + 6] == 6
    with pytest.raises(TypeError):
        buf += (7, "eight", 9)
    assert len(buf) == 6  # a record is appended whole or not at all
    for i in range(10_000):  # grows past its first allocation
        buf += (i, i, i)
    n = len(buf)
    values = np.frombuffer(buf[:n], np.int64)  # what the flush reads: a copy
    assert values[:6].tolist() == [1, 2, 3, 4, 5, 6] and values[-1] == 9_999
    assert len(values) == 6 + 30_000 and len(buf) == n  # kept until the store holds them
    buf += (7, 8, 9)  # (appended meanwhile)
    del buf[:n]  # then dropped in one step
    assert list(buf) == [7, 8, 9]  # the same buffer goes on (a stale reference loses nothing)
    with pytest.raises(ValueError):
        del buf[1:]
    with pytest.raises(OverflowError):
        buf += (float("nan"), 0, 0)


def test_module_calls_record_the_same_without_the_extension():
    """EVERYO_PURE_PYTHON=1: Module.__call__ and the recorder are the Python ones, and the
    same workload gives the same events as the compiled paths."""
    import subprocess
    import sys

    code = (
        "import sys; sys.path[:0] = sys.argv[1:]\n"
        "import everyo as eo, everyo.profiler.recording.recorder as r\n"
        "from everyo.profiler import Profiler, RunRegistry\n"
        "from everyo.nn import module\n"
        "from profiler_fakes import FakeClock\n"
        "from test_profiler_recorder import _workload\n"
        "clock = FakeClock(tick=7); p = Profiler(clock=clock, registry=RunRegistry())\n"
        "with p: _workload(clock)\n"
        "print(r.IMPLEMENTATION, module.IMPLEMENTATION)\n"
        "print([(e.name, e.path, e.depth, e.start_ns, e.duration_ns, e.shapes) for e in p.events])"
    )
    here = os.path.dirname(__file__)
    outs = []
    for pure in ("1", ""):
        env = {**os.environ, "EVERYO_PURE_PYTHON": pure}
        out = subprocess.run(
            [sys.executable, "-c", code, here, os.path.dirname(here)],
            env=env,
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, out.stderr
        outs.append(out.stdout.splitlines())
    assert outs[0][0] == "python python"
    if recorder.CRecorder is not None and nn_module.ModuleBase is not None:
        assert outs[1][0] == "c c"
    assert outs[0][1] == outs[1][1]


@pytest.mark.parametrize("impl", ["c", "python"])
def test_region_takes_the_same_arguments_on_both_paths(impl, monkeypatch):
    cls = recorder.CRecorder if impl == "c" else recorder.PythonRecorder
    if cls is None:
        pytest.skip("the C extension was not built here")
    monkeypatch.setattr(recorder, "Recorder", cls)
    p = Profiler(clock=FakeClock(tick=5), registry=RunRegistry())
    with p:
        rec = p._recorder
        with rec.region("a", "user", x=1):
            with rec.region(name="b", kind="data", batch_size=4):
                pass
        with rec.region("c"):
            pass
        with pytest.raises(TypeError):
            rec.region("d", "user", kind="data")
        with pytest.raises(TypeError):
            rec.region()
        with pytest.raises(TypeError):
            rec.region("e", "user", "extra")
    got = [(e.kind, e.name, e.depth, e.metadata) for e in p.events]
    assert got == [
        ("data", "b", 1, {"batch_size": 4}),
        ("user", "a", 0, {"x": 1}),
        ("user", "c", 0, {}),
    ]


# -- faults found in review of the compiled path: each test runs on both recorders -------------
IMPLS = ["c", "python"]


def _use(impl, monkeypatch):
    cls = recorder.CRecorder if impl == "c" else recorder.PythonRecorder
    if cls is None:
        pytest.skip("the C extension was not built here")
    monkeypatch.setattr(recorder, "Recorder", cls)


class _Shaped:
    """An output whose ``shape`` property calls the module again (replacing its shape cache
    entry while the first call still compares against it)."""

    def __init__(self, shape, reenter=None):
        self._shape, self.reenter = shape, reenter

    @property
    def shape(self):
        if self.reenter is not None:
            inner, self.reenter = self.reenter, None
            _Shaped.module(inner)
        return self._shape


@pytest.mark.parametrize("impl", IMPLS)
def test_a_shape_property_that_calls_the_module_again(impl, monkeypatch):
    _use(impl, monkeypatch)

    class M(eo.Module):
        def forward(self, x):
            return _Shaped((9,))

    class Root(eo.Module):
        def __init__(self):
            super().__init__()
            self.m = M()

        def forward(self, xs):
            for x in xs:
                self.m(x)
            return xs

    root = Root()
    _Shaped.module = root.m
    with Profiler(registry=RunRegistry()) as p:
        for i in range(50):
            root([_Shaped((i, 1)), _Shaped((i, 2), reenter=_Shaped((i, 3)))])
    names = [(e.name, e.depth) for e in p.events]
    assert names.count(("M", 1)) == 150 and names.count(("Root", 0)) == 50
    assert len(names) == 200


@pytest.mark.parametrize("impl", IMPLS)
def test_the_clock_failing_at_a_start_records_nothing_and_restores_the_thread(impl, monkeypatch):
    _use(impl, monkeypatch)
    clock = FakeClock(tick=10)
    fail = {"n": 0}

    def flaky():
        if fail["n"]:
            fail["n"] -= 1
            raise RuntimeError("clock")
        return clock()

    class Inner(eo.Module):
        def forward(self, x):
            return x

    class Outer(eo.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            fail["n"] = 1
            with pytest.raises(RuntimeError, match="clock"):
                self.inner(x)
            fail["n"] = 1
            with pytest.raises(RuntimeError, match="clock"):
                record_function("r").__enter__()
            return self.inner(x)

    p = Profiler(clock=flaky, registry=RunRegistry())
    with p:
        Outer()(eo.zeros(1))
        fail["n"] = 1
        with pytest.raises(RuntimeError, match="clock"):
            eo.zeros(1, requires_grad=True).sum().backward()
        with record_function("after"):
            pass
    got = [(e.name, e.depth) for e in p.events]
    assert got == [("Inner", 1), ("Outer", 0), ("after", 0)]


@pytest.mark.parametrize("impl", IMPLS)
def test_module_call_with_a_mapping_for_kwargs(impl, monkeypatch):
    import collections

    _use(impl, monkeypatch)

    class Add(eo.Module):
        def forward(self, a, b=0, zz=0):
            return a + b + zz

    m = Add()
    with Profiler(registry=RunRegistry()) as p:
        rec = hooks.active
        root = eo.Sequential(m)
        rec._state().keymap = rec._keymaps.for_root(root)
        out = rec.module_call(m, m.forward, (1,), collections.UserDict(b=2, zz=3))
        rec._state().keymap = None
    assert out == 6 and [e.name for e in p.events] == ["Add"]


@pytest.mark.parametrize("impl", IMPLS)
def test_a_hooked_property_that_removes_the_active_hook_object(impl, monkeypatch):
    _use(impl, monkeypatch)
    calls = []

    class Hook:
        record_ops = False

        def module_call(self, module, forward, args, kwargs):
            calls.append(type(module).__name__)
            return forward(*args, **kwargs)

    class M(eo.Module):
        @property
        def _hooked(self):
            hooks.set_active(None)  # drops the last reference to the hook object
            [bytearray(64) for _ in range(100)]
            return False

        def forward(self, x):
            return x

    hooks.set_active(Hook())
    try:
        assert M()(1) == 1
    finally:
        hooks.set_active(None)
    assert calls == ["M"]


@pytest.mark.parametrize("impl", IMPLS)
def test_backward_state_replaced_during_the_pass(impl, monkeypatch):
    _use(impl, monkeypatch)
    model = eo.Sequential(eo.Linear(2, 2, seed=0))
    with Profiler(registry=RunRegistry()) as p:
        loss = model(eo.ones(1, 2)).sum()
        t = hooks.active._state()
        node = loss._node
        inner = node.backward_fn

        def replace(g):
            t.backward = None  # Python code dropping the pass's record midway
            return inner(g)

        node.backward_fn = replace
        loss.backward()
    kinds = [(e.kind, e.name) for e in p.events]
    # the pass's record closes its open group even though the thread no longer points at it
    assert ("backward", "backward") in kinds and ("backward", "Linear.backward") in kinds


@pytest.mark.parametrize("impl", IMPLS)
def test_a_thread_keeps_one_record_after_stop(impl, monkeypatch):
    _use(impl, monkeypatch)
    with Profiler(registry=RunRegistry()) as p:
        rec = hooks.active
        first = rec._state()
    assert rec._state() is first and rec._state() is first
    with rec.region("late"):
        pass
    assert len(rec._threads) == 1 and len(p.run.store.threads) == 1


@pytest.mark.parametrize("impl", IMPLS)
def test_threads_started_one_after_another_keep_their_own_records(impl, monkeypatch):
    """Thread identifiers are reused once a thread has finished: each new thread still gets a
    record (and a store thread) of its own while recording."""
    import threading

    _use(impl, monkeypatch)
    model = eo.Sequential(eo.Linear(2, 2, seed=0))
    with Profiler(registry=RunRegistry()) as p:
        for i in range(5):
            th = threading.Thread(target=lambda: model(eo.zeros(1, 2)), name=f"worker-{i}")
            th.start()
            th.join()
    names = {name for _, name in p.run.store.threads}
    assert {f"worker-{i}" for i in range(5)} <= names


# -- the per-step caches of the compiled path (keymap look-ups, the last region's key) --------
@pytest.mark.parametrize("impl", IMPLS)
def test_a_module_shared_by_two_models_gets_each_models_path(impl, monkeypatch):
    """The compiled path caches module -> keymap entry for one keymap: alternating between two
    outermost modules that share a child must give the child the path under each of them."""
    _use(impl, monkeypatch)
    shared = eo.Linear(2, 2, seed=0)
    a = eo.Sequential(shared)
    b = _Head(shared)  # the shared layer is the first child either model calls
    with Profiler(registry=RunRegistry()) as p:
        for _ in range(3):
            a(eo.ones(1, 2))
            b(eo.ones(1, 2))
    linear = [e.path for e in p.events if e.name == "Linear"]
    assert linear == ["0", "head"] * 3


class _Head(eo.Module):
    def __init__(self, head):
        super().__init__()
        self.head = head

    def forward(self, x):
        return self.head(x)


@pytest.mark.parametrize("impl", IMPLS)
def test_a_module_added_after_the_first_call_gets_its_own_path(impl, monkeypatch):
    _use(impl, monkeypatch)
    model = eo.Sequential(eo.Linear(2, 2, seed=0))
    with Profiler(registry=RunRegistry()) as p:
        model(eo.ones(1, 2))  # the keymap (and the compiled path's cache) made for one layer
        model.append(eo.ReLU())
        model(eo.ones(1, 2))
        model(eo.ones(1, 2))
    got = [(e.name, e.path) for e in p.events if e.depth == 1]
    assert got == [("Linear", "0"), ("Linear", "0"), ("ReLU", "1"), ("Linear", "0"), ("ReLU", "1")]


@pytest.mark.parametrize("impl", IMPLS)
def test_alternating_regions_keep_their_own_keys(impl, monkeypatch):
    """The compiled path reuses the last region's key when the same (kind, name) objects come
    again; other names, equal strings built afresh and other kinds must still find theirs."""
    _use(impl, monkeypatch)
    with Profiler(clock=FakeClock(tick=5), registry=RunRegistry()) as p:
        rec = p._recorder
        for fresh in (False, True):
            for name, kind in [("ab", "user"), ("ab", "user"), ("ab", "data"), ("cd", "data")]:
                if fresh:
                    name = ("x" + name)[1:]  # an equal string, another object
                    assert name == "ab" or name == "cd"
                with rec.region(name, kind):
                    pass
    got = [(e.kind, e.name) for e in p.events]
    assert got == [("user", "ab"), ("user", "ab"), ("data", "ab"), ("data", "cd")] * 2


@pytest.mark.parametrize("impl", IMPLS)
def test_optimizer_regions_are_named_by_each_class(impl, monkeypatch):
    _use(impl, monkeypatch)
    model = eo.Sequential(eo.Linear(2, 2, seed=0))
    sgd = eo.optim.SGD(model.parameters(), lr=0.1)
    adam = eo.optim.Adam(model.parameters(), lr=0.1)

    class Tuned(eo.optim.SGD):
        pass

    tuned = Tuned(model.parameters(), lr=0.1)
    with Profiler(registry=RunRegistry()) as p:
        for opt in (sgd, adam, tuned, sgd):
            model(eo.ones(1, 2)).sum().backward()
            opt.step()
    names = [e.name for e in p.events if e.kind == "optimizer"]
    assert names == ["SGD.step", "Adam.step", "Tuned.step", "SGD.step"]


@pytest.mark.parametrize("impl", IMPLS)
def test_backward_call_passes_its_arguments_on(impl, monkeypatch):
    """Hook protocol: backward_call(run, *args) returns run(*args), timed as one pass."""
    _use(impl, monkeypatch)
    with Profiler(clock=FakeClock(tick=5), registry=RunRegistry()) as p:
        rec = p._recorder
        assert rec.backward_call(lambda a, b: (a, b), 1, "two") == (1, "two")
        assert rec.backward_call(lambda: "none") == "none"
        with pytest.raises(TypeError):
            rec.backward_call()
    assert [e.name for e in p.events] == ["backward", "backward"]


@pytest.mark.parametrize("impl", IMPLS)
def test_backward_groups_open_where_the_nodes_module_changes(impl, monkeypatch):
    """enter(node) of the running pass: a group per run of nodes with one token (the node's
    scope, else its op name outside any module)."""
    import types

    _use(impl, monkeypatch)
    a, b = ("Linear", "0"), ("ReLU", "1")
    nodes = [(a, "matmul"), (a, "add"), (b, "relu"), (None, "sum"), (None, "sum"), (a, "add")]
    clock = FakeClock(tick=10)
    with Profiler(clock=clock, registry=RunRegistry()) as p:
        rec = p._recorder

        def run():
            enter = rec.backward_groups()
            for scope, name in nodes:
                enter(types.SimpleNamespace(scope=scope, name=name))
            return "done"

        assert rec.backward_groups() is None  # no pass running
        assert rec.backward_call(run) == "done"
    got = [(e.name, e.path) for e in p.events if e.kind == "backward" and e.depth == 1]
    assert got == [
        ("Linear.backward", "0"),
        ("ReLU.backward", "1"),
        ("sum.backward", ""),
        ("Linear.backward", "0"),
    ]
