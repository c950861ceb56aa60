"""How everyo writes files: one atomic writer, and JSON that every parser accepts.

Every file everyo writes (Chrome traces, raw events, saved models, benchmark results, HTML
reports) goes through :func:`atomic_open`:

- the data goes to a hidden temporary file in the target's folder, which then replaces the
  target in one rename, so a reader never sees half a file and a failure leaves the old file;
- the new file gets the permissions of any new file of this process (``0o666`` less the
  umask), like a file written by ``open(path, "w")``;
- a target that is read-only (no write bit, or not writable by this process) is refused, not
  silently replaced;
- every failure is one error (``EveryOExportError`` unless the caller names another) whose
  message names the path the user gave, never the temporary file, and says what to do;
- a temporary file is named ``.<name>.<pid>-<8 hex>.tmp`` after the process writing it. One
  left behind by a process that was killed mid-write is removed by the next write to that
  folder (once its process is gone and it has not changed for ``STALE_AFTER_S``), and this
  process's own are removed at interpreter exit (a daemon thread still writing, say).

:func:`dumps` is ``json.dumps`` for files: NaN and infinities, which ``JSON.parse`` (browsers,
Perfetto) rejects for the whole file, are written as the strings ``"NaN"``, ``"Infinity"`` and
``"-Infinity"``.

This is an internal module shared by ``everyo.profiler``, ``everyo.serialization``,
``everyo.bench`` and ``everyo_lab``; it is not part of the public API.
"""

from __future__ import annotations

import atexit
import contextlib
import gzip
import io
import json
import math
import os
import re
import secrets
import threading
import time
from pathlib import Path

from everyo.errors import EveryOExportError

__all__ = ["atomic_open", "check_target", "write_text", "dumps", "finite_json"]

# The longest file name most file systems allow; the temporary name must fit too.
_NAME_MAX = 255
STALE_AFTER_S = 60.0  # a temporary file of a dead process unchanged this long is removed
_TEMP_NAME = re.compile(r"\..+\.(\d+)-[0-9a-f]{8}\.tmp")
_in_flight: dict[str, int] = {}  # temporary files being written: path -> writing process
_in_flight_lock = threading.Lock()
NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def check_target(path, *, error: type[Exception] = EveryOExportError) -> Path:
    """The target as a ``Path`` after the checks that need no writing; raises ``error``.

    Refused: a non-path, a directory, a missing folder, an existing read-only file.
    """
    try:
        target = Path(os.fspath(path)).expanduser()
    except TypeError:
        raise error(f"the path must be a str or Path, got {path!r}") from None
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise error(f"cannot write {target}: it is a directory; give a file name")
    if not folder.is_dir():
        raise error(
            f"cannot write {target}: folder {folder} does not exist; create it first "
            f"(Path({str(folder)!r}).mkdir(parents=True, exist_ok=True))"
        )
    if _read_only(target):
        raise error(
            f"cannot write {target}: the file exists and is read-only; make it writable "
            f"(chmod u+w {str(target)!r}) to replace it, or choose another name"
        )
    return target


def _read_only(target: Path) -> bool:
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return False  # no file yet (or unreadable metadata): the write itself will tell
    # root may write anything, so the write bits are checked as well as access()
    return not (mode & 0o222) or not os.access(target, os.W_OK)


def _temp_file(target: Path, error) -> tuple[int, Path]:
    """A new hidden file next to ``target``, created with mode 0o666 so the umask applies."""
    pid = os.getpid()
    stem = target.name[: _NAME_MAX - 16 - len(str(pid)) - 1]  # the whole name fits NAME_MAX
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = target.with_name(f".{stem}.{pid}-{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)
            with _in_flight_lock:
                _in_flight[os.path.abspath(tmp)] = pid
            return fd, tmp
        except FileExistsError:
            continue
        except OSError as exc:
            folder = target.parent if str(target.parent) else Path(".")
            raise error(
                f"cannot write {target}: {_reason(exc)} in folder {folder}; check that the "
                "folder is writable by this process, or choose another folder"
            ) from exc
    raise error(f"cannot write {target}: no free temporary name in its folder")


def _done(tmp: Path) -> None:
    with _in_flight_lock:
        _in_flight.pop(os.path.abspath(tmp), None)


def _alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill would end the process there: go by the file's age alone
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, under another user
        return True
    return True


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary files in ``folder`` that a killed writer left; return them.

    Stale: its process is gone (or is this one, which is not writing it) and it has not
    changed for ``STALE_AFTER_S`` (a writer on another machine sharing the folder keeps its
    file fresh). Never raises: a file it cannot remove is left.
    """
    removed = []
    now, me = time.time(), os.getpid()
    with _in_flight_lock:
        ours = set(_in_flight)
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(".")]
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP_NAME.fullmatch(entry.name)
        if match is None or os.path.abspath(entry.path) in ours:
            continue
        pid = int(match.group(1))
        try:
            if now - entry.stat(follow_symlinks=False).st_mtime < STALE_AFTER_S:
                continue
            if pid != me and _alive(pid):
                continue
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _remove_superseded(target: Path) -> None:
    """After ``target`` was replaced whole: remove its own temporaries that a writer killed
    mid-write left, whatever their age (issue 44: a re-export right after the kill kept them
    for ``STALE_AFTER_S``): their process is gone and this file supersedes them. Never
    raises."""
    me = os.getpid()
    with _in_flight_lock:
        ours = set(_in_flight)
    full = f".{target.name}"
    try:
        entries = [e for e in os.scandir(target.parent if str(target.parent) else ".")]
    except OSError:
        return
    for entry in entries:
        match = _TEMP_NAME.fullmatch(entry.name)
        if match is None or os.path.abspath(entry.path) in ours:
            continue
        pid = int(match.group(1))
        name = entry.name[: -len(match.group(1)) - 14]  # ".<stem>": less ".<pid>-<hex>.tmp"
        if name != full and not (len(name) > _NAME_MAX // 2 and full.startswith(name)):
            continue  # (another file's, or a name cut to fit: then a long prefix of it)
        if pid == me or _alive(pid):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)


@atexit.register
def _remove_own_temporaries() -> None:
    """At interpreter exit, the temporary files this process is still writing (a forked child
    leaves its parent's alone)."""
    me = os.getpid()
    with _in_flight_lock:
        mine = [path for path, pid in _in_flight.items() if pid == me]
    for path in mine:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _reason(exc: OSError) -> str:
    # strerror, not str(exc): the latter names the temporary file, which the user never chose
    if exc.strerror:
        return exc.strerror
    return str(exc) if exc.filename is None and str(exc) else type(exc).__name__


@contextlib.contextmanager
def atomic_open(
    path,
    *,
    binary: bool = False,
    compress: bool | None = False,
    error: type[Exception] = EveryOExportError,
):
    """Yield a stream that replaces ``path`` when the block ends without an exception.

    Parameters
    ----------
    path : str or PathLike
        The file to write; its folder must exist.
    binary : bool
        Yield a binary stream instead of UTF-8 text (``"\\n"`` line ends; its ``.buffer`` is
        the binary stream beneath).
    compress : bool or None
        Gzip the bytes; ``None`` means "when the name ends in ``.gz``".
    error : Exception class
        Raised for every failure to write, with a message naming ``path``.

    On any exception the temporary file is removed and the previous file (if any) is left as it
    was; an ``OSError`` becomes ``error``, other exceptions pass through unchanged.
    """
    target = check_target(path, error=error)
    if compress is None:
        compress = target.name.endswith(".gz")
    remove_stale_temporaries(target.parent if str(target.parent) else Path("."))
    fd, tmp = _temp_file(target, error)
    try:
        with os.fdopen(fd, "wb") as raw:
            stream = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=4) if compress else raw
            text = None if binary else io.TextIOWrapper(stream, encoding="utf-8", newline="\n")
            try:
                yield stream if binary else text
                if text is not None:
                    text.flush()
            finally:
                if text is not None:
                    text.detach()
                if compress:
                    stream.close()
        os.replace(tmp, target)
        _done(tmp)
        _remove_superseded(target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _done(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, error):
            raise error(f"cannot write {target}: {_reason(exc)}; nothing was written") from exc
        raise


def write_text(
    path, text: str, *, error: type[Exception] = EveryOExportError, parents: bool = False
) -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_open`); return the path.

    ``parents=True`` creates missing parent folders first (benchmark and sweep results).
    """
    path = Path(path)
    if parents:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise error(f"could not write {path}: {exc.strerror or exc}") from exc
    with atomic_open(path, error=error) as f:
        f.write(text)
    return path


def finite_json(value):
    """``value`` with every non-finite float replaced by its string (``"NaN"``, ...).

    Containers are copied only when they hold one; other values come back as they are.
    """
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if value != value else NON_FINITE[value]
    if isinstance(value, dict):
        items = {k: finite_json(v) for k, v in value.items()}
        return value if all(items[k] is v for k, v in value.items()) else items
    if isinstance(value, (list, tuple)):
        items = [finite_json(v) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else items
    return value


def dumps(value, **kwargs) -> str:
    """``json.dumps`` that writes NaN and infinities as strings, so ``JSON.parse`` accepts it.

    What a ``default=`` function returns (say ``float`` of a NumPy scalar) is checked too.
    """
    try:
        return json.dumps(value, allow_nan=False, **kwargs)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
    default = kwargs.pop("default", None)
    if default is not None:
        kwargs["default"] = lambda obj: finite_json(default(obj))
    return json.dumps(finite_json(value), allow_nan=False, **kwargs)
