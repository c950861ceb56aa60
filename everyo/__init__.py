"""everyo: a small NumPy/CuPy deep-learning engine with a profiler and a benchmarking toolkit.

>>> import everyo as eo
>>> eo.matmul(eo.ones(128, 256), eo.ones(256, 64)).shape
(128, 64)

The public API is re-exported here from the subpackages, each of which owns its ``__all__``.
``everyo`` never imports Jupyter, plotting packages, pandas or CuPy at import time.
"""

from __future__ import annotations

from everyo._version import __version__
from everyo.errors import *  # noqa: F403
from everyo.core import *  # noqa: F403
from everyo.nn import *  # noqa: F403
from everyo.data import *  # noqa: F403
from everyo.training import *  # noqa: F403
from everyo import cuda, nn, optim, profiler  # noqa: E402
from everyo.serialization import inspect_archive, load, save  # noqa: E402

# reference EveryO's top-level names (docs/everyo-compat.md)
from everyo.optim import SGD, Adam, Optimizer  # noqa: E402

_LAZY = {"bench", "datasets"}
# eo.Profiler, eo.profile, eo.record_function: the profiler loads its parts on first use
_PROFILER_NAMES = {"Profiler", "profile", "record_function"}


def __getattr__(name: str):
    # Heavier, rarely-needed parts load on first use so that `import everyo` stays fast.
    if name in _LAZY:
        import importlib

        return importlib.import_module(f"everyo.{name}")
    if name == "environment":
        from everyo.environment_record import environment

        return environment
    if name in _PROFILER_NAMES:
        return getattr(profiler, name)
    raise AttributeError(f"module 'everyo' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY | _PROFILER_NAMES | {"environment"})
