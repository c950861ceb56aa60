"""What a fork must wait for, so that the child can go on (issue 44).

A module is imported under a lock of its own. A process forked while another thread imports a
module inherits that lock held by a thread it does not have, and the child's own import of the
module (a run's first export imports the exporters, the environment record, threadpoolctl...)
waits for it for ever. So before a fork the forking thread waits (up to ``WAIT_S``) for the
imports other threads have under way to finish, as CPython itself takes its global import lock
around a fork. (The exporters' own hook, ``everyo.profiler.export``, imports them all first.)

The module locks are CPython's internals (``importlib._bootstrap._module_locks``); where they
are not what this expects, a fork goes on without waiting.
"""

from __future__ import annotations

import os
import threading
import time

WAIT_S = 10.0  # the longest a fork waits for other threads' imports


def busy_imports() -> list[str]:
    """The modules whose import another thread has under way."""
    try:
        from importlib import _bootstrap

        locks = dict(_bootstrap._module_locks)
    except (ImportError, AttributeError):
        return []
    me, busy = threading.get_ident(), []
    for name, ref in locks.items():
        lock = ref() if callable(ref) else None
        if lock is not None and getattr(lock, "count", 0) and getattr(lock, "owner", me) != me:
            busy.append(name)
    return busy


def finish_imports() -> None:
    """Wait until no other thread is importing a module (the hook run before each fork), for
    at most ``WAIT_S``: an import that never ends (a module waiting on the network, or on a
    lock this thread holds) must not keep the fork from happening."""
    deadline = time.monotonic() + WAIT_S
    while busy_imports() and time.monotonic() < deadline:
        time.sleep(0.001)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=finish_imports)
