"""``save`` and ``load``: models and state (dicts of tensors, optimizer state, checkpoints) as a
zip holding a JSON manifest and a ``.npz`` of arrays. No pickle anywhere (``allow_pickle=False``).

>>> import everyo as eo, tempfile, os
>>> from everyo.serialization import load, save  # also eo.save / eo.load
>>> model = eo.Sequential(eo.Linear(4, 2, seed=0))
>>> path = os.path.join(tempfile.mkdtemp(), "model.eo")
>>> _ = save(model, path)  # returns the Path written
>>> clone = load(path, model=eo.Sequential(eo.Linear(4, 2, seed=1)))
>>> bool((clone[0].weight == model[0].weight).all())
True
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from everyo.archive import check_members, describe, inspect_archive, resolve_saved, with_suffix
from everyo.core.backend import is_cupy_array
from everyo.core.tensor import Tensor, as_tensor
from everyo.errors import EveryOFileNotFoundError, EveryOSerializationError
from everyo.fileio import atomic_open

__all__ = ["save", "load", "inspect_archive"]

FORMAT = "everyo"
VERSION = 1
_MANIFEST, _ARRAYS = "manifest.json", "arrays.npz"


def _encode(obj, arrays: dict) -> Any:
    """``obj`` as JSON-able data; arrays and tensors move into ``arrays`` and are referenced."""
    if isinstance(obj, Tensor):
        key = f"a{len(arrays)}"
        arrays[key] = obj.numpy()
        return {"__tensor__": key}
    if isinstance(obj, np.ndarray) or is_cupy_array(obj):
        arr = obj if isinstance(obj, np.ndarray) else obj.get()
        if arr.dtype.hasobject:
            raise EveryOSerializationError(
                "cannot save an array of Python objects (it would need pickle); convert it to "
                "a numeric dtype"
            )
        key = f"a{len(arrays)}"
        arrays[key] = arr
        return {"__array__": key}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        if all(isinstance(k, str) for k in obj) and not any(k.startswith("__") for k in obj):
            return {k: _encode(v, arrays) for k, v in obj.items()}
        return {"__items__": [[_encode(k, arrays), _encode(v, arrays)] for k, v in obj.items()]}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, arrays) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v, arrays) for v in obj]
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise EveryOSerializationError(
        f"cannot save a value of type {type(obj).__name__}: save() takes a Module, or dicts, "
        f"lists and tuples of tensors, arrays, numbers and strings"
    )


def _decode(obj, arrays) -> Any:
    if isinstance(obj, list):
        return [_decode(v, arrays) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__tensor__" in obj:
        return as_tensor(arrays[obj["__tensor__"]])
    if "__array__" in obj:
        return arrays[obj["__array__"]]
    if "__tuple__" in obj:
        return tuple(_decode(v, arrays) for v in obj["__tuple__"])
    if "__items__" in obj:
        return {_hashable(_decode(k, arrays)): _decode(v, arrays) for k, v in obj["__items__"]}
    return {k: _decode(v, arrays) for k, v in obj.items()}


def _check_arrays(npz: zipfile.ZipFile, path) -> None:
    """Refuse an array whose header declares more bytes than its member holds, before NumPy
    allocates it (a 2 MB file could declare gigabytes)."""
    fmt = np.lib.format
    for info in npz.infolist():
        with npz.open(info) as f:
            version = fmt.read_magic(f)
            read_header = (
                fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            )
            shape, _, dtype = read_header(f)
            declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
            held = info.file_size - f.tell()
        if dtype.hasobject or declared != held:
            raise EveryOSerializationError(
                f"{path}: array {info.filename!r} declares shape {shape} of {dtype} "
                f"({declared:,} bytes) but holds {held:,} bytes; the file is corrupt or altered"
            )


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def save(obj, path: str | os.PathLike, *, metadata: dict | None = None,
         overwrite: bool = True) -> Path:  # fmt: skip
    """Write a Module's ``state_dict()`` (or any dict/list of tensors and plain values) to
    ``path`` atomically: a temporary file in the same folder is renamed over ``path``.

    Parameters
    ----------
    obj : Module, dict, list or tuple
        A Module is saved as its ``state_dict()``; containers may nest and hold Tensors, NumPy
        arrays, numbers, strings, booleans and None (e.g. ``{"model": ..., "optimizer": ...,
        "epoch": 3}``).
    path : str or PathLike
        The file to write; its folder must exist. A path without a suffix gets ``.evo``
        (reference EveryO's rule). The new file gets the permissions any new file of this
        process gets (``0o666`` less the umask).
    metadata : dict, optional
        JSON-serialisable notes kept in the manifest (see :func:`inspect_archive`), with the
        everyo version, the UTC time, the class name and each parameter's shape and dtype.
    overwrite : bool
        False refuses to replace an existing file.

    Returns
    -------
    Path
        The path written.

    Raises
    ------
    EveryOSerializationError
        The folder is missing or not writable, ``path`` is a directory or a read-only file, or
        writing failed (the previous file, if any, is left as it was).
    """
    from everyo.nn.module import Module

    kind = "module" if isinstance(obj, Module) else "object"
    path = with_suffix(path)
    if not overwrite and Path(path).exists():
        raise EveryOSerializationError(f"{path} exists and overwrite=False; pick another path")
    fields = describe(obj, metadata)
    if isinstance(obj, Module):
        obj = obj.state_dict()
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(obj, arrays)
    manifest = {"format": FORMAT, "version": VERSION, "kind": kind, "tree": tree, **fields}
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    with atomic_open(path, binary=True, error=EveryOSerializationError) as fh:
        with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as zf:
            zf.writestr(_MANIFEST, json.dumps(manifest))
            zf.writestr(_ARRAYS, buf.getvalue())
    return Path(path)


def load(path: str | os.PathLike, model=None, *, strict: bool = True):
    """Read what :func:`save` wrote.

    Parameters
    ----------
    path : str or PathLike
        A file written by :func:`save`.
    model : Module, optional
        Load the saved state into it (``load_state_dict``) and return it.
    strict : bool
        Passed to ``load_state_dict``: False loads the keys that match and ignores the rest.

    Returns
    -------
    The saved object, with tensors as CPU Tensors (arrays saved as arrays stay NumPy arrays),
    or ``model``.

    Raises
    ------
    EveryOSerializationError
        The file is corrupt, truncated, not an everyo file, or from a newer format version.
    """
    path = resolve_saved(path)
    if not path.exists():
        raise EveryOFileNotFoundError(f"no saved file at {path}")
    try:
        with zipfile.ZipFile(path) as zf:
            check_members(zf, path.stat().st_size, path)  # (before reading any member)
            manifest = json.loads(zf.read(_MANIFEST))
            raw = zf.read(_ARRAYS)
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, json.JSONDecodeError, OSError) as exc:
        raise EveryOSerializationError(
            f"{path} is not a file written by everyo.save (or it is corrupt/truncated): {exc}"
        ) from exc
    except RecursionError:
        raise EveryOSerializationError(
            f"{path}: its manifest nests too deeply to be one everyo.save wrote"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise EveryOSerializationError(f"{path} is a zip but not an everyo save file")
    version = manifest.get("version", 0)
    if isinstance(version, bool) or not isinstance(version, int):
        raise EveryOSerializationError(
            f"{path}: the manifest's version is {str(version)[:40]!r}, not a whole number; the "
            "file was altered after everyo.save wrote it"
        )
    if version > VERSION:
        raise EveryOSerializationError(
            f"{path} uses save format {manifest.get('version')}, newer than this everyo "
            f"({VERSION}); upgrade everyo to read it"
        )
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as inner:
            check_members(inner, len(raw), path)
            _check_arrays(inner, path)
        with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        obj = _decode(manifest["tree"], arrays)
    except (ValueError, KeyError, OSError, zipfile.BadZipFile) as exc:
        raise EveryOSerializationError(f"{path}: the arrays are corrupt or missing: {exc}") from exc
    except (TypeError, AttributeError, IndexError, RecursionError) as exc:
        raise EveryOSerializationError(
            f"{path}: the manifest does not describe its contents as everyo.save writes them "
            f"({type(exc).__name__}: {exc}); the file was altered after it was saved"
        ) from None
    if model is not None:
        if not isinstance(obj, dict):
            raise EveryOSerializationError(f"{path} does not hold a state dict to load a model")
        model.load_state_dict(obj, strict=strict)
        return model
    return obj
