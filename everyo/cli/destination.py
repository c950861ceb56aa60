"""Output paths checked before the work starts.

``python -m everyo profile s.py --chrome-trace nodir/x.json`` used to run the whole script and
only then fail to export; the CLI now checks each destination first and stops with a message
naming the option, the path and the fix.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from everyo.errors import EveryOConfigError

__all__ = ["check_destination"]


def check_destination(path: str, option: str) -> None:
    """Raise :class:`EveryOConfigError` unless a file can be written at ``path``.

    ``option`` (``"--chrome-trace"``) is named in the message. The check is the usual one
    (directory exists and is writable, the path is not a directory or a read-only file); the
    export itself still reports anything that changes in between.
    """
    if not path:
        raise EveryOConfigError(f"{option} needs a file path, e.g. {option} trace.json")
    target = Path(path).expanduser()
    parent = target.parent
    where = f"{option} {path}"
    if target.is_dir():
        example = shlex.quote(str(target / "trace.json"))
        raise EveryOConfigError(f"{where}: is a directory; give a file name, e.g. {example}")
    if not parent.is_dir():
        raise EveryOConfigError(
            f"{where}: directory {parent} does not exist; create it first "
            f"(mkdir -p {shlex.quote(str(parent))}) or pick another path"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise EveryOConfigError(
            f"{where}: directory {parent} is not writable by this user; pick another path"
        )
    if target.exists() and not os.access(target, os.W_OK):
        raise EveryOConfigError(
            f"{where}: the file exists and is read-only; pick another path or make it writable"
        )
