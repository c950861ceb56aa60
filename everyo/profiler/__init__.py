"""The everyo profiler: module-level timing, an in-kernel run store, analysis and exports.

>>> import everyo.profiler as ep
>>> with ep.profile(label="doctest") as p:
...     with ep.record_function("work"):
...         pass
>>> ep.runs["doctest"].status
'completed'
"""

import importlib

from everyo.profiler import (
    forking,  # noqa: F401 - a fork waits for imports under way
    hooks,  # noqa: F401 - the engine's hook point, always loaded
)
from everyo.profiler.schedule import Schedule, schedule  # eager: the name is also a submodule's

# The rest loads on first use (PEP 562), so that `import everyo` does not pay for the profiler
# until one is used: the engine itself only needs `hooks`.
_LAZY = {
    "EventBatch": "batch",
    "ProfileEvent": "batch",
    "hot_lines": "sampled_lines",
    "HotLines": "sampled_lines",
    "load": "loading",
    "Profiler": "profiler",
    "profile": "profiler",
    "record_function": "profiler",
    "step": "profiler",
    "EveryOProfilerWarning": "run",
    "Run": "run",
    "RunRegistry": "run",
    "runs": "run",
    "EventStore": "store",
}
_SUBMODULES = {"analysis", "export", "flops", "memory", "gpu", "torch"}  # torch: imports torch

__all__ = [
    "ProfileEvent",
    "Profiler",
    "profile",
    "record_function",
    "step",
    "schedule",
    "Schedule",
    "runs",
    "Run",
    "RunRegistry",
    "EventBatch",
    "EventStore",
    "EveryOProfilerWarning",
    "load",
    "hot_lines",
    "HotLines",
    "analysis",
]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"everyo.profiler.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"everyo.profiler.{name}")
    raise AttributeError(f"module 'everyo.profiler' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
