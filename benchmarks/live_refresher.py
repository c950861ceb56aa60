"""Cost of the live dashboard refresher to the profiled code.

A training-loop-like workload (MLP forward, backward, SGD step) runs under the profiler, once
with the live refresher redrawing a dashboard at 4 Hz and once without, interleaved, several
times. The figures are the ratio of wall times (median and best of the repeats; target: at
most 1.02) and the share of wall time the refresher spent computing (its thread CPU time,
which does not depend on the load of other processes on the machine).

    python benchmarks/live_refresher.py [--repeats 7] [--steps 400] [--hz 4] [--only-cost]

A second table gives the cost of one live refresh of a dashboard whose run already holds 10k,
100k and 1M events, with 1,000 new events since the last refresh: the incremental live refresh
(new rows into the running aggregates, a live report, the new events encoded as binary
columns, or level-of-detail bars once the run is past RAW_LIMIT) against an exact report of the
whole snapshot, and the refresh rate each allows within the 2 % budget.

A third table gives the CPU time of one refresh that catches up on 100,000 new events (a
first live refresh of a fast loop), with the compiled loops (``everyo.profiler.storage._cbatch``)
and with their NumPy specification, taking turns.

Run outside a notebook the widget has no front end: messages are encoded but not sent.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import statistics
import time

import numpy as np

import everyo as eo
from everyo.profiler import Profiler
from everyo.profiler.storage.run import Run
from everyo.profiler.storage.store import EventStore
from everyo_lab.live import DEFAULT_BUDGET, LiveRefresher
from everyo_lab.widgets.dashboard import Dashboard


def make_step(width: int = 128, batch: int = 64):
    model = eo.Sequential(
        eo.Linear(64, width, seed=0),
        eo.ReLU(),
        eo.Linear(width, width, seed=1),
        eo.ReLU(),
        eo.Linear(width, 10, seed=2),
    )
    optimizer = eo.optim.SGD(model.parameters(), lr=1e-3)
    x = eo.ones(batch, 64)

    def step():
        optimizer.zero_grad()
        out = model(x)
        loss = eo.sum(out * out)
        loss.backward()
        optimizer.step()

    return step


def timed_run(step, steps: int, live: bool, hz: float) -> tuple[float, int, float]:
    """Wall seconds of ``steps`` profiled steps, the live refreshes, and their CPU seconds."""
    profiler = Profiler(label="bench-live" if live else "bench-off").start()
    refresher = None
    if live:
        board = Dashboard(profiler.run)
        refresher = LiveRefresher(board, profiler.run, hz=hz).start()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    elapsed = time.perf_counter() - t0
    if refresher is not None:
        refresher.stop()
    profiler.stop()
    if refresher is None:
        return elapsed, 0, 0.0
    return elapsed, refresher.refreshes, refresher.busy_s


class _Recording:
    """A running run whose store grows by synthetic MLP iterations (Sequential > Linear, ReLU,
    Linear, then an SGD step region; post-order, 5 events per iteration)."""

    STEP_NS = 20_000

    def __init__(self):
        self.store = EventStore()
        self.store.add_thread(1, "MainThread")
        for kind, name, path in (
            ("module", "Linear", "0"),
            ("module", "ReLU", "1"),
            ("module", "Linear", "2"),
            ("module", "Sequential", ""),
            ("optimizer", "SGD.step", ""),
        ):
            self.store.intern_key(kind, name, path)
        self.now = 0
        self.run = Run(self.store, label="bench-cost", clock=lambda: self.now, environment={})
        self.iterations = 0

    def record(self, events: int) -> None:
        n = events // 5
        base = (self.iterations + np.arange(n, dtype=np.int64)) * self.STEP_NS
        offs = np.array([10, 7_010, 8_010, 0, 15_000], np.int64)
        durs = np.array([7_000, 1_000, 6_000, 14_500, 4_000], np.int64)
        self.store.append(
            {
                "start_ns": (base[:, None] + offs).ravel(),
                "dur_ns": np.tile(durs, n),
                "key": np.tile(np.arange(5, dtype=np.int32), n),
                "thread": np.zeros(5 * n, np.int16),
                "depth": np.tile(np.array([1, 1, 1, 0, 0], np.int16), n),
            }
        )
        self.iterations += n
        self.now = self.iterations * self.STEP_NS


def exact_live_refresh(board: Dashboard, run) -> None:
    """A refresh computed exactly instead: the report of every event so far."""
    board._build_report(run)


def refresh_cost(events: int, new: int = 1000, repeats: int = 9) -> tuple[float, float, dict]:
    """Median seconds of one incremental and one exact live refresh at ``events`` events."""
    rec = _Recording()
    rec.record(events - new * repeats)
    board = Dashboard(rec.run)
    board.refresh(live=True)  # catch up once, as the first live refresh of a cell does
    incremental, exact = [], []
    for _ in range(repeats):
        rec.record(new)
        t0 = time.thread_time()
        board.refresh(live=True)
        incremental.append(time.thread_time() - t0)
    for _ in range(3):
        t0 = time.thread_time()
        exact_live_refresh(board, rec.run)
        exact.append(time.thread_time() - t0)
    sent = {"raw": board._stream.raw, "bytes": board._stream.bytes_sent}
    board.close()
    return statistics.median(incremental), statistics.median(exact), sent


def cost_table(sizes=(10_000, 100_000, 1_000_000)) -> None:
    print(
        "| events in run | live refresh ms | exact report ms | speed-up | browser holds | "
        "refreshes/s within 2 % (live) | within 2 % (exact) |"
    )
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        live, exact, meta = refresh_cost(n)
        print(
            f"| {n:,} | {1e3 * live:.2f} | {1e3 * exact:.1f} | {exact / live:.0f}x | "
            f"{'events' if meta['raw'] else 'bars'} | {DEFAULT_BUDGET / live:.1f} | "
            f"{DEFAULT_BUDGET / exact:.2f} |"
        )


LOOP_USERS = (
    "everyo.profiler.storage.run",
    "everyo_lab.views.flame.live_flame",
    "everyo.profiler.analysis.aggregates",
)


@contextlib.contextmanager
def numpy_loops():
    """Every caller of the compiled loops runs its NumPy path instead, for the duration."""
    users = [importlib.import_module(name) for name in LOOP_USERS]
    saved = [m.LOOPS for m in users]
    for m in users:
        m.LOOPS = None
    try:
        yield
    finally:
        for m, loops in zip(users, saved):
            m.LOOPS = loops


def catch_up_cost(new: int = 100_000) -> float:
    """CPU seconds of one live refresh that folds in ``new`` events at once."""
    rec = _Recording()
    rec.record(1000)
    board = Dashboard(rec.run)
    board.refresh(live=True)
    rec.record(new)
    t0 = time.thread_time()
    board.refresh(live=True)
    cost = time.thread_time() - t0
    board.close()
    return cost


def catch_up_table(new: int = 100_000, rounds: int = 7) -> None:
    """The catch-up refresh with each path, the paths taking turns (drift hits both alike)."""
    from everyo import _compiled

    LOOPS = _compiled.load("everyo.profiler.storage._cbatch")
    paths = {"NumPy": numpy_loops}
    if LOOPS is not None:
        paths = {"compiled loops": contextlib.nullcontext, **paths}
    costs: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(rounds):
        for name, path in paths.items():
            with path():
                costs[name].append(catch_up_cost(new))
    print(f"\n| one live refresh of {new:,} new events | CPU ms (median) | min |")
    print("|---|---|---|")
    for name, c in costs.items():
        print(f"| {name} | {1e3 * statistics.median(c):.1f} | {1e3 * min(c):.1f} |")
    if LOOPS is None:
        print("| compiled loops | not built | - |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--hz", type=float, default=4.0)
    parser.add_argument("--verbose", action="store_true", help="print every repeat")
    parser.add_argument("--only-cost", action="store_true", help="only the per-refresh table")
    args = parser.parse_args(argv)
    if args.only_cost:
        cost_table()
        catch_up_table()
        return
    from everyo.profiler import runs

    step = make_step()
    timed_run(step, args.steps // 4, False, args.hz)  # warm caches and allocators
    off, on, refreshes, shares = [], [], [], []
    for _ in range(args.repeats):  # interleaved: drift affects both sides alike
        off.append(timed_run(step, args.steps, False, args.hz)[0])
        seconds, count, busy = timed_run(step, args.steps, True, args.hz)
        on.append(seconds)
        refreshes.append(count / seconds)
        shares.append(busy / seconds)
        runs.clear()
    base, live = statistics.median(off), statistics.median(on)
    if args.verbose:
        print("off:", " ".join(f"{t:.3f}" for t in off))
        print("on: ", " ".join(f"{t:.3f}" for t in on))
    print("| workload | refresher | median s | min s | refreshes/s | refresher CPU share |")
    print("|---|---|---|---|---|---|")
    print(f"| MLP step x{args.steps} | off | {base:.3f} | {min(off):.3f} | - | - |")
    print(
        f"| MLP step x{args.steps} | on ({args.hz:g} Hz) | {live:.3f} | {min(on):.3f} | "
        f"{statistics.median(refreshes):.1f} | {100 * statistics.median(shares):.1f} % |"
    )
    print(f"\nratio on/off: median {live / base:.3f}, min {min(on) / min(off):.3f}\n")
    cost_table()
    catch_up_table()


if __name__ == "__main__":
    main()
