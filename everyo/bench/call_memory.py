"""Peak host memory of one call (shared by sweeps and training throughput): the allocations
:mod:`tracemalloc` traces (Python's and NumPy's), or the process's resident-set growth, for
allocators tracemalloc does not see (torch's CPU allocator)."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

__all__ = ["traced_peak", "resident_peak", "trim_heap"]

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


_CLEAR_REFS = "/proc/self/clear_refs"
_STATUS = "/proc/self/status"
_POLL_S = 0.001


def resident_peak(call: Callable[[], Any]) -> int:
    """Bytes the process's resident set grew by at the peak of one ``call()``.

    On Linux the kernel's own high-water mark: ``VmHWM`` is reset to the current resident set
    (writing 5 to ``/proc/self/clear_refs``) and read after the call, so no peak is missed.
    Elsewhere (or where that file cannot be written) the resident set is polled every
    millisecond with psutil, which can miss a peak shorter than that. Process-wide: memory
    other threads take meanwhile counts too. Pages a page cache or allocator already holds
    are not growth; :func:`trim_heap` first makes the figure repeatable.
    """
    with _TRACE_LOCK:
        before = _status_kib("VmRSS")
        if before is not None and _reset_high_water_mark():
            result = call()
            peak = _status_kib("VmHWM")
            del result
            return max((peak - before) * 1024, 0)
        return _polled_peak(call)


def _reset_high_water_mark() -> bool:
    try:
        with open(_CLEAR_REFS, "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def _status_kib(field: str) -> int | None:
    try:
        with open(_STATUS) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _polled_peak(call: Callable[[], Any]) -> int:
    try:
        import psutil  # (optional: only where /proc cannot give the high-water mark)
    except ImportError:
        from everyo.errors import EveryOBenchmarkError

        raise EveryOBenchmarkError(
            f"measuring the resident-set growth of a call on {sys.platform} needs psutil: "
            "pip install psutil"
        ) from None
    process = psutil.Process()
    before = process.memory_info().rss
    peak = [before]
    done = threading.Event()

    def poll():
        while not done.is_set():
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(_POLL_S)

    poller = threading.Thread(target=poll, name="everyo-rss-poll", daemon=True)
    poller.start()
    try:
        result = call()
        peak[0] = max(peak[0], process.memory_info().rss)
        del result
    finally:
        done.set()
        poller.join()
    return max(peak[0] - before, 0)


def trim_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing on
    other C libraries), so the next measured call's memory shows as resident-set growth."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # musl has no malloc_trim
        return None
