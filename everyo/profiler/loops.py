"""The compiled loops over event batches (``everyo.profiler._cbatch``), where they were built.

``LOOPS`` is that extension module, or ``None`` where it was not built or
``EVERYO_PURE_PYTHON=1`` asks for the pure-Python paths; callers then run their NumPy code,
which is the specification the compiled loops follow (tests run both and compare).
"""

from __future__ import annotations

import os


def _load():
    if os.environ.get("EVERYO_PURE_PYTHON"):
        return None
    try:
        from everyo.profiler import _cbatch
    except ImportError:
        return None
    return _cbatch


LOOPS = _load()
