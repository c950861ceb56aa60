"""Run a callback when a module is first imported (a framework imported while a profile runs).

A script profiled by ``python -m everyo profile`` or a cell of ``%%everyo_profile`` often imports
torch itself, after the profile started: the profiler then installs its torch adapter the
moment torch has finished importing, without importing it itself.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


class _WhenImported:
    """A meta-path finder that lets the other finders find ``name`` and wraps the loader's
    ``exec_module`` so that ``callback()`` runs once the module has executed."""

    def __init__(self, name: str, callback: Callable[[], None]):
        self.name, self.callback = name, callback

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec
        callback = self.callback

        def exec_then_call(module):
            exec_module(module)
            callback()

        loader.exec_module = exec_then_call  # (a loader made for this spec: ours to wrap)
        return spec


def when_imported(name: str, callback: Callable[[], None]) -> Callable[[], None]:
    """Call ``callback()`` after top-level module ``name`` is imported for the first time;
    returns the function that stops watching (call it whatever happened)."""
    finder = _WhenImported(name, callback)
    sys.meta_path.insert(0, finder)

    def stop() -> None:
        try:
            sys.meta_path.remove(finder)
        except ValueError:  # removed already
            pass

    return stop
