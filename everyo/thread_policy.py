"""The ``threads=`` policy of measurements: how many BLAS/OpenMP threads a measurement uses.

Several BLAS threads speed a large matmul up on an idle machine, and collapse when another
process keeps the cores busy: OpenBLAS's workers spin waiting for each other while the scheduler
runs the other process, and single calls become 10-300x slower. So measurements default to
``threads="auto"``:

- ``"auto"``: when other processes are using the cores, limit BLAS/OpenMP threads to the cores
  they leave free (at least 1); on a quiet machine leave them as they are;
- an integer ``n >= 1``: exactly ``n`` threads;
- ``None`` or ``"keep"``: leave them alone.

The limit is set with threadpoolctl for the measurement only, from whichever thread measures
(held in :mod:`everyo.thread_limits`: OpenBLAS has one limit per process), and what was applied
is recorded with the result (:class:`~everyo.machine_state.MachineState`'s ``threads_applied``).

>>> with ThreadPolicy(1) as policy:
...     policy.applied
1
"""

from __future__ import annotations

import math
import numbers
import weakref
from typing import Any

from everyo import thread_limits
from everyo.errors import EveryOConfigError
from everyo.machine_state import MachineState, current_load, thread_controller, threads_in_use

__all__ = ["AUTO", "ThreadPolicy", "check_threads", "choose_threads", "parse_threads"]

AUTO = "auto"


def check_threads(threads: Any) -> str | int | None:
    """``threads`` checked and normalised: ``"auto"``, an int >= 1, or ``None`` (keep)."""
    if threads is None or threads == "keep":
        return None
    if threads == AUTO:
        return AUTO
    if isinstance(threads, numbers.Integral) and not isinstance(threads, bool) and threads >= 1:
        return int(threads)  # (a NumPy integer too: os.cpu_count() // 2 computed with NumPy)
    raise EveryOConfigError(
        f"threads must be 'auto' (limit BLAS threads to the cores other processes leave free), "
        f"a whole number of threads >= 1, or None / 'keep' (leave them as they are); got "
        f"{threads!r}"
    )


def parse_threads(text: str) -> str | int | None:
    """A ``--threads`` value from a command line: ``auto``, ``keep`` or a number."""
    word = str(text).strip().lower()
    if word.isdigit():
        return check_threads(int(word))
    return check_threads(word if word in (AUTO, "keep") else text)


def choose_threads(threads: Any, state: MachineState | None = None) -> int | None:
    """The thread limit ``threads`` asks for now (``None``: leave the threads alone).

    ``"auto"`` reads the machine's load (``state``, or :func:`~everyo.machine_state.current_load`)
    and limits the threads to the usable cores that other processes leave free, when they are
    busy and the threads in use exceed that.
    """
    threads = check_threads(threads)
    if threads != AUTO:
        return threads
    state = state or current_load()
    if state.verdict in ("quiet", "unknown") or state.others_cores is None:
        return None
    free = max(1, math.floor(state.usable_cores - state.others_cores))
    inuse = threads_in_use()
    current = max(inuse["blas"] or 1, inuse["openmp"] or 1)
    return free if free < current else None


class ThreadPolicy:
    """Apply a ``threads=`` policy for the duration of a ``with`` block (or until
    :meth:`restore`); ``applied`` is the limit set, ``None`` when the threads were left alone."""

    def __init__(self, threads: Any = AUTO, *, state: MachineState | None = None):
        self.policy = check_threads(threads)
        self._state = state
        self.applied: int | None = None
        self._token: object | None = None
        self._net = None

    def apply(self, *, _net: bool = False) -> ThreadPolicy:
        if self.policy == AUTO and self._state is None:
            self._state = current_load()  # (kept: describe() says what "auto" saw)
        limit = choose_threads(self.policy, self._state)
        if limit is None:
            kept = self._threads_to_keep()
            if kept is not None:  # held, so that no other policy's restore raises them
                self._hold(kept, _net)
            return self
        if thread_controller() is None:
            if self.policy == AUTO:
                return self  # nothing to limit with; the state's reason says so
            raise EveryOConfigError(
                f"threads={self.policy} needs threadpoolctl to set BLAS threads: "
                "pip install threadpoolctl"
            )
        blas = self._hold(limit, _net)
        # recorded only when it took: a limit claimed but not in force mislabels every point
        self.applied = limit if blas in (None, limit) else None
        return self

    def _hold(self, limit: int, net: bool) -> int | None:
        """Hold ``limit`` (the BLAS threads in force after it); with ``net``, for a `with`
        block, also release the hold when the policy dies with its exit never run: a Ctrl-C can
        land where no code of ours catches it, at the very start of ``__exit__`` or of
        ``restore``, and the policy then dies with the exception (issue 44: BLAS stayed at 1
        thread for the rest of the session). The token is ours before the hold is taken, so an
        interrupt anywhere in between leaves it to release."""
        self._token = token = object()
        try:
            blas = thread_limits.hold(token, limit)
            if net:
                self._net = weakref.finalize(self, thread_limits.release, token)
        except BaseException:
            self._token = None
            thread_limits.release(token)
            raise
        return blas

    def _threads_to_keep(self) -> int | None:
        """The threads ``"auto"`` leaves as they are on a busy machine (few enough already),
        or ``None`` when it keeps nothing (a quiet machine, another policy)."""
        state = self._state
        if self.policy != AUTO or state is None or state.verdict in ("quiet", "unknown"):
            return None
        if thread_controller() is None:
            return None
        inuse = threads_in_use()
        return max(inuse["blas"] or 1, inuse["openmp"] or 1)

    def restore(self) -> None:
        token = self._token
        if token is None:
            return
        try:
            thread_limits.release(token)
        except BaseException:  # a Ctrl-C inside: finish putting the threads back, then it
            thread_limits.release(token)  # (release forgets a hold only once it is undone)
            raise
        finally:
            self._token, net, self._net = None, self._net, None
            if net is not None:
                net.detach()

    def __enter__(self) -> ThreadPolicy:
        return self.apply(_net=True)

    def __exit__(self, *exc) -> None:
        self.restore()

    def describe(self) -> str:
        """``"threads='auto': BLAS limited to 1 thread (other processes busy)"``."""
        if self.policy is None:
            blas = threads_in_use()["blas"]
            return "threads left as configured" + (
                "" if blas is None else f" ({blas} BLAS thread{'s' if blas != 1 else ''})"
            )
        if self.applied is None:
            return f"threads={self.policy!r}: left as configured ({self._why_left()})"
        return f"threads={self.policy!r}: BLAS/OpenMP limited to {self.applied}"

    def _why_left(self) -> str:
        """Why ``"auto"`` left the threads alone: a quiet machine, or few enough threads."""
        state = self._state
        if state is None or state.verdict == "quiet":
            return "the machine is quiet"
        if state.verdict == "unknown" or state.others_cores is None:
            return "other processes' load is unknown here"
        inuse = threads_in_use()
        threads = max(inuse["blas"] or 1, inuse["openmp"] or 1)
        return (
            f"{threads} thread{'s' if threads != 1 else ''}, no more than the cores other "
            "processes leave free"
        )
