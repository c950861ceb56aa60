"""The process's BLAS/OpenMP thread limit, held by every thread policy in force, from any thread.

OpenBLAS (its pthreads build, NumPy's) has one thread pool for the whole process, and
threadpoolctl (3.8 and later) lets only one Python thread set its size: the first one to set
it, until a ``with threadpool_limits(...)`` block of that thread ends. A limit set by any other
thread is silently ignored. A thread policy kept for the session (``start_lab``), or one set
without a ``with`` block, left the main thread in control for good, so a sweep in a background
thread (the sweep widget, a Dask worker thread) "limited" BLAS to 1 thread and measured with 2.
And a policy restored in one thread put back the threads that another thread's measurement
relied on.

So every policy holds its limit here: the process runs with the smallest limit held, whichever
thread set it, and with the threads as they were once the last hold is released.
"""

from __future__ import annotations

import itertools
import threading

__all__ = ["hold", "release", "held"]

_lock = threading.Lock()
_holds: dict[int, int] = {}  # token -> the limit it holds
_tokens = itertools.count(1)
_first = None  # the limiter set by the first hold: it knows the threads from before it


def hold(limit: int) -> tuple[int, int | None]:
    """Hold BLAS/OpenMP threads at ``limit`` or fewer until :func:`release`; returns a token
    and the BLAS threads in force afterwards (``None`` when no BLAS library is known)."""
    with _lock:
        token = next(_tokens)
        _holds[token] = int(limit)
        _set(min(_holds.values()))
        return token, _blas_threads()


def release(token: int | None) -> None:
    """End a hold: the smallest limit still held is set, or, when none is, the threads as they
    were before the first hold. Releasing twice, or ``None``, does nothing."""
    global _first
    with _lock:
        if token is None or _holds.pop(token, None) is None:
            return
        if _holds:
            _set(min(_holds.values()))
        elif _first is not None:
            first, _first = _first, None
            _in_control(first.restore_original_limits)


def held() -> int | None:
    """The limit in force (the smallest held), ``None`` when no policy holds one."""
    with _lock:
        return min(_holds.values()) if _holds else None


def _set(limit: int) -> None:
    global _first
    from threadpoolctl import threadpool_limits

    limiter = _in_control(lambda: threadpool_limits(limits=limit))
    if _first is None:
        _first = limiter


def _in_control(action):
    """Run ``action`` with this thread in control of OpenBLAS's limit, and leave no thread in
    control afterwards (so that the next hold, from whatever thread, is obeyed too)."""
    _let_go()
    try:
        return action()
    finally:
        _let_go()


def _let_go() -> None:
    import threadpoolctl

    openblas = getattr(threadpoolctl, "OpenBLASController", None)
    clear = getattr(openblas, "clear_controlling_thread", None)
    if clear is not None:  # (threadpoolctl >= 3.8; before it, any thread could set the limit)
        clear(force=True)


def _blas_threads() -> int | None:
    from everyo.machine_state import threads_in_use

    return threads_in_use()["blas"]
