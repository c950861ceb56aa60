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
import statistics
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


def _one_ms_work():
    """About 1 ms of NumPy work on one thread (the measurement the cost is set against); it
    also cools the caches the watch's code and the kernel's /proc code run from."""
    import numpy as np

    a = np.random.default_rng(0).random((160, 160), dtype=np.float32)

    def work():
        x = a
        for _ in range(12):
            x = np.tanh(x @ a)
        return x

    return work


def state_cost(pairs: int = 3000, idle_pairs: int = 300) -> dict[str, float]:
    """The cost of recording the machine state around a 1-ms measurement, in seconds each:

    - ``in_situ``: ``MachineWatch().start()`` before and ``.stop()`` after 1 ms of NumPy work,
      measurements back to back (as a sweep's points, repeated ``benchmark()`` calls: a watch
      started or stopped within 10 ms of the newest reading uses it, so they take about one
      reading per 10 ms), the two sections timed where they run (median);
    - ``after_idle``: the same for a lone measurement (20 ms of work after the previous one,
      as a warm-up would run: a reading at its start, which its end reuses, and a verdict, with
      the caches that work evicted);
    - ``paired``: median of (start + work + stop) less median of (work), interleaved: what the
      measurement's owner waits for, cache effects on the work included;
    - ``in_situ_cpu``: the CPU time of those two sections (the thread's clock, less what reading
      that clock costs): the same cost without the time the thread waited for a core, which on
      a loaded machine is most of the wall-clock figure;
    - ``tight``: start and stop in a tight loop (warm caches; the figure this file printed
      before the in-situ ones);
    - ``floor_*``: one new reading and its kernel calls, each alone after 20 ms of work (see
      :func:`_floor`): what a lone measurement pays before anything is judged.
    With the 1-ms work's own median, ``work``."""
    from threadpoolctl import threadpool_limits

    work = _one_ms_work()
    clock = time.perf_counter
    with threadpool_limits(1):
        for _ in range(200):
            work()
        cpu = time.thread_time_ns
        sections, alone, around, cpu_sections, cpu_empty = [], [], [], [], []
        for _ in range(pairs):
            t0 = clock()
            work()
            alone.append(clock() - t0)
            c0 = cpu()
            c1 = cpu()
            work()
            c2 = cpu()
            c3 = cpu()
            cpu_empty.append((c1 - c0) + (c3 - c2))
            c0 = cpu()
            t0 = clock()
            watch = MachineWatch(threads_policy="auto", threads_applied=1).start()
            t1 = clock()
            c1 = cpu()
            work()
            c2 = cpu()
            t2 = clock()
            watch.stop()
            t3 = clock()
            c3 = cpu()
            cpu_sections.append((c1 - c0) + (c3 - c2))
            sections.append((t1 - t0) + (t3 - t2))
            around.append(t3 - t0)
        idle = []
        for _ in range(idle_pairs):
            for _ in range(20):  # 20 ms of work (as a warm-up would run): longer than REUSE_S,
                work()  # so the watch takes its own first reading
            t0 = clock()
            watch = MachineWatch(threads_policy="auto", threads_applied=1).start()
            t1 = clock()
            work()
            t2 = clock()
            watch.stop()
            idle.append((t1 - t0) + (clock() - t2))
        floor = _floor(work, idle_pairs)
        t0 = clock()
        for _ in range(2000):
            MachineWatch(threads_policy="auto", threads_applied=1).start().stop()
        tight = (clock() - t0) / 2000
    median = statistics.median
    return {
        "in_situ": median(sections),
        "in_situ_cpu": (median(cpu_sections) - median(cpu_empty)) / 1e9,
        "after_idle": median(idle) if idle else float("nan"),
        "paired": median(around) - median(alone),
        "tight": tight,
        "work": median(alone),
        **floor,
    }


def _floor(work, rounds: int) -> dict[str, float]:
    """What a lone measurement cannot avoid: one new reading (the compiled one where it is
    built), and each kernel call in it, timed alone after 20 ms of work (medians, seconds):
    ``reading``, ``getrusage``, ``proc_stat`` (``pread`` of /proc/stat through a kept
    descriptor, as the reading does)."""
    import resource

    from everyo import machine_state

    fd = os.open("/proc/stat", os.O_RDONLY) if os.path.exists("/proc/stat") else None
    calls = {
        "reading": machine_state._read,
        "getrusage": lambda: resource.getrusage(resource.RUSAGE_SELF),
    }
    if fd is not None:
        calls["proc_stat"] = lambda: os.pread(fd, 160, 0)
    times: dict[str, list[float]] = {name: [] for name in calls}
    clock = time.perf_counter
    for _ in range(rounds):
        for name, call in calls.items():  # (interleaved: each after its own 20 ms of work)
            for _ in range(20):
                work()
            t0 = clock()
            call()
            times[name].append(clock() - t0)
    if fd is not None:
        os.close(fd)
    return {f"floor_{name}": statistics.median(v) for name, v in times.items()}


def print_state_cost(cost: dict[str, float]) -> None:
    us = {k: v * 1e6 for k, v in cost.items()}
    share = cost["in_situ"] / 1e-3
    print(
        f"\nrecording the machine state around a 1-ms measurement (work {us['work'] / 1e3:.2f} ms):"
        f"\n  in situ, back to back: {us['in_situ']:.1f} us = {share:.2%} of 1 ms (target <= 1 %)"
        f"\n  in situ, CPU time of those sections: {us['in_situ_cpu']:.1f} us = "
        f"{cost['in_situ_cpu'] / 1e-3:.2%}"
        f"\n  in situ, a lone measurement: {us['after_idle']:.1f} us = "
        f"{cost['after_idle'] / 1e-3:.2%}"
        f"\n  paired (start + work + stop) - work: {us['paired']:.1f} us"
        f"\n  tight loop, warm caches: {us['tight']:.1f} us"
    )
    if "floor_reading" in us:  # what a lone measurement cannot avoid: one new reading
        calls = ", ".join(
            f"{label} {us[key]:.1f} us"
            for key, label in (("floor_getrusage", "getrusage"), ("floor_proc_stat", "/proc/stat"))
            if key in us
        )
        print(
            f"  one new reading after 20 ms of work: {us['floor_reading']:.1f} us = "
            f"{cost['floor_reading'] / 1e-3:.2%} of 1 ms (its kernel calls alone: {calls})"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls per point and runs")
    parser.add_argument("--only", default="quiet,cpu,blas", help="loads to run, comma-separated")
    parser.add_argument("--runs", type=int, default=20, help="benchmark() runs per cell")
    parser.add_argument(
        "--only-cost", action="store_true", help="only the cost of recording the machine state"
    )
    args = parser.parse_args(argv)
    if args.only_cost:
        print(f"before: {current_load(0.5).line()}")
        print_state_cost(state_cost())
        print(f"after: {current_load(0.5).line()}")
        return
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
        "\n| load | threads | sweep verdict | samples/s at 16 / 512 | largest unflagged cliff | "
        "points flagged | recommended | within one neighbour of quiet (auto) | profiled step |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
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
    print_state_cost(state_cost())
    print(f"after: {current_load(0.5).line()}")


if __name__ == "__main__":
    main()
