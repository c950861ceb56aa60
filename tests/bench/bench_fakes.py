"""Test doubles for timing: a fake clock and a fake GPU tensor that log what happens, in order."""

from __future__ import annotations

from types import SimpleNamespace

from fakes import FakeClock


class FakeCudaTensor:
    """Looks like an everyo tensor on ``cuda:0`` to the benchmark's device detection."""

    device = SimpleNamespace(type="cuda", index=0)
    shape = (4, 4)
    dtype = "float32"


def timed_work(clock: FakeClock, durations, log=None):
    """A workload that 'takes' the next duration on the fake clock, and logs its calls."""
    it = iter(durations)
    log = clock.log if log is None else log

    def work(*args, **kwargs):
        log.append("call")
        clock.advance(next(it))
        return args[0] if args else None

    return work
