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

import threading

__all__ = ["hold", "release", "held"]

_lock = threading.Lock()
_holds: dict[object, int] = {}  # the holder's token -> the limit it holds
_originals: list | None = None  # (library controller, its threads) from before the first hold


def hold(token: object, limit: int) -> int | None:
    """Hold BLAS/OpenMP threads at ``limit`` or fewer until ``release(token)``; returns the BLAS
    threads in force afterwards (``None`` when no BLAS library is known).

    The holder makes the token (any new object) and keeps it before calling, so that an
    interrupt anywhere (a Ctrl-C, even as this returns) leaves it something to release; one
    inside leaves the threads as they were before the call."""
    global _originals
    limit = int(limit)
    with _lock:
        if not _holds and _originals is None:
            _originals = _current()
        _holds[token] = limit
        try:
            _set(min(_holds.values()))
            return _blas_threads()
        except BaseException:
            del _holds[token]
            _settle()
            raise


def release(token: object) -> None:
    """End a hold: the smallest limit still held is set, or, when none is, the threads as they
    were before the first hold. Releasing twice, or ``None``, does nothing. The hold is
    forgotten only once the threads are set, so a release that an interrupt cut short can be
    called again to finish."""
    with _lock:
        if token is None or token not in _holds:
            return
        limit = _holds[token]  # (no call between here and the try: nothing to interrupt)
        del _holds[token]
        try:
            _settle()
        except BaseException:
            _holds[token] = limit
            raise


def held() -> int | None:
    """The limit in force (the smallest held), ``None`` when no policy holds one."""
    with _lock:
        return min(_holds.values()) if _holds else None


def _settle() -> None:
    """Set what the holds left ask for: the smallest limit, or the threads from before."""
    global _originals
    if _holds:
        _set(min(_holds.values()))
    elif _originals is not None:
        originals = _originals
        _in_control(lambda: [lib.set_num_threads(n) for lib, n in originals])
        _originals = None


def _current() -> list:
    from everyo.machine_state import thread_controller

    controller = thread_controller()
    if controller is None:
        return []
    return [(lib, lib.num_threads) for lib in controller.lib_controllers]


def _set(limit: int) -> None:
    from threadpoolctl import threadpool_limits

    _in_control(lambda: threadpool_limits(limits=limit))


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
