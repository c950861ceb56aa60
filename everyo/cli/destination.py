"""Output paths checked before the work starts.

``python -m everyo profile s.py --chrome-trace nodir/x.json`` used to run the whole script and
only then fail to export; the CLI (and the magic's ``--export``) now check each destination
first, with the writer's own checks, and stop with a message naming the option.
"""

from __future__ import annotations

import os

from everyo.errors import EveryOConfigError
from everyo.fileio import check_target

__all__ = ["check_destination"]


def check_destination(path: str, option: str) -> None:
    """Raise :class:`EveryOConfigError` unless a file can be written at ``path``.

    The checks are :func:`everyo.fileio.check_target`'s (not a directory, the folder exists,
    not a read-only file) plus a writable folder; ``option`` (``"--chrome-trace"``) starts the
    message. The export itself still reports anything that changes in between.
    """
    try:
        target = check_target(path, error=EveryOConfigError)
    except EveryOConfigError as exc:
        raise EveryOConfigError(f"{option}: {exc}") from None
    folder = target.parent if str(target.parent) else "."
    if not os.access(folder, os.W_OK | os.X_OK):
        raise EveryOConfigError(
            f"{option}: cannot write {target}: folder {folder} is not writable by this user; "
            f"choose another folder"
        )
