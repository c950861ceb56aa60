"""Client-aligned clocks: each worker's wall-clock offset from the client, with its error bound.

The estimate is the one NTP makes. The client reads its clock (``t0``), asks every worker for
its clock (``tw``) and reads its own again (``t1``). The worker read its clock somewhere between
``t0`` and ``t1``, so its offset lies in ``[tw - t1, tw - t0]``: the midpoint is the estimate
and half the round trip is a bound on its error, whatever the network does (provided neither
clock is stepped meanwhile). Of several rounds, the one with the shortest round trip is kept.
Estimating again after the tasks gives the drift over the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

__all__ = ["ClockOffset", "estimate_offsets", "combine_offsets", "worker_time_ns"]


@dataclass(frozen=True)
class ClockOffset:
    """One worker's clock relative to the client's.

    ``offset_ns`` is worker time minus client time, so an instant the worker read as ``t`` is
    ``t - offset_ns`` on the client's clock. The true offset lies within ``uncertainty_ns`` of
    it. ``drift_ns`` is how far the estimate moved between before and after the tasks
    (``None`` when the worker was not there both times).
    """

    offset_ns: int
    uncertainty_ns: int
    samples: int = 1
    drift_ns: int | None = None

    def to_client(self, worker_ns: int) -> int:
        """An instant read on the worker's clock, on the client's clock."""
        return worker_ns - self.offset_ns

    def to_dict(self) -> dict:
        return asdict(self)


def worker_time_ns() -> int:
    """The clock every worker is asked for (``time.time_ns``; module-level so it pickles)."""
    return time.time_ns()


def estimate_offsets(
    ask: Callable[[], Mapping[str, int]],
    *,
    rounds: int = 5,
    clock: Callable[[], int] = time.time_ns,
) -> dict[str, ClockOffset]:
    """Estimate each worker's offset from ``rounds`` round trips.

    Parameters
    ----------
    ask : callable
        Returns ``{worker: its clock in ns}`` for every worker, e.g.
        ``lambda: client.run(worker_time_ns)``.
    rounds : int
        Round trips; the shortest one gives each worker's estimate.
    clock : callable
        The client's clock (ns), ``time.time_ns`` by default; tests pass a fake one.
    """
    best: dict[str, tuple[int, int, int]] = {}  # worker -> (round trip, worker ns, midpoint)
    counts: dict[str, int] = {}
    for _ in range(rounds):
        t0 = clock()
        answers = ask()
        t1 = clock()
        trip = t1 - t0
        for worker, tw in answers.items():
            counts[worker] = counts.get(worker, 0) + 1
            if worker not in best or trip < best[worker][0]:
                best[worker] = (trip, int(tw), t0 + trip // 2)
    return {
        w: ClockOffset(tw - mid, (trip + 1) // 2, counts[w]) for w, (trip, tw, mid) in best.items()
    }


def combine_offsets(
    before: Mapping[str, ClockOffset], after: Mapping[str, ClockOffset]
) -> dict[str, ClockOffset]:
    """One offset per worker from the estimates before and after the tasks.

    A worker in both: the mean of the two, its bound widened by half the drift between them
    (the clocks may have drifted either way during the run). A worker in one only (it joined
    late, or died): that estimate, with ``drift_ns=None``.
    """
    out = {}
    for w in {**before, **after}:
        b, a = before.get(w), after.get(w)
        if b is None or a is None:
            one = b or a
            out[w] = ClockOffset(one.offset_ns, one.uncertainty_ns, one.samples)
            continue
        drift = a.offset_ns - b.offset_ns
        out[w] = ClockOffset(
            (a.offset_ns + b.offset_ns) // 2,
            max(a.uncertainty_ns, b.uncertainty_ns) + (abs(drift) + 1) // 2,
            a.samples + b.samples,
            drift,
        )
    return out
