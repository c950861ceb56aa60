"""Every file everyo writes goes through one writer (everyo.fileio): the umask decides its mode,
a read-only file is refused rather than replaced, a folder that cannot be written is an error
naming the user's path (never the hidden temporary file), and NaN never reaches a JSON file."""

from __future__ import annotations

import json
import math
import os
import stat

import numpy as np
import pytest

import everyo as eo
from everyo.bench.result import write_json
from everyo.errors import EveryOExportError, EveryOSerializationError
from everyo.profiler import Profiler, RunRegistry, record_function


def _profiler():
    with Profiler(registry=RunRegistry(), label="io") as p:
        with record_function("step", loss=float("nan"), best=float("inf"), low=-math.inf):
            eo.Sequential(eo.Linear(4, 2, seed=0))(eo.zeros((3, 4)))
    return p


def _history():
    from everyo.training.history import History

    history = History()
    history.append({"epoch": 1, "loss": float("nan"), "lr": np.float32(np.inf)})
    return history


def _to_html(path):
    pytest.importorskip("plotly")
    from everyo_lab.html_report import to_html

    return to_html(_profiler().run, path)


# (writer, error class, file name): each writes a small file to the path it is given
WRITERS = {
    "chrome trace": (lambda p: _profiler().export_chrome_trace(p), EveryOExportError, "t.json"),
    "chrome trace gz": (lambda p: _profiler().export_chrome_trace(p), EveryOExportError, "t.gz"),
    "raw json": (lambda p: _profiler().export_json(p, format="raw"), EveryOExportError, "r.json"),
    "events json": (lambda p: _profiler().export_json(p), EveryOExportError, "e.json"),
    "eo.save": (lambda p: eo.save(eo.Linear(2, 2, seed=0), p), EveryOSerializationError, "m.eo"),
    "benchmark result": (lambda p: write_json({"a": 1}, p), EveryOExportError, "b.json"),
    "html report": (_to_html, EveryOExportError, "r.html"),
    "history json": (lambda p: _history().to_json(p), EveryOExportError, "h.json"),
    "history csv": (lambda p: _history().to_csv(p), EveryOExportError, "h.csv"),
}


@pytest.fixture(params=sorted(WRITERS))
def writer(request):
    return WRITERS[request.param]


@pytest.fixture
def umask():
    """Set the process umask for one test, and put the old one back."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_new_files_get_the_umask_of_the_process(writer, umask, tmp_path, mask):
    write, _, name = writer
    umask(mask)
    write(tmp_path / name)
    assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~mask
    assert [p.name for p in tmp_path.iterdir()] == [name]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_read_only_file_is_refused_and_left_as_it_was(writer, tmp_path):
    write, error, name = writer
    target = tmp_path / name
    target.write_bytes(b"keep me")
    target.chmod(0o444)
    with pytest.raises(error, match="read-only") as info:
        write(target)
    assert str(target) in str(info.value) and "chmod" in str(info.value)
    assert target.read_bytes() == b"keep me"
    assert stat.S_IMODE(target.stat().st_mode) == 0o444
    assert [p.name for p in tmp_path.iterdir()] == [name]


@pytest.fixture
def deny_create(monkeypatch):
    """Make creating files fail as in a folder without write permission (root ignores modes)."""
    real_open = os.open

    def deny(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)


def test_an_unwritable_folder_names_the_users_path_and_what_to_do(writer, tmp_path, deny_create):
    write, error, name = writer
    target = tmp_path / name
    with pytest.raises(error) as info:
        write(target)
    message = str(info.value)
    assert str(target) in message and ".tmp" not in message
    assert "permission denied" in message.lower() and "writable" in message
    assert list(tmp_path.iterdir()) == []


def test_eo_save_into_an_unwritable_folder_is_a_serialization_error(tmp_path, deny_create):
    with pytest.raises(EveryOSerializationError, match="writable by this process"):
        eo.save({"w": np.ones(2)}, tmp_path / "state.eo")


def test_a_failing_write_keeps_the_previous_file(writer, tmp_path, monkeypatch):
    write, error, name = writer
    target = tmp_path / name
    target.write_bytes(b"previous")

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(error, match="No space left") as info:
        write(target)
    assert str(target) in str(info.value) and ".tmp" not in str(info.value)
    assert target.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == [name]


def _strict_json(path):
    """Parse as JSON.parse would: NaN and Infinity are not JSON."""

    def refuse(token):
        raise AssertionError(f"{path.name} holds the bare token {token}")

    opener = __import__("gzip").open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_constant=refuse)


@pytest.mark.parametrize("kind", ["chrome trace", "chrome trace gz", "raw json", "events json"])
def test_non_finite_metadata_is_written_as_strings(kind, tmp_path):
    write, _, name = WRITERS[kind]
    write(tmp_path / name)
    text = json.dumps(_strict_json(tmp_path / name))
    assert '"loss": "NaN"' in text and '"best": "Infinity"' in text
    assert '"low": "-Infinity"' in text


def test_benchmark_results_write_nan_as_a_string(tmp_path):
    write_json({"std_ms": float("nan"), "times_s": [0.5]}, tmp_path / "b.json")
    assert _strict_json(tmp_path / "b.json") == {"std_ms": "NaN", "times_s": [0.5]}


def test_a_diverged_training_history_is_valid_json(tmp_path):
    _history().to_json(tmp_path / "h.json")
    assert _strict_json(tmp_path / "h.json") == [{"epoch": 1, "loss": "NaN", "lr": "Infinity"}]
    _history().to_csv(tmp_path / "h.csv")
    assert (tmp_path / "h.csv").read_bytes() == b"epoch,loss,lr\r\n1,nan,inf\r\n"


def test_long_file_names_still_get_a_temporary_file(tmp_path):
    name = "x" * 250 + ".json"
    _profiler().export_chrome_trace(tmp_path / name)
    assert [p.name for p in tmp_path.iterdir()] == [name]
