"""Whose exception is it? The profiler clears the errors of its own reads (a user's ``.shape``
property that raises counts as no shape; a sample it could not take counts as lost), but an
exception the program's signal handler raised while such a read ran Python code is the
program's, and goes on (issue 44): the program sees it where it would without the profiler.

A Python signal handler runs on the main thread between two bytecodes of whatever Python code
runs there, the profiler's reads included; the exception it raises carries the handler's frame
in its traceback. That frame is how it is told apart.
"""

from __future__ import annotations

import signal

OWN_HANDLERS: set = set()  # the code of the profiler's own handlers (the sampler's timer signal)


def _handler_codes() -> set:
    codes = set()
    for signum in signal.valid_signals():
        try:
            handler = signal.getsignal(signum)
        except (ValueError, OSError):
            continue
        handler = getattr(handler, "__func__", handler)  # (a bound method)
        code = getattr(handler, "__code__", None)
        if code is not None and code not in OWN_HANDLERS:
            codes.add(code)
    return codes


def raised_by_signal_handler(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by (or under) a Python signal handler of the program: then it
    is the program's, never one of the profiler's own errors to clear."""
    if not isinstance(exc, Exception):
        return True  # (a KeyboardInterrupt, a SystemExit: never the profiler's)
    tb = exc.__traceback__
    if tb is None:
        return False
    codes = _handler_codes()
    if not codes:
        return False
    while tb is not None:
        if tb.tb_frame.f_code in codes:
            return True
        tb = tb.tb_next
    return False
