"""What a save file says about itself: the descriptive manifest fields :func:`everyo.save`
writes, and :func:`inspect_archive`, which reads them without loading any array.

>>> import everyo as eo, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "model.eo")
>>> _ = eo.save(eo.Sequential(eo.Linear(4, 2, seed=0)), path, metadata={"epoch": 3})
>>> info = eo.inspect_archive(path)
>>> info["class_name"], info["num_parameters"], info["parameters"]["0.weight"], info["metadata"]
('Sequential', 10, {'shape': [2, 4], 'dtype': 'float32'}, {'epoch': 3})
"""

from __future__ import annotations

import datetime
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from everyo.errors import EveryOFileNotFoundError, EveryOSerializationError

__all__ = ["describe", "inspect_archive", "with_suffix", "resolve_saved"]

_MANIFEST, _ARRAYS = "manifest.json", "arrays.npz"


def with_suffix(path: str | os.PathLike) -> str | os.PathLike:
    """``path`` with ``.evo`` appended when it has no suffix (reference EveryO's rule)."""
    return path if Path(path).suffix else Path(path).with_suffix(".evo")


def resolve_saved(path: str | os.PathLike) -> Path:
    """The file to read for ``path``: itself, or ``path.evo`` when ``path`` has no suffix and
    only that file exists."""
    path = Path(path)
    if not path.exists() and not path.suffix and path.with_suffix(".evo").exists():
        return path.with_suffix(".evo")
    return path


def describe(obj, metadata: dict | None) -> dict[str, Any]:
    """The descriptive manifest fields for saving ``obj`` (a Module or a state container):
    version, UTC time, class name, each parameter's shape and dtype, and ``metadata``, which
    must be JSON-serialisable."""
    from everyo._version import __version__
    from everyo.nn.module import Module

    fields: dict[str, Any] = {
        "everyo_version": __version__,
        "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "class_name": type(obj).__name__ if isinstance(obj, Module) else None,
    }
    if isinstance(obj, Module):
        params = {
            name: {"shape": list(t.shape), "dtype": str(t.dtype)}
            for name, t in obj.state_dict().items()
        }
        fields["parameters"] = params
        fields["num_parameters"] = int(sum(p.data.size for p in obj.parameters()))
    try:
        fields["metadata"] = json.loads(json.dumps(metadata or {}))
    except (TypeError, ValueError) as exc:
        raise EveryOSerializationError(
            f"save(metadata=...) must be JSON-serialisable (numbers, strings, lists, dicts): {exc}"
        ) from None
    return fields


def check_members(zf: zipfile.ZipFile, holds: int, path) -> None:
    """Refuse a zip whose members declare more bytes than the archive holds, before any is
    read (issue 44: a 2.1 MB file of deflated zeros declaring 2 GiB made ``load`` allocate
    them first). ``everyo.save`` stores its members uncompressed, so each member's size is its
    stored size, and all of them fit in the ``holds`` bytes of the archive."""
    total = 0
    for info in zf.infolist():
        if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
            raise EveryOSerializationError(
                f"{path}: member {info.filename[:80]!r} declares {info.file_size:,} bytes in "
                f"{info.compress_size:,} compressed bytes; everyo.save stores its members "
                "uncompressed, so the file is not one it wrote, or it was altered"
            )
        total += info.file_size
    if total > holds:
        raise EveryOSerializationError(
            f"{path}: its members declare {total:,} bytes but the file holds {holds:,}; the "
            "file is corrupt or altered"
        )


def _array_headers(zf: zipfile.ZipFile) -> dict[str, dict]:
    """Shape and dtype of every array in the archive's ``.npz``, from the headers only."""
    import io

    out = {}
    raw = zf.read(_ARRAYS)
    with zipfile.ZipFile(io.BytesIO(raw)) as npz:
        check_members(npz, len(raw), _ARRAYS)
        for name in npz.namelist():
            with npz.open(name) as fh:
                major, _ = np.lib.format.read_magic(fh)
                read = (np.lib.format.read_array_header_1_0 if major == 1
                        else np.lib.format.read_array_header_2_0)  # fmt: skip
                shape, _, dtype = read(fh)
            out[name.removesuffix(".npy")] = {"shape": list(shape), "dtype": str(dtype)}
    return out


def inspect_archive(path: str | os.PathLike) -> dict[str, Any]:
    """Read a save file's manifest (no arrays are loaded).

    Returns a dict with ``path``, ``everyo_version``, ``format_version``, ``created_at``,
    ``class_name``, ``num_parameters``, ``parameters`` (name → ``{"shape", "dtype"}``) and
    ``metadata``. Files written before these fields existed report None for the version,
    time and class, and their parameters from the array headers.

    Raises
    ------
    EveryOSerializationError
        The file is missing, not a zip, has no manifest, or the manifest is corrupt.
    """
    path = resolve_saved(path)
    if not path.is_file():
        raise EveryOFileNotFoundError(f"no saved file at {path}")
    try:
        with zipfile.ZipFile(path) as zf:
            check_members(zf, path.stat().st_size, path)
            manifest = json.loads(zf.read(_MANIFEST))
            if not isinstance(manifest, dict):
                raise ValueError("the manifest is not a JSON object")
            params = manifest.get("parameters")
            if params is None and manifest.get("kind") == "module":
                headers, tree = _array_headers(zf), manifest.get("tree", {})
                params = {
                    name: headers[ref["__tensor__"]]
                    for name, ref in tree.items()
                    if isinstance(ref, dict) and ref.get("__tensor__") in headers
                }
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, ValueError, OSError) as exc:
        raise EveryOSerializationError(
            f"{path} is not a file written by everyo.save (or it is corrupt): {exc}"
        ) from None
    params = params or {}
    return {
        "path": str(path),
        "everyo_version": manifest.get("everyo_version"),
        "format_version": manifest.get("version"),
        "created_at": manifest.get("created_at"),
        "class_name": manifest.get("class_name"),
        "num_parameters": manifest.get(
            "num_parameters", sum(int(np.prod(p["shape"])) for p in params.values())
        ),
        "parameters": params,
        "metadata": manifest.get("metadata", {}),
    }
