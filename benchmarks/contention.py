"""Measurements on a shared machine: a sweep, a profiled training step and short benchmarks,
on a quiet machine, beside a CPU burner and beside a BLAS burner, with each thread policy.

Run: ``python benchmarks/contention.py [--quick] [--only quiet,blas] [--runs N]``. Prints
markdown tables:

- per (load, threads): the sweep of the issue's 32-256-256-10 MLP (inference, batch 8...512):
  the largest throughput ratio between neighbouring points that is not flagged, the share of
  points flagged, the recommendation (and whether it is within one neighbour of the quiet
  one), the verdict of a profiled MLP training step;
- per (load, threads): the verdicts of ``--runs`` short ``benchmark()`` runs (the targets:
  ``busy``/``contended`` in >= 95 % of burner runs, ``quiet`` in >= 95 % of quiet runs);
- the cost of recording the machine state against a 1-ms measurement (target <= 1 %).

The burners are other processes: the CPU burner is one pure-Python loop per core, the BLAS
burner 512x512 float32 matmuls in a loop on as many OpenBLAS threads as cores (as another
notebook's kernel would run). A quiet run needs a quiet machine: run it alone.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import Counter

import everyo as eo
from everyo.bench import benchmark, sweep_batch_sizes
from everyo.machine_state import MachineWatch, current_load, threads_in_use
from everyo.profiler import profile

SIZES = [8, 16, 32, 64, 128, 256, 512]
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
BLAS_BURNER = """
import numpy as np
a = np.random.default_rng(0).random((512, 512), dtype=np.float32)
while True:
    a @ a
"""
CPU_BURNER = "while True:\n    pass\n"
POLICIES = {"configured": None, "auto": "auto", "1": 1}


class Burner:
    """Other processes loading the machine while a block runs."""

    def __init__(self, kind: str):
        self.kind, self.procs = kind, []

    def __enter__(self):
        env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
        cores = os.cpu_count() or 2
        if self.kind == "blas":
            env["OPENBLAS_NUM_THREADS"] = str(cores)
            self.procs = [subprocess.Popen([sys.executable, "-c", BLAS_BURNER], env=env)]
        elif self.kind == "cpu":
            self.procs = [
                subprocess.Popen([sys.executable, "-c", CPU_BURNER], env=env) for _ in range(cores)
            ]
        time.sleep(1.0 if self.procs else 0.0)
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(timeout=10)
        time.sleep(0.5 if self.procs else 0.0)


def mlp():
    return eo.Sequential(
        eo.Linear(32, 256, seed=0),
        eo.ReLU(),
        eo.Linear(256, 256, seed=1),
        eo.ReLU(),
        eo.Linear(256, 10, seed=2),
    )


def largest_unflagged_cliff(rows) -> float:
    ok = [r for r in rows if r.trusted]
    ratios = [
        max(a.throughput / b.throughput, b.throughput / a.throughput) for a, b in zip(ok, ok[1:])
    ]
    return max(ratios, default=1.0)


def sweep_row(threads, repeat: int):
    result = sweep_batch_sizes(
        mlp(),
        lambda b: eo.randn(b, 32, seed=b),
        SIZES,
        repeat=repeat,
        progress=False,
        threads=threads,
    )
    flagged = len(result.flagged_rows) / max(len(result.ok_rows), 1)
    rec = result.recommended.batch_size if result.recommended else None
    return result, largest_unflagged_cliff(result.rows), flagged, rec


def training_verdict(threads, steps: int) -> str:
    from everyo.thread_policy import ThreadPolicy

    model = mlp()
    opt = eo.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = eo.CrossEntropyLoss()
    x, y = eo.randn(64, 32, seed=0), eo.Tensor([i % 10 for i in range(64)])
    with ThreadPolicy(threads) as policy, profile(record_shapes=True) as prof:
        prof.run.watch_threads(policy.policy, policy.applied)
        for _ in range(steps):
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
    return prof.run.machine_state.verdict


def verdict_counts(threads, runs: int) -> Counter:
    model = mlp()
    x = eo.randn(128, 32, seed=0)
    counts = Counter()
    with eo.no_grad():
        for _ in range(runs):
            result = benchmark(model, x, warmup=3, repeat=100, threads=threads)
            counts[result.machine_state.verdict] += 1
    return counts


def state_cost(repeat: int = 2000) -> tuple[float, float]:
    """Seconds to start and stop one MachineWatch (two readings, the threads in use, the
    verdict), and that as a share of a 1-ms measurement."""
    threads_in_use()  # the controller is built once per process
    start = time.perf_counter()
    for _ in range(repeat):
        MachineWatch().start().stop()
    each = (time.perf_counter() - start) / repeat
    return each, each / 1e-3


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls per point and runs")
    parser.add_argument("--only", default="quiet,cpu,blas", help="loads to run, comma-separated")
    parser.add_argument("--runs", type=int, default=20, help="benchmark() runs per cell")
    args = parser.parse_args(argv)
    repeat = 5 if args.quick else 10
    runs = max(4, args.runs // 4) if args.quick else args.runs
    loads = [x for x in args.only.split(",") if x]
    print(f"before: {current_load(0.5).line()}; BLAS threads configured: {threads_in_use()}")
    sweeps, verdicts = [], []
    quiet_rec = {}
    for load in loads:
        with Burner(load):
            for name, threads in POLICIES.items():
                result, cliff, flagged, rec = sweep_row(threads, repeat)
                if load == "quiet":
                    quiet_rec[name] = rec
                training = training_verdict(threads, 200)
                counts = verdict_counts(threads, runs)
                sweeps.append((load, name, result, cliff, flagged, rec, training))
                verdicts.append((load, name, counts))
                print(f"  {load:>5} threads={name:<10} cliff {cliff:6.2f}x, rec {rec}", flush=True)
    print(
        "\n| load | threads | sweep verdict | largest unflagged cliff | points flagged | "
        "recommended | within one neighbour of quiet | profiled step |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for load, name, result, cliff, flagged, rec, training in sweeps:
        quiet = quiet_rec.get("auto")
        near = "-"
        if rec is not None and quiet is not None:
            near = "yes" if abs(SIZES.index(rec) - SIZES.index(quiet)) <= 1 else "no"
        state = result.machine_state
        rates = " / ".join(f"{result[b].throughput:,.0f}" for b in (16, 512))
        print(
            f"| {load} | {name} | {state.verdict if state else '-'} | {rates} | {cliff:.2f}x | "
            f"{flagged:.0%} | {rec} | {near} | {training} |"
        )
    print("\n| load | threads | benchmark() runs | quiet | busy | contended | unknown | target |")
    print("|---|---|---|---|---|---|---|---|")
    for load, name, counts in verdicts:
        n = sum(counts.values())
        share = {v: counts[v] / n for v in ("quiet", "busy", "contended", "unknown")}
        if load == "quiet":
            target = f"quiet {share['quiet']:.0%} (>= 95 %)"
        else:
            target = f"busy or contended {share['busy'] + share['contended']:.0%} (>= 95 %)"
        print(
            f"| {load} | {name} | {n} | {share['quiet']:.0%} | {share['busy']:.0%} | "
            f"{share['contended']:.0%} | {share['unknown']:.0%} | {target} |"
        )
    each, share = state_cost()
    print(
        f"\nrecording the machine state: {each * 1e6:.1f} us per measurement = "
        f"{share:.2%} of a 1-ms measurement (target <= 1 %)"
    )
    print(f"after: {current_load(0.5).line()}")


if __name__ == "__main__":
    main()
