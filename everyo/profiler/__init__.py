"""The everyo profiler: module-level timing, an in-kernel run store, analysis and exports.

>>> import everyo.profiler as ep
>>> with ep.profile(label="doctest") as p:
...     with ep.record_function("work"):
...         pass
>>> ep.runs["doctest"].status
'completed'
"""

from everyo.profiler import analysis, hooks  # noqa: F401
from everyo.profiler.batch import EventBatch, ProfileEvent
from everyo.profiler.loading import load
from everyo.profiler.profiler import Profiler, profile, record_function
from everyo.profiler.run import EveryOProfilerWarning, Run, RunRegistry, runs
from everyo.profiler.schedule import Schedule, schedule
from everyo.profiler.store import EventStore

__all__ = [
    "ProfileEvent",
    "Profiler",
    "profile",
    "record_function",
    "schedule",
    "Schedule",
    "runs",
    "Run",
    "RunRegistry",
    "EventBatch",
    "EventStore",
    "EveryOProfilerWarning",
    "load",
    "analysis",
]
