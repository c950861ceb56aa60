"""Cost of the live dashboard refresher to the profiled code.

A training-loop-like workload (MLP forward, backward, SGD step) runs under the profiler, once
with the live refresher redrawing a dashboard at 4 Hz and once without, interleaved, several
times. The figures are the ratio of wall times (median and best of the repeats; target: at
most 1.02) and the share of wall time the refresher spent computing (its thread CPU time,
which does not depend on the load of other processes on the machine).

    python benchmarks/live_refresher.py [--repeats 7] [--steps 400] [--hz 4]

Run outside a notebook the widgets have no front end, so message encoding and sending are not
counted; everything the kernel does to build and apply the figures is.
"""

from __future__ import annotations

import argparse
import statistics
import time

import everyo as eo
from everyo.profiler import Profiler
from everyo_lab.live import LiveRefresher
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--hz", type=float, default=4.0)
    parser.add_argument("--verbose", action="store_true", help="print every repeat")
    args = parser.parse_args(argv)
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
    print(f"\nratio on/off: median {live / base:.3f}, min {min(on) / min(off):.3f}")


if __name__ == "__main__":
    main()
