"""A training step's time over a long run, with subnormal floats flushed to zero (the engine's
default) and computed as IEEE arithmetic does (``eo.set_flush_denormal(False)``).

    python benchmarks/long_training.py [--quick] [--steps N] [--optimizer adam|sgd]

The workload is ``peers.py``'s 784-256-256-10 MLP at batch 64 (``engine_step.py``'s weights,
data and Adam), trained on its one fixed batch of random data until it fits it. Two copies (same
weights, same data) train side by side in alternating blocks of 500 steps, one in each mode;
each block is timed in CPU time of the thread (BLAS on one thread) and the off / on ratio is
taken per pair of blocks. At each block's end: the copies' losses, and how many of the IEEE
copy's softmax probabilities (64 x 10) are subnormal, the values the backward pass's subnormals
come from. ``--optimizer sgd`` trains with ``engine_step.py``'s SGD instead.

Then what the flushing scope costs a normal step (a fresh model, no subnormals anywhere): the
32x64-64-10 and the 784-256-256-10 steps with the mode on and off, interleaved rounds (the
order alternates), median of the paired ratios with their inter-quartile range; and the scope
itself (``float_mode.begin()`` and ``end()``), which a step enters twice.
"""

from __future__ import annotations

import os
import time
import timeit

import numpy as np
from engine_step import Framework, everyo_model, init_weights, make_data
from suite import CLOCK, Section, median, one_thread, paired_ratio, spread

import everyo as eo
from everyo.core import float_mode

BLOCK = 500
SIZES, BATCH = [784, 256, 256, 10], 64


def make(sizes=SIZES, batch=BATCH, optimizer="adam"):
    """``engine_step.py``'s everyo MLP step (its weights, data and hyper-parameters, as
    ``peers.py`` trains it) and the model's parameters; the same every call."""
    weights = init_weights(sizes)
    x, y = make_data(batch, (sizes[0],), sizes[-1])
    impl = Framework(eo, everyo_model("mlp", sizes), weights, optimizer)
    ex, ey = eo.tensor(x), eo.tensor(y)

    def logits():
        with eo.no_grad():
            return impl.model(ex).numpy()

    return (lambda: impl.step(ex, ey)), logits


def subnormal_probabilities(logits) -> int:
    """Softmax probabilities of the batch that are subnormal (nonzero, below the smallest
    normal): where the backward pass's subnormals come from."""
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return int(((p < np.finfo(p.dtype).tiny) & (p != 0)).sum())


def timed_block(step, flush: bool, steps: int):
    """CPU and wall seconds per step of ``steps`` steps in one mode, and the last loss."""
    eo.set_flush_denormal(flush)
    try:
        c0, w0 = CLOCK(), time.perf_counter()
        for _ in range(steps):
            loss = step()
        return (CLOCK() - c0) / steps, (time.perf_counter() - w0) / steps, float(loss.item())
    finally:
        eo.set_flush_denormal(True)


def long_run(total: int, optimizer: str, block: int = BLOCK) -> list[dict]:
    """Both copies trained ``total`` steps in alternating blocks; one dict per pair of blocks."""
    on_step, _ = make(optimizer=optimizer)
    off_step, off_logits = make(optimizer=optimizer)
    rows = []
    for i in range(total // block):
        order = (True, False) if i % 2 == 0 else (False, True)
        got = {flush: timed_block(on_step if flush else off_step, flush, block) for flush in order}
        rows.append({
            "steps": (i + 1) * block,
            "on": got[True][0], "off": got[False][0],
            "wall_on": got[True][1], "wall_off": got[False][1],
            "loss_on": got[True][2], "loss_off": got[False][2],
            "subnormal_p_off": subnormal_probabilities(off_logits()),
        })  # fmt: skip
    return rows


def step_cost(rounds: int, steps: int) -> dict[str, tuple[list[float], list[float]]]:
    """CPU seconds per step, mode on and off, per round, for a normal (fresh) model's step."""
    out = {}
    for name, sizes, batch in (("32×64-64-10", [64, 64, 10], 32), ("784-256-256-10", SIZES, BATCH)):
        on_step, _ = make(sizes, batch)
        off_step, _ = make(sizes, batch)
        timed_block(on_step, True, steps)  # warm-up
        timed_block(off_step, False, steps)
        on, off = [], []
        for r in range(rounds):
            order = (True, False) if r % 2 == 0 else (False, True)
            for flush in order:
                t = timed_block(on_step if flush else off_step, flush, steps)[0]
                (on if flush else off).append(t)
        out[name] = (on, off)
    return out


def scope_ns() -> float:
    """Nanoseconds of one ``begin()`` / ``end()`` pair with the mode on."""
    n, names = 200_000, {"begin": float_mode.begin, "end": float_mode.end}
    best = min(timeit.repeat("begin(); end()", number=n, repeat=5, globals=names)) / n
    empty = min(timeit.repeat("pass", number=n, repeat=5)) / n
    return (best - empty) * 1e9


def section(quick: bool = False, steps: int | None = None, optimizer: str = "adam") -> Section:
    total = steps or (1_000 if quick else 14_000)
    block = 250 if quick else BLOCK
    s = Section(
        "long_training",
        "A training step over a long run: subnormals flushed (default) and IEEE",
        f"`long_training.py`: the 784-256-256-10 MLP, batch 64, {optimizer}, one fixed batch; two "
        f"copies in alternating blocks of {block} steps, one with `set_flush_denormal(True)`, "
        "one with `False`. CPU time of the thread per step, one BLAS thread; IEEE / flushed is "
        "the ratio of each pair of blocks. Subnormal p: the IEEE copy's softmax probabilities "
        "(64 × 10) that are subnormal after its block.",
        ["steps", "flushed ms/step", "IEEE ms/step", "IEEE / flushed", "subnormal p",
         "losses (flushed, IEEE)"],
    )  # fmt: skip
    load0 = os.getloadavg()
    with one_thread():
        rows = long_run(total, optimizer, block)
        costs = step_cost(3 if quick else 21, 20 if quick else 200)
        scope = scope_ns()
    load1 = os.getloadavg()
    for r in rows:
        if r["steps"] % (2 * block) and r is not rows[-1]:
            continue  # every other pair of blocks keeps the table short; the notes use all
        s.row(r["steps"], f"{r['on'] * 1e3:.3f}", f"{r['off'] * 1e3:.3f}",
              f"{r['off'] / r['on']:.2f}", r["subnormal_p_off"],
              f"{r['loss_on']:.3g}, {r['loss_off']:.3g}")  # fmt: skip
    first = [r for r in rows if not r["subnormal_p_off"]]
    later = [r for r in rows if r["subnormal_p_off"]]
    if later:
        s.notes.append(
            f"IEEE copy: subnormal probabilities from step {later[0]['steps']} on; its step then "
            f"took {median([r['off'] for r in later]) * 1e3:.3f} ms (median over "
            f"{len(later)} blocks) against {median([r['off'] for r in first]) * 1e3:.3f} ms "
            f"before; the flushed copy's step {median([r['on'] for r in later]) * 1e3:.3f} ms "
            f"against {median([r['on'] for r in first]) * 1e3:.3f} ms."
        )
    else:
        s.notes.append(f"no subnormal probabilities in the IEEE copy within {total} steps")
    same = sum(r["loss_on"] == r["loss_off"] for r in rows)
    s.notes.append(f"losses of the two copies equal at {same} of {len(rows)} block ends")
    for name, (on, off) in costs.items():
        s.notes.append(
            f"normal step {name}: flushed {median(on) * 1e6:.1f} µs, IEEE "
            f"{median(off) * 1e6:.1f} µs, flushed / IEEE {paired_ratio(on, off):.3f} "
            f"({spread(on, off)}, {len(on)} rounds)"
        )
    s.notes.append(f"the scope (`begin()` + `end()`, twice a step): {scope:.0f} ns")
    s.notes.append(
        "load average (1 min) {:.2f} at the start, {:.2f} at the end; wall / CPU time of the "
        "blocks {:.2f} (median)".format(
            load0[0], load1[0], median([r["wall_on"] / r["on"] for r in rows])
        )
    )
    return s


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")  # engine_step's
    a = ap.parse_args()
    print(section(a.quick, a.steps, a.optimizer).markdown("printed, not saved"))
