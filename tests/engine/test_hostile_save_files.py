"""Save files altered after ``eo.save`` wrote them (issue 36): each is an
``EveryOSerializationError`` naming the file, checked before anything large is allocated."""

from __future__ import annotations

import io
import json
import os
import tracemalloc
import zipfile

import numpy as np
import pytest

import everyo as eo
from everyo.errors import EveryOSerializationError


def _saved(tmp_path):
    return eo.save({"w": eo.Tensor(np.arange(4.0)), "epoch": 3}, tmp_path / "m.eo")


def _rewrite(path, *, manifest=None, arrays: bytes | None = None):
    with zipfile.ZipFile(path) as zf:
        old_manifest = json.loads(zf.read("manifest.json"))
        old_arrays = zf.read("arrays.npz")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(
            "manifest.json", json.dumps(manifest(old_manifest) if manifest else old_manifest)
        )
        zf.writestr("arrays.npz", old_arrays if arrays is None else arrays)
    return path


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: {**m, "version": "2"},
        lambda m: {**m, "tree": {"__tensor__": ["a0"]}},
        lambda m: {**m, "tree": {"__tuple__": 5}},
        lambda m: {**m, "tree": {"__items__": [[1, 2, 3]]}},
        lambda m: {**m, "tree": {"__items__": 7}},
    ],
    ids=["version text", "unhashable key", "tuple of a number", "items of three", "items number"],
)
def test_a_tampered_manifest_is_a_serialization_error(tmp_path, edit):
    path = _rewrite(_saved(tmp_path), manifest=edit)
    with pytest.raises(EveryOSerializationError, match="m.eo"):
        eo.load(path)


def test_a_manifest_nested_too_deeply_is_a_serialization_error(tmp_path):
    path = _saved(tmp_path)
    with zipfile.ZipFile(path) as zf:
        arrays = zf.read("arrays.npz")
    deep = '{"format": "everyo", "version": 1, "tree": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("manifest.json", deep)
        zf.writestr("arrays.npz", arrays)
    with pytest.raises(EveryOSerializationError, match="m.eo"):
        eo.load(path)


def _npz_declaring(shape) -> bytes:
    npy = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        npy, {"descr": "<f8", "fortran_order": False, "shape": shape}
    )
    npy.write(b"\0" * 32)  # the data a 4-element array would hold, not what the header says
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("a0.npy", npy.getvalue())
    return out.getvalue()


def test_an_array_header_declaring_a_gibibyte_is_refused_before_allocating_it(tmp_path):
    path = _rewrite(_saved(tmp_path), arrays=_npz_declaring((2**27,)))  # 1 GiB of float64
    tracemalloc.start()
    try:
        with pytest.raises(EveryOSerializationError, match="declares"):
            eo.load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20


def test_a_file_as_saved_still_loads(tmp_path):
    obj = eo.load(_saved(tmp_path))
    assert obj["epoch"] == 3 and np.array_equal(obj["w"].numpy(), np.arange(4.0))


def _deflated_bomb(tmp_path, inner: bool) -> str:
    """A small save file whose arrays member (or an array inside it) is deflated zeros that
    declare 64 MiB: what a file that declares gigabytes does, at a size a test can afford."""
    path = _saved(tmp_path)
    big = 64 * 2**20
    if inner:
        npy = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            npy, {"descr": "<f8", "fortran_order": False, "shape": (big // 8,)}
        )
        npz = io.BytesIO()
        with zipfile.ZipFile(npz, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("a0.npy", npy.getvalue() + b"\0" * big)
        return _rewrite(path, arrays=npz.getvalue())
    with zipfile.ZipFile(path) as zf:
        manifest = zf.read("manifest.json")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("manifest.json", manifest)
        zf.writestr("arrays.npz", b"\0" * big, compress_type=zipfile.ZIP_DEFLATED)
    return path


@pytest.mark.parametrize("inner", [False, True])
def test_a_member_declaring_more_than_the_file_holds_is_refused_before_reading(tmp_path, inner):
    """Issue 44, case 8: declared sizes are checked against the archive before any member is
    read (a 2.1 MB file declaring 2 GiB made load allocate them: MemoryError under a limit)."""
    path = _deflated_bomb(tmp_path, inner)
    assert os.path.getsize(path) < 2**20
    tracemalloc.start()
    try:
        with pytest.raises(EveryOSerializationError, match="declares"):
            eo.load(path)
        if not inner:  # (the manifest's reader refuses it too)
            with pytest.raises(EveryOSerializationError, match="declares"):
                eo.inspect_archive(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20
