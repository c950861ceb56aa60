"""Batch-size sweep of the guide's MLP, and the cost of benchmark() against a hand-written loop.

Run: ``python benchmarks/batch_sweep.py [--quick]``. Prints markdown tables; every figure is a
ratio against a baseline measured in the same run (batch size 1; the guide's hand-written
``perf_counter`` loop), so results compare across machines.
"""

from __future__ import annotations

import argparse
import statistics
import time

import everyo as eo
from everyo.bench import benchmark, sweep_batch_sizes


def guide_model(width: int) -> eo.Module:
    return eo.Sequential(eo.Linear(32, width, seed=0), eo.ReLU(), eo.Linear(width, 16, seed=1))


def hand_loop(model, x, warmup: int, repeat: int) -> float:
    """The guide's "Complete Benchmark Example" timing loop; returns the median in seconds."""
    for _ in range(warmup):
        model(x)
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        model(x)
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def overhead_table(rounds: int, repeat: int) -> str:
    model = guide_model(64)
    model.eval()
    x = eo.zeros(128, 32)
    ratios = []
    with eo.no_grad():
        for _ in range(rounds):  # interleave the two so machine drift hits both alike
            manual = hand_loop(model, x, 10, repeat)
            tool = benchmark(model, x, warmup=10, repeat=repeat, record_environment=False)
            ratios.append(tool.median / manual)
    return "\n".join(
        [
            "| measurement | median ratio benchmark() / hand loop | min | max |",
            "|---|---|---|---|",
            f"| guide MLP, batch 128, {repeat} calls x {rounds} rounds | "
            f"{statistics.median(ratios):.3f} | {min(ratios):.3f} | {max(ratios):.3f} |",
        ]
    )


def sweep_table(width: int, max_batch: int, repeat: int) -> str:
    model = guide_model(width)
    sweep = sweep_batch_sizes(
        model, lambda b: eo.randn(b, 32), max_batch=max_batch, repeat=repeat, progress=False
    )
    base = sweep.rows[0].throughput
    best, rec, big = sweep.best, sweep.recommended, sweep.largest_fit
    lines = [
        f"| batch (MLP 32-{width}-16) | throughput vs batch 1 | median ms | peak MiB | note |",
        "|---|---|---|---|---|",
    ]
    for r in sweep.rows:
        note = ", ".join(
            n for n, p in (("best", best), ("recommended", rec), ("largest", big)) if p is r
        )
        lines.append(
            f"| {r.batch_size} | {r.throughput / base:.1f}x | {r.median_ms:.4f} | "
            f"{r.peak_memory / 2**20:.2f} | {note} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and sizes")
    args = parser.parse_args()
    repeat = 20 if args.quick else 100
    print(overhead_table(rounds=3 if args.quick else 7, repeat=repeat))
    print()
    print(sweep_table(width=256, max_batch=1024 if args.quick else 8192, repeat=repeat // 4))


if __name__ == "__main__":
    main()
