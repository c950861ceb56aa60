"""Atomic file writing: a temp file in the target directory, then ``os.replace``.

A missing directory or an unwritable path raises :class:`EveryOExportError` naming the path, and
no partial file is ever left behind (the temp file is removed on any failure).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
from pathlib import Path

from everyo.errors import EveryOExportError


def _target(path) -> Path:
    try:
        target = Path(os.fspath(path)).expanduser()
    except TypeError:
        raise EveryOExportError(f"export path must be a str or Path, got {path!r}") from None
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise EveryOExportError(f"cannot write {target}: it is a directory; give a file name")
    if not parent.is_dir():
        raise EveryOExportError(
            f"cannot write {target}: directory {parent} does not exist; create it first "
            f"(Path({str(parent)!r}).mkdir(parents=True, exist_ok=True))"
        )
    return target


@contextlib.contextmanager
def atomic_text(path, *, compress: bool | None = None):
    """Yield a text stream; on success it replaces ``path``, on failure nothing is left.

    ``compress`` defaults to ``path`` ending in ``.gz``.
    """
    target = _target(path)
    if compress is None:
        compress = target.name.endswith(".gz")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise EveryOExportError(
            f"cannot write {target}: {exc.strerror or exc}; check that the directory is "
            "writable by this process"
        ) from exc
    try:
        with os.fdopen(fd, "wb") as raw:
            binary = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=4) if compress else raw
            text = io.TextIOWrapper(binary, encoding="utf-8", newline="\n")
            try:
                yield text
                text.flush()
            finally:
                text.detach()
                if compress:
                    binary.close()
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, EveryOExportError):
            raise EveryOExportError(f"cannot write {target}: {exc}") from exc
        raise
