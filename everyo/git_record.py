"""The git commit of the working directory, read from the repository's files.

Every export and benchmark records the commit it was made at. Running ``git status`` for that
would run the repository's ``core.fsmonitor`` hook (and clean filters), that is, code from the
repository being profiled, on every export. So the commit is read from ``.git/HEAD``, loose refs
and ``packed-refs`` without starting git at all; whether the tree is dirty is only asked of git
(``environment(git_status=True)``) when the caller wants it, and then with the fsmonitor off.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["git_record"]

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_TIMEOUT_S = 2.0


def git_record(cwd: Path, *, status: bool = False) -> dict[str, Any] | None:
    """``{"commit", "dirty", "root"}`` of the work tree around ``cwd``; ``None`` outside one.

    ``dirty`` is ``None`` (not asked) unless ``status`` is true; then ``git status`` runs with
    ``core.fsmonitor`` off, and ``dirty`` is ``None`` if it fails.
    """
    found = _find(Path(cwd).absolute())
    if found is None:
        return None
    root, gitdir = found
    commit = _head(gitdir)
    if commit is None:
        return None
    dirty = _dirty(root) if status else None
    return {"commit": commit, "dirty": dirty, "root": str(root)}


def _ceilings() -> set[Path]:
    raw = os.environ.get("GIT_CEILING_DIRECTORIES", "")
    return {Path(p).absolute() for p in raw.split(os.pathsep) if p}


def _find(start: Path) -> tuple[Path, Path] | None:
    """(work tree root, git directory) of the repository around ``start``, as git looks."""
    if os.environ.get("GIT_DIR"):
        gitdir = Path(os.environ["GIT_DIR"]).absolute()
        return Path(os.environ.get("GIT_WORK_TREE") or start), gitdir
    ceilings = _ceilings()
    for d in (start, *start.parents):
        if d != start and d in ceilings:
            return None
        dot = d / ".git"
        if dot.is_dir():
            return d, dot
        if dot.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = _read(dot) or ""
            if text.startswith("gitdir:"):
                return d, (d / text[len("gitdir:") :].strip()).resolve()
            return None
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _head(gitdir: Path) -> str | None:
    """The commit HEAD points at, following symbolic refs; ``None`` for an unborn branch."""
    common = gitdir
    text = _read(gitdir / "commondir")
    if text:
        common = (gitdir / text).resolve()
    ref = "HEAD"
    for _ in range(5):  # symbolic refs may chain, never deeply
        value = _read(gitdir / ref) if ref == "HEAD" else _ref(gitdir, common, ref)
        if value is None:
            return _rev_parse(gitdir) if (common / "reftable").is_dir() else None
        if value.startswith("ref:"):
            ref = value[4:].strip()
            continue
        return value if _SHA.match(value) else None
    return None


def _ref(gitdir: Path, common: Path, ref: str) -> str | None:
    for base in (gitdir, common):
        value = _read(base / ref)
        if value:
            return value
    packed = _read(common / "packed-refs") or ""
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and _SHA.match(sha):
            return sha
    return None


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-c", "core.fsmonitor=false", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _rev_parse(gitdir: Path) -> str | None:
    # The reftable ref format has no plain files to read; rev-parse runs no hook.
    out = _git(["--git-dir", str(gitdir), "rev-parse", "HEAD"], gitdir)
    return out if out and _SHA.match(out) else None


def _dirty(root: Path) -> bool | None:
    out = _git(["status", "--porcelain", "--untracked-files=no"], root)
    return None if out is None else bool(out)
