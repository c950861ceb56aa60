"""Wall time of the observer benchmarks' CNN step with OpenBLAS on one thread and on its default.

    python benchmarks/blas_threads.py [--rounds 15] [--steps 20]

The step is ``harness.CNN_SETUP``'s (conv-relu-pool x2 + linear on a 32x3x32x32 batch, SGD), the
loop ``observer_variants.py --workload cnn`` / ``cnn1`` runs in the browser. Rounds alternate
the two settings (``threadpoolctl.threadpool_limits``) in one process, so drift hits both alike;
prints the median wall time per step of each and the median per-round ratio. Wall time, not
CPU time: two threads spend more CPU for each step whatever they gain.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "browser"))

import harness  # noqa: E402


def build():
    ns: dict = {}
    exec(harness.CNN_SETUP, ns)
    exec("def step():\n" + harness.STEP, ns)
    return ns["step"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=20, help="steps per setting per round")
    args = parser.parse_args()
    if args.rounds < 1 or args.steps < 1:
        parser.error("--rounds and --steps must be at least 1")
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError:
        print("cannot run: threadpoolctl is not installed (pip install -e '.[bench]')")
        return 2
    step = build()  # (loads NumPy's BLAS: threadpoolctl sees only loaded libraries)
    blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
    default = max(blas, default=1)
    if default == 1:
        print("cannot compare: BLAS runs one thread by default here (one core, or a limit set)")
        return 2
    for _ in range(5):
        step()
    per: dict[int, list[float]] = {1: [], default: []}
    for r in range(args.rounds):
        order = (1, default) if r % 2 == 0 else (default, 1)
        for threads in order:
            with threadpool_limits(threads, user_api="blas"):
                step()  # the first step after a change of threads is not timed
                t0 = time.perf_counter()
                for _ in range(args.steps):
                    step()
                per[threads].append((time.perf_counter() - t0) / args.steps)
    ratios = [a / b for a, b in zip(per[default], per[1])]
    print(f"| BLAS threads | ms per step (median of {args.rounds} rounds of {args.steps}) |")
    print("| ---: | ---: |")
    for threads in sorted(per):
        print(f"| {threads} | {statistics.median(per[threads]) * 1e3:.2f} |")
    ratio = statistics.median(ratios)
    print(f"\n{default} threads ÷ 1 thread, median per-round ratio: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
