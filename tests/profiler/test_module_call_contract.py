"""The engine's compiled ``Module.__call__`` (``everyo/nn/_cmodule.c``) and the recorder meet at
one contract (``everyo/profiler/recording/module_call_api.h``, issue 36): the engine is bound
explicitly to where ``hooks.active`` lives and to the recorder's capsule, checks the capsule's name
and version, and without a capsule it accepts calls ``module_call`` by name. Every path records the
same events as the Python ``Module.__call__``."""

from __future__ import annotations

import ctypes
import datetime
import re
from pathlib import Path

import numpy as np
import pytest
from profiler_fakes import FakeClock

import everyo as eo
from everyo.nn import module as nn_module
from everyo.profiler import Profiler, RunRegistry
from everyo.profiler.recording import hooks, recorder

ENGINE_C = Path(nn_module.__file__).with_name("_cmodule.c")
RECORDER_C = Path(recorder.__file__).with_name("_crecorder.c")
API_NAME = "everyo.profiler.recording._crecorder.module_call_api"
# a capsule keeps a pointer to its name: these bytes outlive the capsules made with them
NAMES = {"api": API_NAME.encode(), "other": b"everyo.profiler.other_api"}

compiled_call = pytest.mark.skipif(
    nn_module.ModuleBase is None, reason="the engine's C extension was not built"
)
compiled_both = pytest.mark.skipif(
    nn_module.ModuleBase is None or recorder.CRecorder is None,
    reason="the C extensions were not built",
)


if nn_module.ModuleBase is None:  # EVERYO_PURE_PYTHON=1 or no compiler
    PyModule = eo.Module
else:

    class PyModule(nn_module._PyModuleCall, eo.Module):
        """``Module`` with the Python ``__call__`` (the fallback without the extension)."""


def _model(base):
    """Modules on ``base`` that call in every way the engine does: one input, keyword inputs,
    a loss's two inputs, forward hooks, a forward that raises and one that reads a missing
    attribute."""

    class Scale(base):
        def forward(self, x, factor=2.0):
            return x * factor

    class Pair(base):
        def forward(self, a, b):
            return ((a - b) ** 2).mean()

    class Fails(base):
        def forward(self, x):
            raise ValueError("forward failed")

    class Net(base):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.hooked, self.loss = Scale(), Scale(), Scale(), Pair()
            self.hooked.register_forward_hook(lambda m, args, out: out + 1.0)
            self.fails = Fails()

        def forward(self, x, *, target):
            h = self.b(self.a(x), factor=3.0)
            h = self.hooked(h)
            try:
                self.fails(h)
            except ValueError:
                pass
            return self.loss(h, target)

    return Net()


def _run(base, cls, monkeypatch, **options):
    monkeypatch.setattr(recorder, "Recorder", cls)
    net = _model(base)
    p = Profiler(clock=FakeClock(tick=7), registry=RunRegistry(), **options)
    with p:
        for n in (2, 3, 3):
            x = eo.tensor(np.ones((n, 4), np.float32), requires_grad=True)
            net(x, target=eo.zeros(n, 4)).backward()
    return [
        (e.kind, e.name, e.path, e.depth, e.parent, e.start_ns, e.duration_ns, e.shapes)
        for e in p.events
    ]


def _recorders():
    return [c for c in (recorder.CRecorder, recorder.PythonRecorder) if c is not None]


@pytest.fixture
def rebind():
    """Bind the engine's call to another capsule for one test, then back to the recorder's."""
    from everyo.nn import _cmodule

    yield lambda capsule: _cmodule.bind(vars(hooks), capsule)
    assert _cmodule.bind(vars(hooks), hooks.module_call_api()) == (recorder.CRecorder is not None)


class _API(ctypes.Structure):  # module_call_api.h's EveryoModuleCallAPI
    _fields_ = [("version", ctypes.c_int), ("recorder_type", ctypes.c_void_p),
                ("record", ctypes.c_void_p)]  # fmt: skip


def _capsule(api: _API, name: bytes):
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(ctypes.addressof(api), name, None)


# -- the same events on every path -----------------------------------------------------------------
OPTIONS = {"shapes": {}, "no shapes": {"record_shapes": False}, "general": {"record_ops": True}}


@compiled_call
@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS.keys())
@pytest.mark.parametrize("cls", _recorders(), ids=lambda c: c.__name__)
def test_the_compiled_and_python_module_calls_record_the_same_events(cls, options, monkeypatch):
    c = _run(eo.Module, cls, monkeypatch, **options)
    python = _run(PyModule, cls, monkeypatch, **options)
    assert c == python
    names = [e[1] for e in c if e[0] == "module"]
    assert names.count("Fails") == 3 and names.count("Pair") == 3 and names.count("Scale") == 9


@compiled_call
def test_errors_are_the_same_on_both_calls():
    for base in (eo.Module, PyModule):

        class NoInit(base):
            def __init__(self):  # forgot super().__init__(): no _hooked
                pass

        with pytest.raises(AttributeError):
            NoInit()(1)
        with Profiler(registry=RunRegistry()), pytest.raises(AttributeError):
            NoInit()(1)


# -- the contract and its checked fallback ---------------------------------------------------------
def _inner_calls_by_name() -> int:
    """How often the compiled recorder's ``module_call`` is called by name for a module inside
    the outermost one (the outermost goes through the recorder's own ``_root_call``, which
    calls it by name on every path)."""
    by_name = []
    with Profiler(registry=RunRegistry()) as p:
        module_call = p._recorder.module_call
        p._recorder.module_call = lambda *a: by_name.append(a[0]) or module_call(*a)
        net = eo.Sequential(eo.ReLU())
        net(eo.zeros(1, 2))
    assert [e.name for e in p.events] == ["ReLU", "Sequential"]
    return by_name.count(net[0])


@compiled_both
def test_the_recorder_hands_the_engine_a_named_versioned_capsule(rebind):
    api = hooks.module_call_api()
    assert f'capsule object "{API_NAME}"' in repr(api)
    assert rebind(api) is True and nn_module.IMPLEMENTATION == "c"


def _bad_capsules():
    """Capsules the engine must refuse; the structs copy the recorder's real one but for the
    field named, so only the engine's check keeps it from being used."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    real = _API.from_address(get(hooks.module_call_api(), NAMES["api"]))
    structs = {
        "version 2": _API(2, real.recorder_type, real.record),
        "no record function": _API(1, real.recorder_type, None),
        "another name": _API(1, real.recorder_type, real.record),
    }
    return structs, {
        "missing": None,
        "not a capsule": "module_call_api",
        "another capsule": datetime.datetime_CAPI,
        "version 2": _capsule(structs["version 2"], NAMES["api"]),
        "no record function": _capsule(structs["no record function"], NAMES["api"]),
        "another name": _capsule(structs["another name"], NAMES["other"]),
    }


@compiled_both
def test_a_mismatched_or_missing_capsule_makes_the_engine_call_module_call_by_name(
    rebind, monkeypatch
):
    good = _run(eo.Module, recorder.CRecorder, monkeypatch)
    keep, capsules = _bad_capsules()  # (keep: the structs outlive their capsules)
    for what, capsule in capsules.items():
        assert rebind(capsule) is False, what
        assert _run(eo.Module, recorder.CRecorder, monkeypatch) == good, what
        assert _inner_calls_by_name() == 1, what


@compiled_both
def test_an_accepted_capsule_enters_the_recorder_without_module_call(rebind):
    rebind(hooks.module_call_api())
    assert _inner_calls_by_name() == 0


# -- what each side knows of the other -----------------------------------------------------------
def test_each_side_knows_only_the_contract():
    """The engine's C code includes the contract's header and no recorder type; the recorder's
    C code names no attribute of the engine's modules; neither looks anything up in
    ``sys.modules`` or imports the other."""
    engine, rec = ENGINE_C.read_text(), RECORDER_C.read_text()
    assert re.findall(r'#include "([^"]+)"', engine) == ["../profiler/recording/module_call_api.h"]
    # (besides the contract, the recorder includes only its own buffer layout, from packing.py)
    assert re.findall(r'#include "([^"]+)"', rec) == ["_packing.h", "module_call_api.h"]
    for name in ("ModuleCall", "ThreadState", "Region", "Backward", "EventBuffer", "_crecorder"):
        assert not re.search(rf"\b{name}\b", engine), name
    for name in ("_call_impl", "_hooked", "ModuleBase", "everyo.nn"):
        assert name not in rec, name
    assert "PyImport" not in engine and "PyCapsule_Import" not in engine
    assert set(re.findall(r'PyImport_\w+\("([^"]+)"', rec)) == {"numpy", "time"}
    for text in (engine, rec):
        assert "sys.modules" not in text and "PyImport_GetModule" not in text
