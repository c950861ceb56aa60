"""Test doubles shared by every test directory (``tests/`` is on ``sys.path`` through its
``conftest.py``, so ``from fakes import FakeClock`` works from any of them)."""

from __future__ import annotations


class FakeClock:
    """A clock that moves only when told: by ``tick`` on every read, or by ``advance(d)``.

    The unit is the caller's: integer nanoseconds for the profiler (``Profiler(clock=...)``),
    seconds for the benchmarks and the live refresher. With ``log``, every read appends
    ``"clock"`` to it, so a test can check the order of clock reads and work.

    >>> clock = FakeClock(tick=10, start=5)
    >>> clock(), clock()
    (15, 25)
    >>> clock.advance(100); clock()
    135
    """

    def __init__(self, tick=0, *, start=0, log: list | None = None):
        self.now = start
        self.tick = tick
        self.log = log

    def __call__(self):
        if self.log is not None:
            self.log.append("clock")
        self.now += self.tick
        return self.now

    def advance(self, amount) -> None:
        self.now += amount
