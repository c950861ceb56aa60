"""What profiling a PyTorch training step costs: everyo's torch adapter beside torch.profiler.

    python benchmarks/torch_cost.py [--quick]      (the same as: run.py --only torch)

Workloads, each a whole training step (a batch from a ``DataLoader``, forward, loss, backward,
optimizer step; SGD): a small MLP (64-128-128-10 at batch 32, about 250 us), a larger MLP
(784-256-256-10 at batch 64, about 1.3 ms) and a small CNN (two 3x3 convolutions and a linear
layer at batch 8 of 3x32x32, a few ms). Variants, run side by side in every round, their order
rotated from round to round: plain PyTorch; everyo with forward events only (module calls, no
shapes); everyo with everything on (the default profile: forward with shapes, backward per
module, optimizer steps, zero_grad, data waits); torch.profiler (CPU activities, no shapes);
and plain PyTorch again after a profile has started and stopped in the same round ("no profile
active": nothing of everyo may stay in torch's path). Each variant's round is a block of steps
timed one by one inside its profile, the block's 10th percentile kept (a profile's start and
stop, once per profile, are left out: torch.profiler's stop, which builds its event list, costs
far more than everyo's); a variant's cost is the median over the rounds of its figure over
plain PyTorch's in the same round (CPU time of the thread; one BLAS and torch thread).
"""

from __future__ import annotations

import os

from suite import CLOCK, Section, median, one_thread, optional, script_main, spread, verdict

TARGETS = {  # (workload, variant) -> the largest ratio to plain PyTorch allowed (issue 42)
    ("small MLP", "everyo forward only"): 1.03,
    ("small MLP", "everyo everything"): 1.08,
    ("large MLP", "everyo everything"): 1.03,
    ("small CNN", "everyo everything"): 1.03,
}
VARIANTS = (
    "plain",
    "everyo forward only",
    "everyo everything",
    "torch.profiler",
    "no profile active",
)


def _workloads(torch, quick: bool) -> dict:
    nn = torch.nn
    cnn = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 8 * 8, 10),
    )  # fmt: skip
    return {
        "small MLP": (
            nn.Sequential(
                nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10)
            ),  # fmt: skip
            (32, 64),
        ),
        "large MLP": (
            nn.Sequential(
                nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)
            ),  # fmt: skip
            (64, 784),
        ),
        "small CNN": (cnn, (8, 3, 32, 32)),
    }


class _Batches:
    """A dataset whose items are whole batches (``batch_size=None``: no collation), so the
    DataLoader's own per-batch path is in the step without a per-sample cost diluting it."""

    def __init__(self, torch, shape):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(shape, generator=g)
        self.y = torch.randint(0, 10, (shape[0],), generator=g)

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        return self.x, self.y


def _step_fn(torch, model, shape):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = torch.utils.data.DataLoader(_Batches(torch, shape), batch_size=None)
    batches = iter(loader)
    loss_fn = torch.nn.functional.cross_entropy

    def step():
        x, y = next(batches)
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return step


def _forward_only():
    """An everyo profile recording torch's module calls only (no shapes, backward or regions)."""
    import everyo.profiler as ep
    from everyo.profiler.torch import TorchAdapter

    class ForwardOnly:
        def __enter__(self):
            self.p = ep.Profiler(torch=False, record_shapes=False, registry=ep.RunRegistry())
            self.p.start()
            self.adapter = TorchAdapter(self.p._recorder, backward=False, regions=False)

        def __exit__(self, *exc):
            self.adapter.remove()
            self.p.stop()

    return ForwardOnly()


def _contexts(torch):
    import contextlib

    import everyo.profiler as ep

    def everything():
        return ep.Profiler(registry=ep.RunRegistry())

    def torch_profiler():
        return torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])

    def after_a_profile():
        with ep.Profiler(registry=ep.RunRegistry()):
            pass
        return contextlib.nullcontext()

    return {
        "plain": contextlib.nullcontext,
        "everyo forward only": _forward_only,
        "everyo everything": everything,
        "torch.profiler": torch_profiler,
        "no profile active": after_a_profile,
    }


def measure(torch, step, steps: int, rounds: int, contexts=None) -> dict[str, list[float]]:
    """Seconds per step of each variant, one entry per round (orders rotated): the 10th
    percentile of the round's steps, each timed alone, so that a step another job interrupted
    does not count (the machine is shared; PYTORCH_NOTES measured the same way). ``contexts``:
    name -> a function making the variant's context manager (default: this table's)."""
    contexts = contexts or _contexts(torch)
    names = list(contexts)
    for _ in range(max(1, steps // 4)):  # warm up: allocator, caches, first calls
        step()
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            block = []
            with contexts[name]():  # (started and stopped outside the timed span)
                for _ in range(steps):
                    t0 = CLOCK()
                    step()
                    block.append(CLOCK() - t0)
            block.sort()
            times[name].append(block[len(block) // 10])  # (other jobs inflate the rest)
    return times


def section(quick: bool) -> Section:
    sec = Section(
        "torch",
        "Profiling PyTorch: cost per training step (issue 42)",
        "Ratio of a training step's CPU time to plain PyTorch's in the same round (medians over "
        "rotated rounds; in brackets the inter-quartile range of the ratios). torch "
        "2.13 CPU, one thread. See `benchmarks/torch_cost.py` for the variants.",
        ["workload", "plain step", *[v for v in VARIANTS if v != "plain"]],
    )
    torch = optional("torch")
    if torch is None:
        sec.row("torch not installed", "–", *["skipped"] * (len(VARIANTS) - 1))
        return sec
    try:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "unknown"
    rounds = 3 if quick else 15
    with one_thread():
        torch.manual_seed(0)
        for name, (model, shape) in _workloads(torch, quick).items():
            step = _step_fn(torch, model, shape)
            t0 = CLOCK()
            step()
            once = max(CLOCK() - t0, 1e-5)
            budget = 0.01 if quick else 0.06  # seconds of steps per variant per round
            steps = max(3, min(400, int(budget / once)))
            times = measure(torch, step, steps, rounds)
            base = times["plain"]
            cells = []
            for variant in VARIANTS[1:]:
                ratios = [a / b for a, b in zip(times[variant], base)]
                r = median(ratios)
                cell = f"×{r:.3f} ({spread(times[variant], base)})"
                limit = TARGETS.get((name, variant))
                if limit is not None:
                    cell += f" ≤ ×{limit:.2f}: {verdict(r, limit)}"
                cells.append(cell)
            sec.row(name, f"{median(base) * 1e6:.0f} us", *cells)
    sec.notes.append(
        f"load average {load} (1, 5, 15 min) at the start: the machine was shared with other "
        "jobs; rerun on a quiet machine before reading small differences"
    )
    sec.notes.append(
        "each round times its steps one by one inside its profile and keeps their 10th "
        "percentile; starting and stopping a profile, once per profile, is left out "
        "(torch.profiler's stop, which builds its event list, is the larger of the two); the "
        "'no profile active' column is plain PyTorch after a profile stopped: its distance from "
        "×1.00 is the noise of this run"
    )
    return sec


if __name__ == "__main__":
    script_main(section, __doc__)
