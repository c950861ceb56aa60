"""Profiler exporters, one module per format.

They are imported on a run's first export, often on a thread of its own. A process forked while
such an import is under way would inherit the module's import lock held by a thread the child
does not have, and the child's own export would wait for it for ever; so from the first export
on, a fork first finishes importing them (waiting for the importing thread if need be).
"""

from __future__ import annotations

import importlib
import os

_EXPORTERS = ("everyo.profiler.export.events", "everyo.profiler.export.chrome")


def _finish_imports() -> None:
    for name in _EXPORTERS:
        importlib.import_module(name)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_finish_imports)
