"""Peak host memory of one call, measured with :mod:`tracemalloc` (shared by sweeps and
training throughput)."""

from __future__ import annotations

import threading
import tracemalloc
from collections.abc import Callable
from typing import Any

__all__ = ["traced_peak"]

# tracemalloc is process-wide: measure one call at a time even if calls run in threads
_TRACE_LOCK = threading.Lock()


def traced_peak(call: Callable[[], Any]) -> int:
    """Bytes allocated at the peak of one untimed ``call()`` (tracing slows Python).

    Deterministic for NumPy workloads. The call's result is dropped before returning; tracing
    already on (a user's own ``tracemalloc.start()``) is left on.
    """
    with _TRACE_LOCK:
        was_tracing = tracemalloc.is_tracing()
        if not was_tracing:
            tracemalloc.start()
        try:
            before, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            result = call()
            _, peak = tracemalloc.get_traced_memory()
            del result
        finally:
            if not was_tracing:
                tracemalloc.stop()
    return max(peak - before, 0)
