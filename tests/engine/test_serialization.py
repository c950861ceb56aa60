"""save/load: models, state dicts and checkpoints round trip; the file is a zip of a JSON manifest
and an .npz (no pickle); writes are atomic; corrupt or foreign files raise clearly."""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np
import pytest

import everyo as eo
from everyo.serialization import load, save


def _model(seed=0):
    return eo.Sequential(eo.Linear(4, 8, seed=seed), eo.BatchNorm1d(8), eo.ReLU(),
                         eo.Linear(8, 2, seed=seed + 1))  # fmt: skip


def test_model_round_trip(tmp_path):
    a = _model(0)
    a(eo.ones(3, 4))  # running statistics differ from the defaults
    path = tmp_path / "model.eo"
    save(a, path)
    b = load(path, model=_model(5))
    a.eval(), b.eval()
    x = eo.tensor(np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32))
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())
    state = load(path)
    assert list(state) == list(a.state_dict())
    assert isinstance(state["0.weight"], eo.Tensor) and state["0.weight"].dtype == np.float32
    assert state["1.num_batches_tracked"].dtype == np.int64


def test_checkpoint_with_optimizer_and_plain_values(tmp_path):
    model = _model()
    opt = eo.optim.Adam(model.parameters(), lr=0.01)
    model(eo.ones(3, 4)).sum().backward()
    opt.step()
    ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
            "name": "run-1", "ratio": 0.5, "flags": (True, None), "arr": np.arange(3)}  # fmt: skip
    save(ckpt, tmp_path / "ckpt.eo")
    back = load(tmp_path / "ckpt.eo")
    assert back["epoch"] == 3 and back["name"] == "run-1" and back["flags"] == (True, None)
    assert isinstance(back["arr"], np.ndarray) and back["arr"].tolist() == [0, 1, 2]
    assert set(back["optimizer"]["state"]) == {0, 1, 2, 3, 4, 5}  # int keys survive
    opt2 = eo.optim.Adam(_model().parameters(), lr=0.5)
    opt2.load_state_dict(back["optimizer"])
    assert opt2.param_groups[0]["lr"] == 0.01 and opt2.param_groups[0]["betas"] == (0.9, 0.999)


def test_file_format_is_json_plus_npz_without_pickle(tmp_path):
    path = tmp_path / "m.eo"
    save(_model(), path)
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["arrays.npz", "manifest.json"]
        manifest = json.loads(zf.read("manifest.json"))
    assert manifest["format"] == "everyo" and manifest["kind"] == "module"
    assert manifest["tree"]["0.weight"] == {"__tensor__": "a0"}


def test_object_arrays_are_refused(tmp_path):
    with pytest.raises(eo.EveryOSerializationError, match="pickle"):
        save({"x": np.array([object()])}, tmp_path / "o.eo")
    with pytest.raises(eo.EveryOSerializationError, match="cannot save"):
        save({"x": object()}, tmp_path / "o.eo")


@pytest.mark.parametrize("content", [b"", b"not a zip at all", b"PK\x03\x04garbage"])
def test_corrupt_files(tmp_path, content):
    path = tmp_path / "bad.eo"
    path.write_bytes(content)
    with pytest.raises(eo.EveryOSerializationError, match="not a file written by everyo.save"):
        load(path)


def test_truncated_and_foreign_files(tmp_path):
    path = tmp_path / "m.eo"
    save(_model(), path)
    data = path.read_bytes()
    (tmp_path / "cut.eo").write_bytes(data[: len(data) // 2])
    with pytest.raises(eo.EveryOSerializationError):
        load(tmp_path / "cut.eo")
    with zipfile.ZipFile(tmp_path / "foreign.zip", "w") as zf:
        zf.writestr("manifest.json", json.dumps({"format": "other"}))
        zf.writestr("arrays.npz", b"")
    with pytest.raises(eo.EveryOSerializationError, match="not an everyo save file"):
        load(tmp_path / "foreign.zip")
    with zipfile.ZipFile(tmp_path / "future.eo", "w") as zf:
        zf.writestr("manifest.json", json.dumps({"format": "everyo", "version": 99}))
        zf.writestr("arrays.npz", b"")
    with pytest.raises(eo.EveryOSerializationError, match="upgrade"):
        load(tmp_path / "future.eo")
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.eo")


def test_load_into_wrong_model(tmp_path):
    save(_model(), tmp_path / "m.eo")
    with pytest.raises(eo.EveryOSerializationError, match="unexpected keys"):
        load(tmp_path / "m.eo", model=eo.Sequential(eo.Linear(4, 8)))
    with pytest.raises(eo.EveryOShapeError, match="0.weight"):
        load(
            tmp_path / "m.eo",
            model=_model().__class__(
                eo.Linear(4, 9), eo.BatchNorm1d(8), eo.ReLU(), eo.Linear(8, 2)
            ),
        )


def test_atomic_write_keeps_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "m.eo"
    save(_model(0), path)
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(eo.EveryOSerializationError, match="disk full") as info:
        save(_model(1), path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["m.eo"]  # no temporary file left behind
    with pytest.raises(eo.EveryOSerializationError, match="does not exist"):
        save(_model(), tmp_path / "no" / "such" / "dir.eo")
