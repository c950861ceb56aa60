"""How much whole runs of worker processes differ on a steady machine: the gate's
``RUN_SPREAD`` (everyo/bench/regression.py), measured.

    python benchmarks/run_spread.py [--runs 30] [--processes 6]

Each run times ``gate_workload:work`` (about 1.6 ms of 200x200 matrix products) in fresh worker
processes, exactly as ``python -m everyo bench`` does (one BLAS thread, the default 100 calls),
one run after another. Per run: the gate's figure (the geometric mean of the processes' fastest
calls) and the reference's (bench/reference.py). Printed: the standard deviation of the log of
the ratio of consecutive runs' figures (the spread two runs measured apart differ by, which no
process of either run shows), its largest value, the same for the reference, and how the two
move together.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--processes", type=int, default=6)
    args = parser.parse_args()
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), str(HERE)])
    from everyo.bench.reference import FLOOR
    from everyo.bench.stats import process_mean
    from everyo.bench.workers import benchmark_in_workers

    work, ref = [], []
    for i in range(args.runs):
        result = benchmark_in_workers("gate_workload:work", processes=args.processes, threads=1)
        work.append(math.log(process_mean(result.groups, "min")))
        ref.append(math.log(process_mean(result.reference["blas"], "min")))
        ms, us, load = math.exp(work[-1]) * 1e3, math.exp(ref[-1]) * 1e6, os.getloadavg()[0]
        print(f"run {i + 1}/{args.runs}: {ms:.4f} ms, reference {us:.1f} us, load {load:.2f}")
    dw = [b - a for a, b in zip(work, work[1:])]
    dr = [b - a for a, b in zip(ref, ref[1:])]
    corr = statistics.correlation(dw, dr) if len(dw) > 2 else float("nan")
    # the pairs where the reference stayed within its floor: what the gate's RUN_SPREAD covers
    # (where it moved more, the gate widens the interval by the reference instead)
    steady = [w for w, r in zip(dw, dr) if abs(r) < math.log1p(FLOOR)]
    out = {
        "runs": args.runs,
        "processes": args.processes,
        "workload: sd of log ratio of consecutive runs": statistics.stdev(dw),
        "workload: largest |log ratio|": max(map(abs, dw)),
        "reference: sd of log ratio": statistics.stdev(dr),
        "reference: largest |log ratio|": max(map(abs, dr)),
        "correlation of the two ratios": corr,
        "pairs with a steady reference": len(steady),
        "workload, those pairs: sd of log ratio": statistics.stdev(steady)
        if len(steady) > 2
        else None,
        "workload, those pairs: largest |log ratio|": max(map(abs, steady), default=None),
        "load": os.getloadavg(),
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
