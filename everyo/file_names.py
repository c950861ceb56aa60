"""File names made from run labels: safe on every common file system, bounded, and distinct.

A label is free text (``"my run/1"``, ``"训练"``, 100,000 characters, ``123``); the name keeps
its letters and digits (any script), turns everything else into ``_``, and is cut to a length
every file system accepts. Whenever that changed the label, a short hash of the whole label is
appended, so two labels never share a file: ``"a b"`` and ``"a/b"`` both read ``a_b`` but end
in different hashes, and labels made only of symbols no longer all become ``run``.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = ["file_name_from_label", "MAX_STEM_BYTES"]

MAX_STEM_BYTES = 80  # UTF-8 bytes before the hash and suffix; file systems allow 255
_UNSAFE = re.compile(r"[^\w.-]+")  # \w: letters and digits of any script, and "_"
_EDGES = re.compile(r"^[._-]+|[._-]+$")  # hidden files, "..", options, Windows' trailing dots
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10))}
_RESERVED |= {f"LPT{i}" for i in range(10)}  # Windows device names, with any extension


def _label_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def _cut(text: str, max_bytes: int) -> str:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes, on a character boundary."""
    return text.encode("utf-8", "surrogatepass")[:max_bytes].decode("utf-8", "ignore")


def file_name_from_label(label, suffix: str = ".trace.json", *, default: str = "run") -> str:
    """A file name for ``label`` ending in ``suffix``.

    ``None`` or ``""`` give ``default + suffix``; a label that is already a safe, short name is
    kept as it is; any other label gets ``-`` and 8 hex digits of its SHA-256 before the suffix.

    >>> file_name_from_label("train")
    'train.trace.json'
    >>> file_name_from_label("my run/1")
    'my_run_1-7e011789.trace.json'
    >>> file_name_from_label("🔥🔥")
    'run-c76bbcb8.trace.json'
    """
    text = "" if label is None else str(label)
    if not text:
        return default + suffix
    safe = _EDGES.sub("", _UNSAFE.sub("_", unicodedata.normalize("NFKC", text)))
    safe = _EDGES.sub("", _cut(safe, MAX_STEM_BYTES))
    if safe == text and safe.split(".")[0].upper() not in _RESERVED:
        return safe + suffix
    return f"{safe or default}-{_label_hash(text)}{suffix}"
