"""Profiler cost (TARGETS.md "Profiler cost"), as differences and ratios measured in one run.

    python benchmarks/profiler_overhead.py [--quick]     (the same as: run.py --only profiler)

A markdown table: hook cost with no profiler per module call, cost per recorded event,
end-to-end slowdown of MLP and CNN training steps with module-level profiling, the observer effect
on the notebook benchmark's fixed-time training loop (``training_observer.py``), bytes per event
at 1,000,000 events (synthetic events written straight into a store; ``growth.py`` times the
summary and the exports of such runs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from suite import Section, recorder_implementation, verdict
from training_observer import observer_effect

import everyo as eo
from everyo.profiler import Profiler, RunRegistry
from everyo.profiler.storage.run import Run
from everyo.profiler.storage.store import EventStore


class Identity(eo.Module):
    def forward(self, x):
        return x


def per_call_ns(fn, n: int, repeats: int = 7) -> float:
    """Best-of-``repeats`` nanoseconds per call of ``fn`` (the least disturbed measurement)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter_ns() - t0) / n)
    return best


ROUNDS = 9  # interleaved rounds: this VM's speed drifts by 2x over seconds, so every figure
# is a median over rounds of differences measured within one round


def _empty():
    return None


def hook_cost(n: int, rounds: int = ROUNDS) -> dict:
    m, x = Identity(), eo.zeros(2, 2)
    from everyo.profiler.recording import hooks

    def flag_check():
        return hooks.active is None

    per = {"module(x)": [], "module.forward(x)": [], "dispatch": [], "flag": [], "empty": []}
    for _ in range(rounds):
        call = per_call_ns(lambda: m(x), n, repeats=3)
        direct = per_call_ns(lambda: m.forward(x), n, repeats=3)
        flag = per_call_ns(flag_check, n, repeats=3) - per_call_ns(lambda: True, n, repeats=3)
        per["module(x)"].append(call)
        per["module.forward(x)"].append(direct)
        per["dispatch"].append(call - direct)
        per["flag"].append(flag)
        per["empty"].append(per_call_ns(_empty, n, repeats=3))
    return {k: statistics.median(v) for k, v in per.items()}


def event_cost(n: int, width: int = 50, rounds: int = ROUNDS) -> dict:
    """Extra ns per recorded module event: a Sequential of ``width`` Identity layers, the
    unprofiled call measured next to each profiled one (median over interleaved rounds)."""
    m, x = eo.Sequential(*[Identity() for _ in range(width)]), eo.zeros(2, 2)
    calls = max(1, n // width)
    profilers = {
        shapes: Profiler(record_shapes=shapes, registry=RunRegistry()) for shapes in (True, False)
    }
    diffs: dict = {True: [], False: []}
    for _ in range(rounds):
        for shapes, p in profilers.items():
            off = per_call_ns(lambda: m(x), calls, repeats=3)
            with p:  # a profiler entered again keeps adding to its run
                on = per_call_ns(lambda: m(x), calls, repeats=3)
            diffs[shapes].append((on - off) / (width + 1))
    return {shapes: statistics.median(d) for shapes, d in diffs.items()}


def pure_python_event_cost(n: int) -> float:
    """``event_cost`` (shapes on) of a machine without the compiled extension: a fresh
    interpreter with ``EVERYO_PURE_PYTHON=1`` (Python ``Module.__call__`` and recorder)."""
    import subprocess
    import sys

    code = f"import profiler_overhead as po; print(po.event_cost({n}, rounds=3)[True])"
    env = {**os.environ, "EVERYO_PURE_PYTHON": "1"}
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=here, env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def mlp_model():
    model = eo.Sequential(
        eo.Linear(64, 256, seed=0),
        eo.ReLU(),
        eo.Linear(256, 256, seed=1),
        eo.ReLU(),
        eo.Linear(256, 10, seed=2),
    )
    rng = np.random.default_rng(0)
    return model, rng.standard_normal((128, 64)).astype(np.float32), rng.integers(0, 10, 128)


def cnn_model():
    model = eo.Sequential(
        eo.Conv2d(1, 8, 3, padding=1, seed=0),
        eo.ReLU(),
        eo.MaxPool2d(2),
        eo.Flatten(),
        eo.Linear(8 * 8 * 8, 10, seed=1),
    )
    rng = np.random.default_rng(0)
    return model, rng.standard_normal((32, 1, 16, 16)).astype(np.float32), rng.integers(0, 10, 32)


def step_slowdown(build, steps: int, rounds: int) -> tuple[float, float, float, float]:
    """Training step (forward, loss, backward, Adam) with and without module-level profiling:
    best step off, best step on, median paired slowdown, and events recorded per step."""
    model, xs, ys = build()
    loss_fn = eo.CrossEntropyLoss()
    opt = eo.optim.Adam(model.parameters(), lr=1e-3)
    x, y = eo.tensor(xs), eo.tensor(ys)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    events: list[float] = []

    def timed(profiled: bool) -> float:
        reg = RunRegistry()
        t0 = time.perf_counter_ns()
        if profiled:
            with Profiler(registry=reg) as prof:
                for _ in range(steps):
                    step()
            events.append(prof.run.num_events / steps)
        else:
            for _ in range(steps):
                step()
        return (time.perf_counter_ns() - t0) / steps

    for _ in range(steps):
        step()  # warm up caches and allocations
    offs, ons = [], []
    for _ in range(rounds):  # interleaved pairs, so drift hits both sides alike
        offs.append(timed(False))
        ons.append(timed(True))
    ratio = statistics.median(on / off for on, off in zip(ons, offs))
    return min(offs), min(ons), ratio - 1, statistics.median(events)


def synthetic_run(n: int) -> Run:
    """``n`` events: calls of a root module with three children, written straight to a store."""
    store = EventStore(["shape"])
    keys = [
        store.intern_key("module", name, path)
        for name, path in (("Sequential", ""), ("Linear", "0"), ("ReLU", "1"), ("Linear", "2"))
    ]
    store.intern_shape("[(32, 4)] -> (32, 16)")
    store.add_thread(os.getpid(), "MainThread")
    calls = n // 4
    c = np.repeat(np.arange(calls, dtype=np.int64), 4)
    pos = np.tile(np.arange(4), calls)  # rows: three children, then their parent
    is_root = pos == 3
    cols = {
        "start_ns": np.where(is_root, c * 1000, c * 1000 + 100 + 250 * pos),
        "dur_ns": np.where(is_root, 900, 200 + (c % 7)),
        "key": np.where(is_root, keys[0], np.array(keys)[np.minimum(pos + 1, 3)]),
        "thread": np.zeros(len(c), np.int16),
        "depth": np.where(is_root, 0, 1),
        "shape": np.zeros(len(c), np.int32),
    }
    for lo in range(0, len(c), 1 << 16):
        store.append({k: v[lo : lo + (1 << 16)] for k, v in cols.items()})
    run = Run(store, label="synthetic", environment={})
    run.finish()
    return run


def timed_s(fn, repeats: int = 3) -> float:
    """Best of ``repeats`` wall times in seconds (the least disturbed run on a shared machine)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _one_blas_thread():
    """Pin BLAS to one thread: on a shared machine, thread contention drowns the signal."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1)


def section(quick: bool = False) -> Section:
    n_calls = 20_000 if quick else 200_000
    hook = hook_cost(n_calls)
    ev = event_cost(n_calls // 4)
    ev_py = pure_python_event_cost(n_calls // 4)
    with _one_blas_thread():
        steps, rounds = (5, 2) if quick else (20, 15)
        slowdowns = {
            name: step_slowdown(build, steps, rounds)
            for name, build in (("MLP", mlp_model), ("CNN", cnn_model))
        }
    observer = observer_effect(*((0.1, 1) if quick else (0.3, 15)))
    run = synthetic_run(10_000 if quick else 1_000_000)
    n = run.num_events
    s = Section(
        "profiler",
        "Profiler: cost of the hooks and of recording",
        f"Engine modules under `everyo.profiler` (recorder: {recorder_implementation()}). "
        f"Per-call costs are medians over {ROUNDS} interleaved rounds of best-of-3 tight loops "
        "(with and without, measured next to each other); step slowdowns are medians of "
        "paired (interleaved) ratios. How the cost compares with the other profilers on the same "
        "workloads is the next table; summary and export times by run size are in the one after.",
        ["what", "measured", "target", "notes"],
    )
    empty = hook["empty"]
    s.row(
        "module dispatch, no profiler: module(x) - module.forward(x)",
        f"{hook['dispatch']:.0f} ns",
        f"≤ 250 ns: {verdict(hook['dispatch'], 250)}",
        f"module(x) {hook['module(x)']:.0f} ns, forward {hook['module.forward(x)']:.0f} ns; "
        f"{hook['dispatch'] / empty:.1f} empty Python calls ({empty:.0f} ns each in these rounds)",
    )
    s.row("hook share: `hooks.active is None`", f"{hook['flag']:.0f} ns",
          f"≤ 50 ns: {verdict(hook['flag'], 50)}", "")  # fmt: skip
    s.row(
        "cost per recorded event (module call, record_shapes=True)",
        f"{ev[True]:.0f} ns",
        f"≤ 500 ns: {verdict(ev[True], 500)}",
        f"record_shapes=False: {ev[False]:.0f} ns; {ev[True] / empty:.1f} and "
        f"{ev[False] / empty:.1f} empty Python calls; without the compiled extension "
        f"(EVERYO_PURE_PYTHON=1): {ev_py:.0f} ns, {ev_py / ev[True]:.1f}x",
    )
    for name, (off, on, slow, per_step) in slowdowns.items():
        s.row(
            f"{name} training step slowdown, module-level profiling",
            f"{slow * 100:.1f} %",
            f"≤ 5 %: {verdict(slow, 0.05)}",
            f"best step {off / 1e6:.3f} ms off, {on / 1e6:.3f} ms on; {per_step:.0f} events per "
            f"step, which at the cost per event above predict "
            f"{per_step * ev[True] / off * 100:.1f} %",
        )
    shapes, plain = observer["shapes"], observer["no shapes"]
    s.row(
        "observer effect: steps of a fixed-time training loop, profiled / unprofiled",
        f"{shapes['cpu_ratio']:.2f}×",
        f"≥ 0.9×: {verdict(shapes['cpu_ratio'], 0.9, at_most=False)}",
        f"32-64-8 MLP loop, {shapes['events_per_step']:.0f} events per step; per training-thread "
        f"CPU second (wall {shapes['wall_ratio']:.2f}×); record_shapes=False: "
        f"{plain['cpu_ratio']:.2f}×",
    )
    s.row(
        f"store bytes per event (core columns) at {n:,} events",
        f"{(run.store.nbytes - 4 * n) / n:.1f} B",
        f"≤ 32 B: {verdict((run.store.nbytes - 4 * n) / n, 32)}",
        f"with the shape column: {run.store.nbytes / n:.1f} B",
    )
    return s


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    print(section(ap.parse_args(argv).quick).markdown("printed, not saved"))


if __name__ == "__main__":
    main()
