"""The cost of a module call at an older commit against this tree's: a recorded event with and
without shapes, and the dispatch with no profiler (``profiler_overhead.event_cost`` and
``hook_cost``), in alternating fresh processes, one BLAS thread.

    python benchmarks/module_call_before_after.py [--old 87eb825] [--pairs 8] [--rounds 5]
                                                  [--callgrind]

``OLD``'s tree is exported (``git archive``) into a temporary folder and its C extensions built
there; each pair runs one process on each tree (the order alternates), and the figures are
medians of the pairs' ratios with their spread. ``--callgrind`` also counts instructions per
event (valgrind; they do not move with the machine's load): 400 calls of a Sequential of 50
Identity layers, profiled minus unprofiled, per tree and hash seed. Not part of run.py: a
before/after check for one change, whose figures RESULTS.md keeps with the machine's state.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

TIMED = """
import json, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from threadpoolctl import threadpool_limits
threadpool_limits(1)
import everyo, profiler_overhead as po
assert everyo.__file__.startswith(sys.argv[1]), everyo.__file__
n, rounds = int(sys.argv[3]), int(sys.argv[4])
ev = po.event_cost(n, rounds=rounds)
hook = po.hook_cost(n, rounds=rounds)
print(json.dumps({"shapes": ev[True], "no shapes": ev[False], "dispatch": hook["dispatch"]}))
"""

COUNTED = """
import sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import everyo as eo, everyo.profiler.recording.recorder as recorder
recorder.FLUSH_NS = 10**13  # flush by count, as in a real run (valgrind is ~50x slower)
from profiler_overhead import Identity
from everyo.profiler import Profiler, RunRegistry
import contextlib
mode, calls = sys.argv[3], int(sys.argv[4])
m, x = eo.Sequential(*[Identity() for _ in range(50)]), eo.zeros(2, 2)
ctx = contextlib.nullcontext() if mode == "off" else Profiler(
    registry=RunRegistry(), record_shapes=(mode == "shapes"))
def one(i):
    m(x)
    return i
with ctx:
    for _ in range(50):
        m(x)
    sorted(range(calls), key=one)
"""


def export_tree(commit: str, folder: Path) -> Path:
    tree = folder / commit
    tree.mkdir()
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True,
                             capture_output=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree,
                   check=True, capture_output=True)  # fmt: skip
    return tree


def timed(tree: Path, n: int, rounds: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EVERYO_PURE_PYTHON")}
    out = subprocess.run([sys.executable, "-c", TIMED, str(tree), str(HERE), str(n), str(rounds)],
                         env=env, check=True, capture_output=True, text=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def counted(tree: Path, mode: str, calls: int, seed: int, folder: Path) -> int:
    script = folder / "counted.py"
    script.write_text(COUNTED)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EVERYO_PURE_PYTHON")}
    env["PYTHONHASHSEED"] = str(seed)
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--collect-atstart=no",
         "--toggle-collect=builtin_sorted", f"--callgrind-out-file={folder / 'out'}",
         sys.executable, str(script), str(tree), str(HERE), mode, str(calls)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    found = re.search(r"Collected : (\d+)", run.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count:\n{run.stderr[-2000:]}")
    return int(found.group(1))


def _quartiles(values: list[float]) -> str:
    if len(values) < 4:
        return f"{min(values):.3f}–{max(values):.3f}"
    q = statistics.quantiles(values, n=4)
    return f"{q[0]:.3f}–{q[2]:.3f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", default="87eb825", help="the commit to compare with")
    ap.add_argument("--pairs", type=int, default=8, help="alternating process pairs")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per process")
    ap.add_argument("--calls", type=int, default=100_000, help="module calls per measurement")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="everyo-before-after-") as tmp:
        trees = {"before": export_tree(args.old, Path(tmp)), "after": ROOT}
        got: dict = {"before": [], "after": []}
        for i in range(args.pairs):
            for side in ("before", "after") if i % 2 == 0 else ("after", "before"):
                got[side].append(timed(trees[side], args.calls, args.rounds))
        print(f"before: {args.old}, after: this tree; {args.pairs} pairs, `uptime`: "
              f"{os.getloadavg()[0]:.2f} (1-min load at the end)")  # fmt: skip
        print("| ns | before | after | after / before, median of pairs (IQR) |")
        print("| --- | ---: | ---: | ---: |")
        for what in ("shapes", "no shapes", "dispatch"):
            b = [r[what] for r in got["before"]]
            a = [r[what] for r in got["after"]]
            ratios = [x / y for x, y in zip(a, b)]
            print(f"| {what} | {statistics.median(b):.1f} | {statistics.median(a):.1f} | "
                  f"{statistics.median(ratios):.3f} ({_quartiles(ratios)}) |")  # fmt: skip
        if args.callgrind and shutil.which("valgrind"):
            calls, events, seeds = 400, 400 * 51, (0, 1, 2)
            count = {
                (side, mode, seed): counted(trees[side], mode, calls, seed, Path(tmp))
                for side in trees
                for mode in ("off", "shapes", "no shapes")
                for seed in seeds
            }
            print("\n| instructions per event | before | after |\n| --- | ---: | ---: |")
            for mode in ("shapes", "no shapes"):
                cells = []
                for side in trees:
                    per = [(count[side, mode, s] - count[side, "off", s]) / events for s in seeds]
                    cells.append(f"{statistics.median(per):,.0f} ({min(per):,.0f}–{max(per):,.0f})")
                print(f"| {mode} | {cells[0]} | {cells[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
