"""Observer effect of the profiler on a fixed-time training loop, without Jupyter.

    python benchmarks/training_observer.py [--seconds 0.3] [--rounds 15] [--quick]
    python benchmarks/training_observer.py --alternate [--blocks 300] [--block-steps 100]

The loop is the one the browser benchmark (``dashboard_browser.py``) runs in a notebook cell
under ``%%everyo_profile``: a 32-64-8 MLP, SGD, batch 64, about 11 events per step. Each round
runs it for ``--seconds`` three times, in a rotating order: without a profiler, under
``profile()`` (the defaults: record_shapes=True) and under ``profile(record_shapes=False)``.
Prints steps per second (wall) and per training-thread CPU second for each, and the median of the
per-round ratios profiled / unprofiled (TARGETS.md: >= 0.9; "end-to-end slowdown <= 5 %").

On a shared 2-core VM wall-clock rates swing by 2x between seconds: compare the ratios, which
pair runs made within a second of each other, and prefer the CPU-time column.

``--alternate`` measures the recording itself, with the drift cancelled: one profiler runs
throughout while the loop alternates blocks of ``--block-steps`` steps with recording on and
off (``hooks.active`` switched between blocks, so no start, stop or first-call set-up is
timed); it prints the median over ``--blocks`` pairs of the steps-per-second ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time

import everyo as eo
from everyo.profiler import RunRegistry, profile
from everyo.profiler.recording import hooks

MODES = ("off", "shapes", "no shapes")


def build():
    model = eo.Sequential(eo.Linear(32, 64, seed=0), eo.ReLU(), eo.Linear(64, 8, seed=1))
    optimizer = eo.optim.SGD(model.parameters(), lr=1e-3)
    x = eo.ones(64, 32)

    def step():
        optimizer.zero_grad()
        loss = eo.sum(model(x) ** 2)
        loss.backward()
        optimizer.step()

    return step


def fixed_time(step, seconds: float) -> tuple[int, float, float]:
    """Steps done in ``seconds`` of wall time, the wall seconds and the thread's CPU seconds."""
    steps = 0
    c0, t0 = time.thread_time(), time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step()
        steps += 1
    return steps, time.perf_counter() - t0, time.thread_time() - c0


def run_mode(step, mode: str, seconds: float) -> tuple[float, float, float]:
    """(steps per wall second, steps per CPU second, events per step) of one run."""
    if mode == "off":
        steps, wall, cpu = fixed_time(step, seconds)
        events = 0.0
    else:
        with profile(record_shapes=(mode == "shapes"), registry=RunRegistry()) as p:
            steps, wall, cpu = fixed_time(step, seconds)
        events = p.run.num_events / max(steps, 1)
    return steps / wall, steps / max(cpu, 1e-9), events


def observer_effect(seconds: float = 0.3, rounds: int = 15) -> dict:
    """Per mode: median steps/s (wall, CPU) and median paired ratios against ``off``."""
    step = build()
    fixed_time(step, min(seconds, 0.3))  # warm up
    runs: dict[str, list] = {m: [] for m in MODES}
    for r in range(rounds):
        order = MODES[r % 3 :] + MODES[: r % 3]  # each mode goes first, second and last
        for mode in order:
            runs[mode].append(run_mode(step, mode, seconds))
    out = {}
    for mode in MODES:
        rs, offs = runs[mode], runs["off"]
        out[mode] = {
            "wall_rate": statistics.median(r[0] for r in rs),
            "cpu_rate": statistics.median(r[1] for r in rs),
            "wall_ratio": statistics.median(r[0] / o[0] for r, o in zip(rs, offs)),
            "cpu_ratio": statistics.median(r[1] / o[1] for r, o in zip(rs, offs)),
            "events_per_step": statistics.median(r[2] for r in rs),
        }
    return out


def alternating(blocks: int = 300, block_steps: int = 100, record_shapes: bool = True) -> dict:
    """Median ratio (steps per second recording / not recording) over adjacent blocks."""
    step = build()
    fixed_time(step, 0.3)  # warm up
    clock = time.perf_counter_ns
    ratios = []
    with profile(record_shapes=record_shapes, registry=RunRegistry()) as p:
        recorder = hooks.active
        for _ in range(5 * block_steps):  # the first calls set the recorder's caches up
            step()
        try:
            for _ in range(blocks):
                hooks.set_active(None)
                t0 = clock()
                for _ in range(block_steps):
                    step()
                t1 = clock()
                hooks.set_active(recorder)
                for _ in range(block_steps):
                    step()
                ratios.append((t1 - t0) / (clock() - t1))
        finally:
            hooks.set_active(recorder)  # the profiler stops the way it started
    recorded = blocks * block_steps + 5 * block_steps
    return {
        "ratio": statistics.median(ratios),
        "events_per_step": p.run.num_events / recorded,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=0.3, help="length of one run")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="0.2-s runs, 3 rounds (smoke run)")
    ap.add_argument("--alternate", action="store_true", help="blocks with and without recording")
    ap.add_argument("--blocks", type=int, default=300)
    ap.add_argument("--block-steps", type=int, default=100)
    args = ap.parse_args()
    if args.alternate:
        print(f"one profiler, {args.blocks} pairs of {args.block_steps}-step blocks")
        print("| record_shapes | steps/s recording ÷ not recording (median of pairs) | events |")
        print("| --- | ---: | ---: |")
        for shapes in (True, False):
            r = alternating(args.blocks, args.block_steps, shapes)
            print(f"| {shapes} | {r['ratio']:.3f} | {r['events_per_step']:.1f} |")
        return
    seconds, rounds = (0.2, 3) if args.quick else (args.seconds, args.rounds)
    res = observer_effect(seconds, rounds)
    print(f"fixed-time training loop, {rounds} rounds of {seconds:g} s per mode")
    print("| mode | steps/s (wall) | steps per CPU s | ratio to off, wall | ratio, CPU | events |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for mode, r in res.items():
        print(
            f"| {mode} | {r['wall_rate']:.0f} | {r['cpu_rate']:.0f} | {r['wall_ratio']:.3f} | "
            f"{r['cpu_ratio']:.3f} | {r['events_per_step']:.1f} |"
        )


if __name__ == "__main__":
    main()
