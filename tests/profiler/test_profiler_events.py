"""ProfileEvent and export_json as the reference EveryO has them, beside everyo's own fields;
bad option values are ValueErrors."""

from __future__ import annotations

import dataclasses
import json
import os

import numpy as np
import pytest

import everyo as eo
from everyo.errors import EveryOConfigError, EveryOError, EveryOProfilerError
from everyo.profiler import ProfileEvent, Profiler, RunRegistry, load, record_function

REFERENCE_FIELDS = ["name", "duration_ns", "start_ns", "process_id", "thread_id", "metadata"]


def _run(**options):
    model = eo.Sequential(eo.Linear(4, 3, seed=0), eo.ReLU())
    with Profiler(registry=RunRegistry(), **options) as p:
        with record_function("step", index=7):
            model(eo.zeros((2, 4)))
    return p


def test_profile_event_starts_with_the_reference_fields_in_order():
    names = [f.name for f in dataclasses.fields(ProfileEvent)]
    assert names[:6] == REFERENCE_FIELDS
    event = ProfileEvent("work", 10, 5, 123, 0, {"k": 1})  # positional, as the reference
    assert (event.name, event.duration_ns, event.start_ns, event.process_id) == ("work", 10, 5, 123)
    assert event.metadata == {"k": 1} and event.end_ns == 15
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.name = "other"


def test_events_carry_the_process_and_always_a_metadata_dict():
    events = _run().events
    assert all(e.process_id == os.getpid() for e in events)
    assert all(isinstance(e.metadata, dict) for e in events)
    by_name = {e.name: e for e in events}
    assert by_name["step"].metadata == {"index": 7}
    assert [e.name for e in events] == ["Linear", "ReLU", "Sequential", "step"]  # inner first


def test_module_events_have_input_shapes_as_lists_of_ints_with_record_shapes():
    by_name = {e.name: e for e in _run().events}
    assert by_name["Linear"].metadata == {"input_shapes": [[2, 4]]}
    assert by_name["ReLU"].metadata == {"input_shapes": [[2, 3]]}
    shapes = by_name["Sequential"].metadata.get("input_shapes")
    assert shapes == [[2, 4]] and all(type(d) is int for d in shapes[0])
    assert "input_shapes" not in by_name["step"].metadata
    by_name = {e.name: e for e in _run(record_shapes=False).events}
    assert by_name["Linear"].metadata == {} and by_name["Linear"].shapes is None


def test_input_shapes_leave_out_keyword_and_nested_inputs():
    from everyo.profiler.storage.batch import input_shapes

    assert input_shapes("[(32, 4), mask=(32, 1)] -> (32, 16)") == [[32, 4]]
    assert input_shapes("[((2, 3), (4,)), (5,), ()] -> (5,)") == [[5], []]
    assert input_shapes("[]") == [] and input_shapes("") is None


def test_editing_an_events_metadata_leaves_the_run_alone():
    p = _run()
    step = next(e for e in p.events if e.name == "step")
    step.metadata["index"] = 99
    assert next(e for e in p.events if e.name == "step").metadata == {"index": 7}


def test_export_json_writes_the_reference_events_array(tmp_path):
    p = _run()
    path = p.export_json(tmp_path / "events.json")
    data = json.loads((tmp_path / "events.json").read_text())
    assert path == tmp_path / "events.json"
    assert isinstance(data, list) and len(data) == 4
    for obj, event in zip(data, p.events):
        assert list(obj)[:6] == REFERENCE_FIELDS
        assert {k: obj[k] for k in REFERENCE_FIELDS} == {
            k: getattr(event, k) for k in REFERENCE_FIELDS
        }
    assert data[0]["metadata"] == {"input_shapes": [[2, 4]]}
    assert data[3]["kind"] == "user" and data[3]["depth"] == 0  # everyo's fields follow


def test_export_json_raw_format_keeps_the_header_and_both_load(tmp_path):
    p = _run()
    p.export_json(tmp_path / "raw.json", format="raw")
    raw = json.loads((tmp_path / "raw.json").read_text())
    assert raw["format"] == "everyo.raw" and raw["run"]["process_id"] == os.getpid()
    for name in ("raw.json", "events.json"):
        if name == "events.json":
            p.export_json(tmp_path / name)
        assert load(tmp_path / name).snapshot().events() == p.events


def test_export_json_refuses_an_unknown_format(tmp_path):
    with pytest.raises(EveryOConfigError, match="'events'.*'raw'"):
        _run().export_json(tmp_path / "x.json", format="chrome")
    assert list(tmp_path.iterdir()) == []


def test_bad_option_values_are_value_errors():
    for bad in (
        lambda: Profiler(warmup=-1),
        lambda: Profiler(warmup="3"),
        lambda: _run().summary(group_by="colour"),
    ):
        with pytest.raises(ValueError) as info:
            bad()
        assert isinstance(info.value, EveryOError)  # except EveryOError still works
    assert issubclass(EveryOProfilerError, ValueError)
    assert issubclass(EveryOConfigError, ValueError)


def test_nesting_stays_a_runtime_error():
    with Profiler(registry=RunRegistry()):
        with pytest.raises(RuntimeError, match="cannot be nested") as info:
            Profiler(registry=RunRegistry()).start()
    assert not isinstance(info.value, ValueError)


def test_a_profiled_array_call_keeps_numpy_shapes():
    model = eo.Linear(4, 2, seed=0)
    with Profiler(registry=RunRegistry()) as p:
        model(np.ones((5, 4), np.float32))
    assert p.events[0].metadata["input_shapes"] == [[5, 4]]
