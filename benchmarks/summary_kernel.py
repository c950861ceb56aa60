"""The exact summary and a live refresh's table, timed on two source trees side by side.

    python benchmarks/summary_kernel.py [--trees BEFORE AFTER] [--rounds 9] [--events 1000000]

Each tree (a directory holding ``everyo`` and ``everyo_lab``, C extensions built in place) gets a
worker process of its own, with BLAS pinned to one thread; the workers build the same synthetic
run (``profiler_overhead.synthetic_run``) and take turns, one measurement each per round, so
both see the same machine. Figures: per tree the median of the rounds, and the median (and
range) of the paired ratios AFTER / BEFORE. Measured:

- ``summary``: ``analysis.summarize`` of a fresh snapshot of the run, by name, by path and by
  shape (a fresh snapshot each time: a batch caches its self times);
- ``live refresh``: 1,000 new events fed into the live aggregates (``LiveState.feed``) and the
  live table read back (``table_rows``), on top of a state already fed the whole run (the mean
  of 100 refreshes in a row).

With one tree (the default: this one) it prints that tree's figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ("summary name", "summary path", "summary shape", "live refresh")
REFRESHES = 100  # live refreshes per measurement (one is too short to time alone)


def worker(events: int) -> None:
    """Answer one line per request: the seconds of one measurement of the kind asked."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    # the tree's own benchmarks (they import that tree's module names)
    sys.path.insert(
        0, os.path.join(os.environ.get("PYTHONPATH") or os.path.dirname(HERE), "benchmarks")
    )
    from profiler_overhead import synthetic_run

    from everyo.profiler import analysis

    try:
        from everyo_lab.views.live_session import LiveState
    except ImportError:  # a tree from before the live aggregates joined the session's module
        from everyo_lab.views.live_state import LiveState

    run = synthetic_run(events)
    whole = run.snapshot()
    state = LiveState()
    state.feed(whole)
    extra = synthetic_run(1000).snapshot()
    print("ready", flush=True)
    for line in sys.stdin:
        kind = line.strip()
        if kind.startswith("summary"):
            batch = run.snapshot()
            t0 = time.perf_counter()
            analysis.summarize(batch, group_by=kind.split()[1])
        else:
            t0 = time.perf_counter()
            for _ in range(REFRESHES):
                state.feed(extra)
                state.table_rows(wall_ns=run.wall_ns)
            t0 += (time.perf_counter() - t0) * (1 - 1 / REFRESHES)  # the time of one
        print(time.perf_counter() - t0, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", nargs="+", default=[os.path.dirname(HERE)])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.events)
        return
    procs = []
    for tree in args.trees:
        env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        cmd = [sys.executable, __file__, "--worker", "--events", str(args.events)]
        p = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        procs.append(p)
    times = {(t, k): [] for t in range(len(procs)) for k in KINDS}
    for r in range(args.rounds):
        for kind in KINDS:
            order = range(len(procs)) if r % 2 == 0 else reversed(range(len(procs)))
            for t in order:  # alternate who goes first
                procs[t].stdin.write(kind + "\n")
                procs[t].stdin.flush()
                times[(t, kind)].append(float(procs[t].stdout.readline()))
    for p in procs:
        p.stdin.close()
        p.wait()
    out = {}
    for kind in KINDS:
        unit = 1e3
        row = {
            f"tree {t} median ms": statistics.median(times[(t, kind)]) * unit
            for t in range(len(procs))
        }
        if len(procs) == 2:
            ratios = [b / a for a, b in zip(times[(0, kind)], times[(1, kind)])]
            row["ratio median"] = statistics.median(ratios)
            row["ratio range"] = (min(ratios), max(ratios))
        out[kind] = row
    print(json.dumps({"trees": args.trees, "events": args.events, "rounds": args.rounds,
                      "load": os.getloadavg(), "results": out}, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
