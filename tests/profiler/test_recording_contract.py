"""The contract between the compiled recorder and its Python policy (issue 36): what C calls
back by name is one declared list, and what the engine gives the recorder it passes explicitly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import everyo as eo
from everyo.profiler import Profiler, RunRegistry, hooks, recorder
from everyo.profiler.regions import RegionHooks

C_SOURCE = Path(recorder.__file__).with_name("_crecorder.c")
ENGINE_ATTRIBUTES = {"_call_impl", "_hooked"}  # Module's, read by ModuleBase's __call__


def _private_names_in_c() -> set:
    return set(re.findall(r'"(_[a-z][a-z_]*)"', C_SOURCE.read_text(encoding="utf-8")))


@pytest.mark.skipif(recorder.CRecorder is None, reason="the C extension was not built here")
def test_the_compiled_recorder_calls_back_only_the_declared_methods():
    from everyo.profiler import _crecorder

    own = set(dir(_crecorder.ModuleCall)) | set(dir(_crecorder.ThreadState))
    callbacks = _private_names_in_c() - own - ENGINE_ATTRIBUTES
    assert callbacks == set(recorder.C_CALLBACKS)


def test_each_declared_callback_is_python_policy_on_both_recorders():
    for name in recorder.C_CALLBACKS:
        assert callable(getattr(recorder._RecorderBody, name, None)) or callable(
            getattr(RegionHooks, name, None)
        ), name
        assert name in _private_names_in_c(), f"{name} is declared but C never calls it"


def test_the_engine_passes_its_tensor_class_to_the_recorder():
    assert hooks.tensor_type is eo.Tensor
    with Profiler(registry=RunRegistry()) as p:
        assert p._recorder._tensor is eo.Tensor
    assert "sys.modules" not in Path(recorder.__file__).read_text(encoding="utf-8")
