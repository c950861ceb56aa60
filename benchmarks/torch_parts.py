"""What each part of everyo's torch adapter adds to a training step, the parts turned on one by
one in the same rotated rounds as ``torch_cost.py`` (which gives the suite's figures).

    python benchmarks/torch_parts.py [--workload "small MLP"] [--rounds 15]

Variants: plain PyTorch; everyo running without the adapter; module calls; with shapes; with
backward groups (the compiled per-parameter hook, and the pure-Python hook it replaced: the
fallback where the extension is not built); with regions (optimizer step, ``zero_grad``,
DataLoader batches); all of them; the default profile. Prints, per variant, the median ratio
to plain PyTorch and the median added time per step. One BLAS and torch thread; CPU time.
"""

from __future__ import annotations

import argparse
import contextlib
import os

from suite import median, one_thread
from torch_cost import _step_fn, _workloads, measure


def _adapter(ep, shapes: bool, backward: bool, regions: bool, python_hook: bool = False):
    from everyo.profiler.torch import TorchAdapter
    from everyo.profiler.torch import backward as torch_backward

    class Parts:
        def __enter__(self):
            self.saved = torch_backward._c
            if python_hook:
                torch_backward._c = None
            self.p = ep.Profiler(torch=False, record_shapes=shapes, registry=ep.RunRegistry())
            self.p.start()
            self.adapter = TorchAdapter(self.p._recorder, backward=backward, regions=regions)

        def __exit__(self, *exc):
            self.adapter.remove()
            self.p.stop()
            torch_backward._c = self.saved

    return Parts()


def variants(ep) -> dict:
    return {
        "plain": contextlib.nullcontext,
        "profile, no adapter": lambda: ep.Profiler(torch=False, registry=ep.RunRegistry()),
        "module calls": lambda: _adapter(ep, False, False, False),
        "+ shapes": lambda: _adapter(ep, True, False, False),
        "+ shapes + backward": lambda: _adapter(ep, True, True, False),
        "+ shapes + backward, Python hook": lambda: _adapter(ep, True, True, False, True),
        "+ shapes + regions": lambda: _adapter(ep, True, False, True),
        "all parts": lambda: _adapter(ep, True, True, True),
        "default profile": lambda: ep.Profiler(registry=ep.RunRegistry()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="small MLP")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    import torch

    import everyo.profiler as ep

    print(f"load average at the start: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with one_thread():
        torch.manual_seed(0)
        model, shape = _workloads(torch, False)[args.workload]
        step = _step_fn(torch, model, shape)
        times = measure(torch, step, 200, args.rounds, variants(ep))
    base = times["plain"]
    print(f"{args.workload}: plain step {median(base) * 1e6:.0f} us (CPU)")
    for name, values in times.items():
        ratio = median([a / b for a, b in zip(values, base)])
        added = median([a - b for a, b in zip(values, base)]) * 1e6
        print(f"  {name:34s} ×{ratio:.3f}  {added:+6.1f} us a step")
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
