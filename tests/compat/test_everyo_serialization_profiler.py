"""Reference EveryO §7 (serialization) and §9 (profiler)."""

from __future__ import annotations

import dataclasses
import json
import zipfile

import numpy as np
import pytest

import everyo as eo

# ---- serialization ---------------------------------------------------------------------------


def test_save_load_and_inspect_archive(tmp_path):
    model = eo.Sequential(eo.Conv2D(1, 2, 3, seed=0), eo.Flatten(), eo.Linear(8, 3, seed=0))
    path = eo.save(model, tmp_path / "model.eo", metadata={"epoch": 7, "note": "best"})
    assert path == tmp_path / "model.eo" and zipfile.is_zipfile(path)
    clone = eo.Sequential(eo.Conv2D(1, 2, 3, seed=1), eo.Flatten(), eo.Linear(8, 3, seed=1))
    loaded = eo.load(path, model=clone)
    x = np.random.default_rng(0).standard_normal((2, 4, 4, 1)).astype(np.float32)
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())
    info = eo.inspect_archive(path)
    assert set(info) == {"path", "everyo_version", "format_version", "created_at", "class_name",
                         "num_parameters", "parameters", "metadata"}  # fmt: skip
    assert info["class_name"] == "Sequential" and info["everyo_version"] == eo.__version__
    assert info["num_parameters"] == 3 * 3 * 1 * 2 + 2 + 8 * 3 + 3
    assert info["parameters"]["0.weight"] == {"shape": [3, 3, 1, 2], "dtype": "float32"}
    assert info["metadata"] == {"epoch": 7, "note": "best"} and info["format_version"] == 1


def test_save_refuses_overwrite_and_non_json_metadata(tmp_path):
    path = eo.save(eo.Linear(2, 2), tmp_path / "m.eo")
    before = path.read_bytes()
    with pytest.raises(eo.EveryOSerializationError, match="overwrite=False"):
        eo.save(eo.Linear(2, 2), path, overwrite=False)
    with pytest.raises(eo.EveryOSerializationError, match="JSON"):
        eo.save(eo.Linear(2, 2), path, metadata={"f": object()})
    assert path.read_bytes() == before  # nothing lost


def test_inspect_archive_errors(tmp_path):
    with pytest.raises(eo.EveryOSerializationError):
        eo.inspect_archive(tmp_path / "missing.eo")
    (tmp_path / "text.eo").write_text("not a zip")
    with pytest.raises(eo.EveryOSerializationError):
        eo.inspect_archive(tmp_path / "text.eo")
    with zipfile.ZipFile(tmp_path / "bad.eo", "w") as zf:
        zf.writestr("manifest.json", "[1, 2]")
    with pytest.raises(eo.EveryOSerializationError):
        eo.inspect_archive(tmp_path / "bad.eo")


# ---- profiler --------------------------------------------------------------------------------


def test_profile_event_has_the_reference_fields_first():
    names = [f.name for f in dataclasses.fields(eo.profiler.ProfileEvent)]
    assert names[:6] == ["name", "duration_ns", "start_ns", "process_id", "thread_id", "metadata"]


def test_profiler_records_regions_modules_and_summaries(tmp_path):
    model = eo.Sequential(eo.Linear(3, 4, seed=0), eo.ReLU())
    with eo.profile() as prof:
        assert isinstance(prof, eo.Profiler) and prof.record_shapes is True
        with prof.record("outer", {"step": 1}):
            with eo.record_function("inner", lr=0.1):
                model(eo.ones(2, 3))
    names = [e.name for e in prof.events]
    assert names.index("inner") < names.index("outer")  # appended when a region ends
    linear = next(e for e in prof.events if e.name == "Linear")
    assert linear.metadata.get("input_shapes") == [[2, 3]]
    assert next(e for e in prof.events if e.name == "inner").metadata == {"lr": 0.1}
    assert all(isinstance(e.metadata, dict) for e in prof.events)
    rows = prof.summary()
    assert {"name", "calls", "total_ms", "mean_ms", "max_ms"} <= set(rows[0])
    totals = [r["total_ms"] for r in rows]
    assert totals == sorted(totals, reverse=True)

    events = json.loads((tmp_path / "events.json").read_text() if prof.export_json(
        tmp_path / "events.json") else "")  # fmt: skip
    assert isinstance(events, list) and len(events) == len(prof.events)
    assert {"name", "duration_ns", "start_ns", "process_id", "thread_id", "metadata"} <= set(
        events[0]
    )
    prof.export_chrome_trace(tmp_path / "trace.json")
    trace = json.loads((tmp_path / "trace.json").read_text())
    complete = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert {e["name"] for e in complete} >= {"inner", "outer", "Linear"}
    # microseconds from the start of profiling (the reference counts from the earliest event)
    assert all(e["ts"] >= 0 and e["dur"] >= 0 for e in complete)
    outer = next(e for e in complete if e["name"] == "outer")
    assert outer["dur"] == pytest.approx(
        next(e.duration_ns for e in prof.events if e.name == "outer") / 1000, rel=1e-3
    )


def test_exports_return_a_path(tmp_path):
    with eo.profile() as prof:
        with eo.record_function("r"):
            pass
    from pathlib import Path

    assert isinstance(prof.export_json(tmp_path / "e.json"), Path)
    assert isinstance(prof.export_chrome_trace(tmp_path / "t.json"), Path)


def test_record_shapes_off_and_record_function_without_profiler():
    with eo.profile(record_shapes=False) as prof:
        eo.Linear(2, 2)(eo.ones(1, 2))
    assert all("input_shapes" not in e.metadata for e in prof.events)

    @eo.record_function("decorated")
    def work():
        return 3

    assert work() == 3  # no active profiler: nothing recorded, nothing raised
    with eo.profile() as prof:
        work()
    assert [e.name for e in prof.events] == ["decorated"]


def test_profiler_warmup_and_errors():
    with eo.profile(warmup=2) as prof:
        for i in range(4):
            with eo.record_function(f"r{i}"):
                pass
    assert [e.name for e in prof.events] == ["r2", "r3"]
    with pytest.raises(ValueError):
        eo.Profiler(warmup=-1)
    with eo.profile():
        with pytest.raises(RuntimeError, match="cannot be nested"):
            with eo.profile():
                pass


def test_load_strict_false_ignores_extra_keys(tmp_path):
    big = eo.Sequential(eo.Linear(2, 2, seed=0), eo.Linear(2, 1, seed=0))
    path = eo.save(big, tmp_path / "big.eo")
    small = eo.Sequential(eo.Linear(2, 2, seed=3))
    with pytest.raises(eo.EveryOError):
        eo.load(path, model=small)
    loaded = eo.load(path, model=small, strict=False)
    assert loaded is small and np.array_equal(small[0].weight.numpy(), big[0].weight.numpy())


def test_missing_files_are_serialization_and_file_not_found_errors(tmp_path):
    for call in (eo.load, eo.inspect_archive):
        with pytest.raises(eo.EveryOSerializationError):
            call(tmp_path / "nope.eo")
        with pytest.raises(FileNotFoundError):
            call(tmp_path / "nope.eo")


def test_a_profiler_entered_twice_keeps_accumulating():
    prof = eo.Profiler()
    for name in ("a", "b"):
        with prof:
            with eo.record_function(name):
                pass
    assert [e.name for e in prof.events] == ["a", "b"]


def test_fractional_warmup_is_truncated():
    with eo.profile(warmup=1.5) as prof:
        for name in "xyz":
            with eo.record_function(name):
                pass
    assert [e.name for e in prof.events] == ["y", "z"]


def test_a_path_without_suffix_gets_evo(tmp_path):
    model = eo.Linear(2, 2, seed=0)
    written = eo.save(model, tmp_path / "weights")
    assert written == tmp_path / "weights.evo" and written.is_file()
    assert not (tmp_path / "weights").exists()
    for name in ("weights", "weights.evo"):
        assert eo.inspect_archive(tmp_path / name)["class_name"] == "Linear"
        clone = eo.load(tmp_path / name, model=eo.Linear(2, 2, seed=1))
        assert np.array_equal(clone.weight.numpy(), model.weight.numpy())
    assert eo.save(model, tmp_path / "weights.eo") == tmp_path / "weights.eo"  # suffix kept
