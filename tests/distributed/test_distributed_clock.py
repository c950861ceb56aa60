"""Clock offsets: the NTP estimate and its error bound, with fake clocks (no cluster)."""

from __future__ import annotations

import pytest

from everyo.distributed.clock import ClockOffset, combine_offsets, estimate_offsets


class FakeNetwork:
    """A client clock and workers whose clocks run ``offsets`` ahead; each round trip takes
    the next of ``trips`` ns, the worker answering ``at`` of the way through it."""

    def __init__(self, offsets, trips, at=0.5):
        self.now = 1_000_000_000
        self.offsets, self.trips, self.at = offsets, list(trips), at

    def clock(self):
        return self.now

    def ask(self):
        trip = self.trips.pop(0)
        answer_at = self.now + int(trip * self.at)
        self.now += trip
        return {w: answer_at + off for w, off in self.offsets.items()}


def test_estimate_keeps_the_shortest_round_trip_and_bounds_the_error():
    net = FakeNetwork({"a": 5_000_000, "b": -2_000_000}, trips=[900_000, 100_000, 400_000])
    est = estimate_offsets(net.ask, rounds=3, clock=net.clock)
    assert est["a"] == ClockOffset(5_000_000, 50_000, 3)
    assert est["b"].offset_ns == -2_000_000 and est["b"].uncertainty_ns == 50_000


@pytest.mark.parametrize("at", [0.0, 0.2, 0.9, 1.0])
def test_true_offset_is_always_within_the_bound(at):
    # however asymmetric the trip (the worker answers anywhere in it), the bound holds
    net = FakeNetwork({"w": 7_777_777}, trips=[3_000_000, 2_000_000], at=at)
    est = estimate_offsets(net.ask, rounds=2, clock=net.clock)["w"]
    assert abs(est.offset_ns - 7_777_777) <= est.uncertainty_ns
    assert est.uncertainty_ns == 1_000_000
    assert est.to_client(est.offset_ns + 123) == 123  # worker time -> client time


def test_combine_averages_and_widens_by_the_drift():
    before = {"a": ClockOffset(1000, 10, 5), "gone": ClockOffset(7, 3, 5)}
    after = {"a": ClockOffset(1400, 20, 5), "new": ClockOffset(-5, 4, 5)}
    both = combine_offsets(before, after)
    assert both["a"] == ClockOffset(1200, 20 + 200, 10, 400)
    assert both["gone"] == ClockOffset(7, 3, 5, None)
    assert both["new"].drift_ns is None
