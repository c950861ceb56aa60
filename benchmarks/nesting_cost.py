"""What entering a region costs at depth: ``record_function`` blocks nested 10 to 10,000 deep
(recursion, one region per level), time per region with the profiler and without it, each
depth in the same process (issue 44: checking every open region against the whole stack made
N nested regions cost N³; 1,600 took 17.7 s).

    python benchmarks/nesting_cost.py [--depths 10 100 1000 10000] [--repeat 3]

Prints µs per region at each depth (best of ``--repeat``) and the ratio to the shallowest: flat
means O(1) per entry. CPU time (``time.process_time``): on a shared machine compare ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from everyo.profiler import Profiler, RunRegistry, record_function  # noqa: E402


def nest(n: int) -> None:
    if n:
        with record_function("level"):
            nest(n - 1)


def plain(n: int) -> None:
    if n:
        with _Nothing():
            plain(n - 1)


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def per_region(depth: int, repeat: int, profiled: bool) -> float:
    best = float("inf")
    for _ in range(repeat):
        if profiled:
            with Profiler(registry=RunRegistry()) as p:
                t = time.process_time()
                nest(depth)
                spent = time.process_time() - t
            assert p.run.num_events == depth
        else:
            t = time.process_time()
            plain(depth)
            spent = time.process_time() - t
        best = min(best, spent)
    return best / depth * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depths", type=int, nargs="+", default=[10, 100, 1000, 10_000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * max(args.depths) + 1000))
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'depth':>7} {'µs/region profiled':>19} {'µs/level plain':>15} {'vs shallowest':>14}")
    first = None
    for depth in args.depths:
        us = per_region(depth, args.repeat, True)
        base = per_region(depth, args.repeat, False)
        first = first or us
        print(f"{depth:>7} {us:>19.2f} {base:>15.2f} {us / first:>13.2f}x")


if __name__ == "__main__":
    main()
