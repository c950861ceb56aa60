"""The convolution and max-pool ops of an older commit against this tree's, side by side in one
process: the CNN training step of engine_step.py (and torch's) and the demo's ``Conv2d.backward``.

    python benchmarks/conv_before_after.py [--old 6b8b69d] [--threads 1|default] [--rounds 15]
                                           [--demo-runs 6]

The old ops are loaded from ``git show OLD:everyo/core/ops/conv.py`` (``OLD`` must have that
file: issue 35's starting point, 6b8b69d, does) and swapped in for ``F.conv2d`` and
``F.max_pool2d``; everything else is this tree's. Step rounds interleave new, old and torch (wall
time: with default threads BLAS's own threads work too); the demo runs alternate old and new and
report ``Conv2d.backward``'s total over its 10 calls and its slowest call. Not part of run.py: a
before/after check for one change, whose figures RESULTS.md keeps with the machine's state.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import time
import types
from pathlib import Path

from engine_step import build
from suite import one_thread, optional

import everyo.nn.functional as F
from everyo.cli.demo import run_demo

ROOT = Path(__file__).resolve().parents[1]


def old_ops(commit: str) -> types.ModuleType:
    src = subprocess.run(["git", "show", f"{commit}:everyo/core/ops/conv.py"], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout  # fmt: skip
    mod = types.ModuleType(f"conv_{commit}")
    exec(compile(src, f"{commit}:everyo/core/ops/conv.py", "exec"), mod.__dict__)  # noqa: S102
    return mod


@contextlib.contextmanager
def swapped(old):
    new = F.conv2d, F.max_pool2d
    F.conv2d = lambda x, w, b, s, p, d, g=1: old.conv2d(x, w, b, s, p, d)
    F.max_pool2d = old.max_pool2d
    try:
        yield
    finally:
        F.conv2d, F.max_pool2d = new


def step_rounds(old, rounds: int) -> dict[str, list[float]]:
    impls = build("cnn", None, 32, "sgd")
    e, t = impls["everyo"], impls.get("torch")

    def old_step():
        with swapped(old):
            e[0].step(*e[1])

    fns = {"new": lambda: e[0].step(*e[1]), "old": old_step}
    if t is not None:
        fns["torch"] = lambda: t[0].step(*t[1])
    out = {k: [] for k in fns}
    for f in fns.values():
        f()
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = time.perf_counter()
            for _ in range(5):
                f()
            out[k].append((time.perf_counter() - t0) / 5)
    return out


def demo_runs(old, runs: int) -> dict[str, list[tuple[float, float]]]:
    res = {"old": [], "new": []}
    for _ in range(runs):
        for which in ("old", "new"):
            with swapped(old) if which == "old" else contextlib.nullcontext():
                p = run_demo(5)
            d = [e.duration_ns / 1e6 for e in p.events if e.name == "Conv2d.backward"]
            res[which].append((sum(d), max(d)))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", default="6b8b69d")
    ap.add_argument("--threads", choices=["1", "default"], default="1")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--demo-runs", type=int, default=6)
    args = ap.parse_args()
    old = old_ops(args.old)
    med = statistics.median
    with one_thread() if args.threads == "1" else contextlib.nullcontext():
        t = step_rounds(old, args.rounds)
        demo = demo_runs(old, args.demo_runs)
    ratio = lambda a, b: med([x / y for x, y in zip(t[a], t[b])])  # noqa: E731
    cells = [f"{k} {med(v) * 1e3:.2f} ms" for k, v in t.items()]
    line = f"CNN step, threads={args.threads}, {args.rounds} rounds: " + ", ".join(cells)
    line += f"; new/old {ratio('new', 'old'):.2f}"
    if "torch" in t:
        line += f", new/torch {ratio('new', 'torch'):.2f}, old/torch {ratio('old', 'torch'):.2f}"
    print(line)
    for which, rows in demo.items():
        tot = [r[0] for r in rows]
        print(f"demo {which} ({args.old if which == 'old' else 'this tree'}): Conv2d.backward over "
              f"10 calls, median {med(tot):.1f} ms (runs {', '.join(f'{x:.1f}' for x in tot)}); "
              f"slowest call median {med(r[1] for r in rows):.1f} ms, worst "
              f"{max(r[1] for r in rows):.1f} ms")  # fmt: skip
    if optional("torch") is None:
        print("torch is not installed: its step skipped")


if __name__ == "__main__":
    main()
