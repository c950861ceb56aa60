"""The everyo profiler (filled in by the profiler issue)."""

from everyo.profiler import hooks  # noqa: F401
