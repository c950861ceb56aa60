"""Every optional C extension, loaded in one place by one rule.

An extension is used where it was built, imports, and its own condition holds here
(:data:`EXTENSIONS`), unless ``EVERYO_PURE_PYTHON`` is set (to anything but the empty string);
otherwise :func:`load` returns ``None`` and its user runs the Python twin. :func:`why` says,
for each extension not in use, the reason. Nothing is imported until it is asked for, so
``import everyo`` loads only the extensions the engine uses at import.

>>> from everyo import _compiled
>>> loops = _compiled.load("everyo.profiler.storage._cbatch")  # the module, or None
>>> loops is None or _compiled.why("everyo.profiler.storage._cbatch") is None
True
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

PURE_PYTHON = "EVERYO_PURE_PYTHON"


def _cfloat_condition(module: ModuleType) -> str | None:
    if module.supported():
        return None
    return "this CPU's flush-to-zero mode cannot be set here (x86 only)"


def _cmachine_condition(module: ModuleType) -> str | None:
    if sys.platform.startswith("linux"):
        return None
    return "its clock is time.monotonic's only on Linux"


EXTENSIONS = {
    "everyo.nn._cmodule": None,
    "everyo.profiler.recording._crecorder": None,
    "everyo.profiler.sampling._csampler": None,
    "everyo.profiler.storage._cbatch": None,
    "everyo.core._cfloat": _cfloat_condition,
    "everyo._cmachine": _cmachine_condition,
}
"""Each extension (setup.py builds them) and the condition it needs besides being built: a
function of the imported module returning why it cannot be used here, or ``None``."""

_imported: dict[str, tuple[ModuleType | None, str | None]] = {}


def load(name: str) -> ModuleType | None:
    """Extension ``name`` (a key of :data:`EXTENSIONS`), or ``None`` where it is not in use."""
    if os.environ.get(PURE_PYTHON):  # (read at each call: a test may set it)
        return None
    found = _imported.get(name)
    if found is None:
        found = _imported[name] = _import(name)
    return found[0]


def why(name: str) -> str | None:
    """Why extension ``name`` is not in use (``None`` where it is)."""
    if os.environ.get(PURE_PYTHON):
        return f"{PURE_PYTHON} is set"
    load(name)
    return _imported[name][1]


def unavailable() -> dict[str, str]:
    """Every extension not in use, with the reason (imports those not imported yet)."""
    reasons = {name: why(name) for name in EXTENSIONS}
    return {name: reason for name, reason in reasons.items() if reason is not None}


def _import(name: str) -> tuple[ModuleType | None, str | None]:
    condition = EXTENSIONS[name]  # (a KeyError: every extension is declared above)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return None, "not built (python setup.py build_ext --inplace, with a C compiler)"
        return None, f"cannot import: {exc}"
    except ImportError as exc:  # built for another Python, a missing symbol, ...
        return None, f"cannot import: {exc}"
    reason = condition(module) if condition is not None else None
    return (None, reason) if reason is not None else (module, None)
