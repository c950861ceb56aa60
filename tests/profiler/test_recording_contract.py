"""The contract between the recorder's Python policy and its module-call primitives (issue 36):
Python sets what the primitives read only through one checked ``configure``, the primitives call
back only the declared methods, the engine passes what the recorder needs explicitly, and the
compiled primitives and their pure-Python twin record the same events through it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from profiler_fakes import FakeClock, mlp

import everyo as eo
from everyo.profiler import Profiler, RunRegistry, record_function
from everyo.profiler import schedule as step_schedule
from everyo.profiler.recording import contract, hooks, recorder

C_SOURCE = Path(recorder.__file__).with_name("_crecorder.c")
PROFILER_DIR = Path(recorder.__file__).parent
RECORDING_MODULES = (  # ARCHITECTURE.md's recording row
    "recorder.py",
    "contract.py",
    "py_recorder.py",
    "regions.py",
    "keymaps.py",
    "shapes.py",
    "store_writer.py",
    "packing.py",
)
needs_c = pytest.mark.skipif(recorder.CRecorder is None, reason="the C extension was not built")


def _private_names_in_c() -> set:
    return set(re.findall(r'"(_[a-z][a-z_]*)"', C_SOURCE.read_text(encoding="utf-8")))


def _recorder_classes() -> list:
    return [c for c in (recorder.CRecorder, recorder.PythonRecorder) if c is not None]


def _new(cls, **options):
    from everyo.profiler.storage.store import EventStore

    store = EventStore(("shape",))
    return cls(store, clock=FakeClock(tick=3), origin_ns=0, **options)


# -- what C calls back ---------------------------------------------------------------------------
@needs_c
def test_the_compiled_recorder_calls_back_only_the_declared_methods():
    from everyo.profiler.recording import _crecorder

    own = set(dir(_crecorder.ModuleCall)) | set(dir(_crecorder.ThreadState))
    callbacks = _private_names_in_c() - own
    assert callbacks == set(contract.C_CALLBACKS)


@pytest.mark.parametrize("cls", _recorder_classes(), ids=lambda c: c.__name__)
def test_each_declared_callback_is_python_policy_on_both_recorders(cls):
    rec = _new(cls)
    for name in contract.C_CALLBACKS:
        assert callable(getattr(rec, name, None)), name
        assert name in _private_names_in_c(), f"{name} is declared but C never calls it"


# -- what Python sets: configure, and only configure ---------------------------------------------
def test_the_compiled_configure_takes_exactly_the_declared_options():
    text = C_SOURCE.read_text(encoding="utf-8")
    block = re.search(r"option_names\[N_OPTIONS\] = \{(.*?)\};", text, re.S).group(1)
    assert re.findall(r'"([a-z_]+)"', block) == list(contract.OPTIONS)


BAD = [
    {"mode": 3},
    {"mode": "2"},
    {"mode": True},
    {"mode": -1},
    {"flush_len": 0},
    {"flush_len": 10**30},
    {"flush_len": 2.5},
    {"max_depth": 32768},
    {"max_depth": 10**40},
    {"max_depth": 0},
    {"fast": 1},
    {"general": None},
    {"python_roots": "yes"},
    {"clock": 5},
    {"tensor": "Tensor"},
    {"region_keys": []},
    {"roots": None},
    {"bw_keys": ()},
    {"backward_region": ["backward", "backward"]},
    {"backward_region": ("backward",)},
    {"backward_region": ("backward", 1)},
    {"colour": "red"},
    {"mode": 1, "fast": "no"},  # one bad value: nothing is applied
]


def _outcome(rec, options):
    try:
        rec.configure(**options)
    except (TypeError, ValueError) as e:
        return type(e).__name__, str(e)
    return "ok"


@needs_c
def test_both_primitives_check_configure_the_same_way():
    got = {}
    for cls in _recorder_classes():
        rec = _new(cls)
        got[cls] = [_outcome(rec, options) for options in BAD]
        assert rec._mode == 0 and rec._fast is False  # nothing bad was applied
    c, python = got[recorder.CRecorder], got[recorder.PythonRecorder]
    assert c == python
    assert python[0] == ("ValueError", "configure: mode must be 0, 1 or 2, not 3")
    assert python[1] == ("TypeError", "configure: mode must be 0, 1 or 2, not str")
    assert python[5][0] == "ValueError"
    assert python[-2] == ("TypeError", "configure: unknown option 'colour'")
    assert "ok" not in python


@pytest.mark.parametrize("cls", _recorder_classes(), ids=lambda c: c.__name__)
def test_configure_applies_every_declared_option(cls):
    rec = _new(cls)
    keys, roots, bw = {}, {}, {}
    clock = FakeClock(tick=1)
    values = {
        "clock": clock,
        "tensor": eo.Tensor,
        "mode": 2,
        "fast": True,
        "general": True,
        "python_roots": True,
        "flush_len": 9,
        "max_depth": 7,
        "region_keys": keys,
        "roots": roots,
        "bw_keys": bw,
        "backward_region": ("backward", "pass"),
    }
    assert values.keys() == contract.OPTIONS.keys()
    rec.configure(**values)
    for name, value in values.items():
        got = getattr(rec, "_" + name)
        assert got == value and (type(value) is not dict or got is value), name


@needs_c
def test_the_compiled_recorders_options_are_read_only():
    rec = _new(recorder.CRecorder)
    for name in contract.OPTIONS:
        with pytest.raises(AttributeError):
            setattr(rec, "_" + name, getattr(rec, "_" + name))


def test_no_profiler_code_sets_an_option_but_configure():
    """Python sets what the primitives read through configure() alone, on both paths: no
    assignment to a configured attribute in the recording modules."""
    configured = {"_" + name for name in contract.OPTIONS}
    found = []
    for path in (PROFILER_DIR / name for name in RECORDING_MODULES):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            while targets:
                t = targets.pop()
                if isinstance(t, (ast.Tuple, ast.List)):
                    targets += t.elts
                elif isinstance(t, ast.Attribute) and t.attr in configured:
                    found.append(f"{path.name}:{t.lineno} {t.attr}")
    assert found == []


# -- both primitives through the contract record the same events ----------------------------------
def _workload(clock, profiler):
    """Module calls (single input, several inputs, keyword inputs, a failing one), regions with
    metadata, backward passes and steps, on a fake model and on the engine's."""
    model = mlp(clock)
    real = eo.Sequential(eo.Linear(4, 3, seed=0), eo.ReLU())
    loss = eo.nn.MSELoss()

    class Fails(eo.Module):
        def forward(self, x):
            raise ValueError("forward failed")

    fails = eo.Sequential(eo.ReLU(), Fails())
    for step in range(6):
        with record_function("step", n=step):
            for n in (2, 3):
                model(np.zeros((n, 4)))
            out = real(eo.zeros(2 + step % 2, 4, requires_grad=True))
            value = loss(out, eo.zeros(2 + step % 2, 3))
            value.backward()
            with pytest.raises(ValueError):
                fails(eo.zeros(1, 2))
        profiler.step()


def _events(cls, monkeypatch, **options):
    monkeypatch.setattr(recorder, "Recorder", cls)
    clock = FakeClock(tick=7)
    p = Profiler(clock=clock, registry=RunRegistry(), **options)
    with p:
        _workload(clock, p)
    return [
        (e.kind, e.name, e.path, e.depth, e.parent, e.start_ns, e.duration_ns, e.shapes, e.metadata)
        for e in p.events
    ]


OPTION_SETS = {
    "shapes": {},
    "no shapes": {"record_shapes": False},
    "warmup": {"warmup": 25},
    "schedule": {"schedule": step_schedule(wait=1, warmup=1, active=2, repeat=2)},
    "ops": {"record_ops": True},
    "memory": {"profile_memory": True},
}


@needs_c
@pytest.mark.parametrize("options", OPTION_SETS.values(), ids=OPTION_SETS.keys())
def test_both_primitives_record_the_same_events_through_the_contract(options, monkeypatch):
    c = _events(recorder.CRecorder, monkeypatch, **options)
    python = _events(recorder.PythonRecorder, monkeypatch, **options)
    assert c == python
    assert len(c) > 20
    kinds = {e[0] for e in c}
    assert {"module", "user", "backward"} <= kinds
    assert ("module", "Fails") in {(e[0], e[1]) for e in c}


# -- what the engine passes ----------------------------------------------------------------------
def test_the_engine_passes_its_tensor_class_to_the_recorder():
    assert hooks.tensor_type is eo.Tensor
    with Profiler(registry=RunRegistry()) as p:
        assert p._recorder._tensor is eo.Tensor
    for name in RECORDING_MODULES:
        assert "sys.modules" not in (PROFILER_DIR / name).read_text(encoding="utf-8"), name
