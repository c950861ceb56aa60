"""The everyo profiler: module-level timing, an in-kernel run store, analysis and exports.

Five folders, one per job: ``recording/`` (what runs while profiling: the recorder, its C
primitives, regions, hooks), ``storage/`` (the columnar store, runs, event batches, loading),
``analysis/`` (summaries, aggregates, the summary's vocabulary), ``sampling/`` (stack samples
and hot lines) and ``export/`` (file formats); ``torch/`` is the PyTorch adapter.

>>> import everyo.profiler as ep
>>> with ep.profile(label="doctest") as p:
...     with ep.record_function("work"):
...         pass
>>> ep.runs["doctest"].status
'completed'
"""

import importlib

from everyo.profiler.recording import (
    forking,  # noqa: F401 - a fork waits for imports under way
    hooks,  # noqa: F401 - the engine's hook point, always loaded
)
from everyo.profiler.recording.schedule import Schedule, schedule

# The rest loads on first use (PEP 562), so that `import everyo` does not pay for the profiler
# until one is used: the engine itself only needs `hooks`.
_LAZY = {
    "EventBatch": "storage.batch",
    "ProfileEvent": "storage.batch",
    "hot_lines": "sampling.sampled_lines",
    "HotLines": "sampling.sampled_lines",
    "load": "storage.loading",
    "Profiler": "profiler",
    "profile": "profiler",
    "record_function": "profiler",
    "step": "profiler",
    "EveryOProfilerWarning": "storage.run",
    "Run": "storage.run",
    "RunRegistry": "storage.run",
    "runs": "storage.run",
    "EventStore": "storage.store",
}
# public submodules, by the names they have always had (torch imports torch)
_SUBMODULES = {
    "analysis": "analysis",
    "export": "export",
    "flops": "recording.flops",
    "memory": "recording.tensor_memory",
    "gpu": "recording.gpu",
    "torch": "torch",
}

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
        return importlib.import_module(f"everyo.profiler.{_SUBMODULES[name]}")
    raise AttributeError(f"module 'everyo.profiler' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
