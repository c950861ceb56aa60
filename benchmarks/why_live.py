"""The live "why" panel's cost per refresh as a run grows (issue 34, item 3).

    python benchmarks/why_live.py [--quick]

A synthetic run like a loop sampled at 1 ms: per second of run, 250 ``work`` events (4 ms each)
with a child each, and 1,000 samples drawn from 48 distinct stacks. At several run lengths, one
refresh's worth of new data (0.25 s: 125 events, 250 samples) is appended, and the CPU time of
the live panel's work for it is measured: ``LiveWhy.feed()`` of what the dashboard's session
read (the new events and samples; the read itself, once per refresh for every panel, is the
session's) and ``hot_lines()`` (the answer from the running sums), against
``everyo.profiler.hot_lines(run, "work")`` over the whole run (what a panel rebuilt from
scratch would cost each refresh).
Medians of 5 refreshes (3 full recomputes), and the one-time first read of a row's
``LiveWhy`` (the whole run so far); thread CPU time, so other processes' load moves
the figures less than wall time would.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import everyo.profiler as ep
from everyo.profiler.sampling.samples import SampleStore
from everyo.profiler.storage.run import Run
from everyo.profiler.storage.store import EventStore

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from everyo_lab.views.live_session import LiveSession  # noqa: E402
from everyo_lab.views.why import why_panel as why  # noqa: E402
from everyo_lab.views.why.why_live import LiveWhy  # noqa: E402

EVENTS_PER_S, SAMPLES_PER_S, REFRESH_S = 250, 1000, 0.25
STACKS = 48


def _events(t0_ns: int, seconds: float) -> dict:
    n = int(EVENTS_PER_S * seconds)
    start = t0_ns + np.arange(n, dtype=np.int64) * 4_000_000
    # per work event: its child first (post-order: children end first), then itself
    cols = {
        "start_ns": np.stack([start + 500_000, start]).T.ravel(),
        "dur_ns": np.tile([2_000_000, 4_000_000], n).astype(np.int64),
        "key": np.tile([1, 0], n).astype(np.int32),
        "thread": np.zeros(2 * n, np.int16),
        "depth": np.tile([1, 0], n).astype(np.int16),
    }
    return cols


def _samples(t0_ns: int, seconds: float, stacks: list, rng) -> dict:
    n = int(SAMPLES_PER_S * seconds)
    t = t0_ns + np.arange(n, dtype=np.int64) * 1_000_000 + 500_000
    return {
        "t_ns": t,
        "tid": np.full(n, 7, np.int64),
        "stack": rng.choice(stacks, n),
        "wall_ns": np.full(n, 1_000_000, np.int64),
        "cpu_ns": np.full(n, 1_000_000, np.int64),
    }


def build(seconds: float, rng):
    store = EventStore.from_columns(
        _events(0, seconds), [("user", "work", ""), ("user", "inner", "")], threads=[(7, "main")]
    )
    run = Run(store, label="synthetic", options={"sample_mode": "wall", "sample_ms": 1.0})
    s = SampleStore()
    root = s.stack_id(-1, s.frame_id("r", "/x/app.py", 1, "loop"))
    stacks = []
    for i in range(STACKS):
        mid = s.stack_id(root, s.frame_id(("m", i % 6), "/x/app.py", 10 + i % 6, f"f{i % 6}"))
        stacks.append(s.stack_id(mid, s.frame_id(("l", i), "/x/lib.py", 100 + i, f"g{i}")))
    s.append(_samples(0, seconds, stacks, rng))
    run.samples = s
    return run, stacks


def measure(seconds: float, refreshes: int, rng) -> dict:
    run, stacks = build(seconds, rng)
    session = LiveSession(run)
    session.read()  # the dashboard's reads so far
    sel = why.select(run, {"type": "row", "kind": "user", "name": "work"})
    t0 = time.thread_time()
    live = LiveWhy.following(session, sel)  # catch up once (a row entering the first rows)
    catch_up = time.thread_time() - t0
    live_s, t = [], int(seconds * 1e9)
    for _ in range(refreshes):
        run.store.append(_events(t, REFRESH_S))
        run.samples.append(_samples(t, REFRESH_S, stacks, rng))
        t += int(REFRESH_S * 1e9)
        batch = session.read()
        t0 = time.thread_time()
        live.feed(batch, session.new_samples)
        live.hot_lines()
        live_s.append(time.thread_time() - t0)
    full_s = []
    for _ in range(3):
        t0 = time.thread_time()
        exact = ep.hot_lines(run, "work")
        full_s.append(time.thread_time() - t0)
    got = live.hot_lines()
    assert (got.samples, got.lines) == (exact.samples, exact.lines[: len(got.lines)])
    return {
        "seconds": seconds,
        "events": len(run.store),
        "samples": len(run.samples),
        "catch_up_ms": 1e3 * catch_up,
        "live_ms": 1e3 * float(np.median(live_s)),
        "full_ms": 1e3 * float(np.median(full_s)),
    }


def main() -> None:
    quick = "--quick" in sys.argv
    lengths = (10, 100) if quick else (10, 100, 1000)
    rng = np.random.default_rng(0)
    print(f"load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    print(
        f"{'run':>8} {'events':>9} {'samples':>9} {'live refresh':>13} {'hot_lines()':>12} "
        f"{'first read':>11}"
    )
    for seconds in lengths:
        r = measure(seconds, 5, rng)
        print(
            f"{r['seconds']:>7}s {r['events']:>9,} {r['samples']:>9,} "
            f"{r['live_ms']:>10.2f} ms {r['full_ms']:>9.1f} ms {r['catch_up_ms']:>8.1f} ms"
        )


if __name__ == "__main__":
    main()
