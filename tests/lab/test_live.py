"""The live refresher, stepped by hand with a fake clock (no threads, no wall-clock asserts)."""

from __future__ import annotations

import pytest
from fakes import FakeClock

from everyo.profiler import Profiler, record_function
from everyo_lab.live import BUSY_HZ, DEFAULT_HZ, MIN_HZ, LiveRefresher


class CostlyTarget:
    """Counts refreshes; each one advances the fake clock by ``cost`` seconds, ``catch_up`` of
    them spent on the new events (what it returns, as a dashboard does; ``None``: not said)."""

    def __init__(self, clock, cost, catch_up=None):
        self.clock, self.cost, self.catch_up, self.calls = clock, cost, catch_up, 0

    def refresh(self, *, live=False):
        assert live
        self.calls += 1
        self.clock.now += self.cost
        return self.catch_up


@pytest.fixture
def running():
    p = Profiler(label="live-test", registry=None)
    p.start()
    yield p
    p.stop()


def record(n):
    for _ in range(n):
        with record_function("tick"):
            pass


def test_refreshes_when_new_events_and_skips_when_idle(running):
    clock = FakeClock()
    target = CostlyTarget(clock, cost=0.001)
    live = LiveRefresher(target, running.run, hz=4, clock=clock, wall=clock)
    assert live.poll() == pytest.approx(0.25 - 0.001)  # the first paints with nothing new
    assert target.calls == 1
    assert live.poll() == pytest.approx(0.25)
    assert (target.calls, live.skipped) == (1, 1)
    record(3000)  # more than a flush: the store sees them
    live.poll()
    assert target.calls == 2
    assert live.cursor == running.run.num_events > 0


def test_expensive_refreshes_are_paced_to_the_budget(running):
    clock = FakeClock()
    target = CostlyTarget(clock, cost=0.05)
    live = LiveRefresher(target, running.run, hz=4, budget=0.02, clock=clock, wall=clock)
    wait = live.poll()
    assert wait == pytest.approx(0.05 / 0.02 - 0.05)
    assert 0.05 / (0.05 + wait) == pytest.approx(0.02)


@pytest.mark.parametrize(
    ("catch_up", "wait"),
    [  # waits after a refresh that took 0.05 s: start-to-start intervals less the 0.05 s
        (0.05, 1 / MIN_HZ - 0.05),  # all of it per new event: a longer pause saves nothing
        (0.04, 0.01 / 0.02 - 0.05),  # the other 0.01 s alone needs 0.5 s: slower than MIN_HZ
        (0.02, 0.03 / 0.02 - 0.05),  # the other 0.03 s alone needs 1.5 s: paced as before
        (0.0, 0.05 / 0.02 - 0.05),
        (0.09, 1 / MIN_HZ - 0.05),  # more than the refresh took (another clock): all of it
        (-1.0, 0.05 / 0.02 - 0.05),  # nonsense counts as nothing
    ],
)
def test_rest_is_capped_where_the_cost_is_the_new_events(running, catch_up, wait):
    clock = FakeClock()
    target = CostlyTarget(clock, cost=0.05, catch_up=catch_up)
    live = LiveRefresher(target, running.run, hz=4, budget=0.02, clock=clock, wall=clock)
    assert live.poll() == pytest.approx(wait)


def test_cheap_catch_up_keeps_the_requested_rate(running):
    clock = FakeClock()
    target = CostlyTarget(clock, cost=0.002, catch_up=0.0015)
    live = LiveRefresher(target, running.run, hz=4, budget=0.02, clock=clock, wall=clock)
    assert live.poll() == pytest.approx(0.25 - 0.002)  # 4 starts a second


def test_a_refresh_slowed_by_the_gil_counts_its_duration(running):
    """A refresh of 10 ms CPU that lasted 0.2 s (it shares the GIL with the profiled code):
    the next starts 1 / MIN_HZ s after it started, not after it ended."""
    cpu, wall = FakeClock(), FakeClock()

    class Slow(CostlyTarget):
        delay = 0.2

        def refresh(self, *, live=False):
            wall.now += self.delay
            return super().refresh(live=live)

    target = Slow(cpu, cost=0.01, catch_up=0.01)
    live = LiveRefresher(target, running.run, clock=cpu, wall=wall)
    assert live.poll() == pytest.approx(1 / MIN_HZ - 0.2)
    record(3000)
    target.delay = 10.0  # longer than any interval: the next one comes soon, not at once
    assert live.poll() == pytest.approx(0.1 / DEFAULT_HZ)


def test_rejects_slow_rates():
    with pytest.raises(ValueError, match="at least 2"):
        LiveRefresher(object(), None, hz=1)


def test_thread_starts_and_stops(running):
    target = CostlyTarget(FakeClock(), cost=0.0)
    live = LiveRefresher(target, running.run, hz=50).start()
    live.stop(timeout=5)
    assert not live._thread.is_alive()


class ProcessClock:
    """The process's CPU seconds, advanced as if ``cores_busy`` cores ran whenever the fake wall
    clock moves."""

    def __init__(self, wall, cores_busy):
        self.wall, self.cores_busy, self.cpu, self.seen = wall, cores_busy, 0.0, wall()

    def __call__(self):
        now = self.wall()
        self.cpu += (now - self.seen) * self.cores_busy
        self.seen = now
        return self.cpu


@pytest.mark.parametrize(
    ("cores_busy", "period"),
    [
        (1.9, 1 / BUSY_HZ),  # both cores of two: the pace drops to the floor
        (1.3, 1 / BUSY_HZ),  # less than three quarters of a core free counts as every core
        (1.2, 1 / DEFAULT_HZ),
        (1.0, 1 / DEFAULT_HZ),  # a core to spare: the default pace
    ],
)
def test_default_pace_drops_while_the_code_keeps_every_core_busy(running, cores_busy, period):
    clock = FakeClock()
    target = CostlyTarget(clock, cost=0.001)
    cpu = ProcessClock(clock, cores_busy)
    live = LiveRefresher(target, running.run, clock=clock, wall=clock, process_clock=cpu, cores=2)
    clock.now += 0.8  # the first poll, FIRST_PAINT_S after the start
    assert live.poll() == pytest.approx(period - 0.001)
    assert live.busy is (period == 1 / BUSY_HZ)


def test_pace_follows_the_load_and_short_spans_keep_the_last_answer(running):
    clock = FakeClock()
    target = CostlyTarget(clock, cost=0.0)
    cpu = ProcessClock(clock, 2.0)
    live = LiveRefresher(target, running.run, clock=clock, wall=clock, process_clock=cpu, cores=2)
    clock.now += 0.8
    assert live.poll() == pytest.approx(1 / BUSY_HZ)
    cpu.cores_busy = 0.2  # the loop ends its heavy phase
    clock.now += 0.1  # too short a span to measure: still busy
    assert live.poll() == pytest.approx(1 / BUSY_HZ)
    clock.now += 0.5
    assert live.poll() == pytest.approx(1 / DEFAULT_HZ)
    assert not live.busy


def test_an_explicit_rate_is_kept_whatever_the_load(running):
    clock = FakeClock()
    target = CostlyTarget(clock, cost=0.0)
    cpu = ProcessClock(clock, 2.0)
    live = LiveRefresher(
        target, running.run, hz=4, clock=clock, wall=clock, process_clock=cpu, cores=2
    )
    clock.now += 0.8
    assert live.poll() == pytest.approx(0.25)
    assert not live.busy
