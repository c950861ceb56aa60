"""Where a sampled line is, as the reader knows it (``"train.py:11"``, ``"Cell In[7], line
11"``): the one spelling of a frame's place, which every text, panel and export of samples
uses; everyo_lab adds IPython's names of notebook cells (:func:`add_file_namer`)."""

from __future__ import annotations

import os

__all__ = ["add_file_namer", "place"]

_FILE_NAMERS: list = []


def add_file_namer(namer) -> None:
    """Have ``namer(file, line)`` name sampled lines: it returns the text for a frame's place
    (IPython's ``"Cell In[7], line 11"`` for a notebook cell's file; ``"Cell In[7]"`` for
    ``line=None``, the file alone), or ``None`` to leave it to the next namer and then to
    ``"file.py:11"``. everyo_lab adds IPython's."""
    if namer not in _FILE_NAMERS:
        _FILE_NAMERS.append(namer)


def place(file: str, line: int | None) -> str:
    """Where a sampled line is, as the reader knows it: ``"train.py:11"``, or a namer's text
    (:func:`add_file_namer`); ``line=None`` names the file alone (``"train.py"``, ``"Cell
    In[7]"``)."""
    for namer in _FILE_NAMERS:
        try:
            named = namer(file, line)
        except Exception:  # noqa: BLE001 - a namer's failure costs its name, not the report
            named = None
        if named:
            return named
    name = os.path.basename(file)
    return name if line is None else f"{name}:{line}"
