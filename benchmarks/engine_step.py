"""MLP training step (forward, cross-entropy, backward, Adam) through everyo, against the same step
hand-written in NumPy and, when ``import torch`` works, PyTorch CPU. Interleaved in one run.

    python benchmarks/engine_step.py [--rounds 15] [--steps 10] [--threads N] [--sizes small,large]

Targets (shared/TARGETS.md, Engine): everyo ≤ 1.1× NumPy, ≤ 1.2× PyTorch. Ratios are medians of
per-round ratios (each round times ``--steps`` steps of every implementation back to back), so
machine noise hits all of them alike. Before timing, the three implementations are checked to
give the same weights after a few steps.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

import everyo as eo

CONFIGS = {
    # name: (batch, [in, hidden..., classes])
    "small": (64, [64, 128, 10]),
    "medium": (128, [256, 512, 512, 10]),
    "large": (256, [784, 1024, 1024, 10]),
}
LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-8


def init_weights(sizes, seed=0):
    """PyTorch-layout (out, in) weights and biases, float32."""
    rng = np.random.default_rng(seed)
    out = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        out.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        out.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return out


def make_data(batch, sizes, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], batch)
    return x, y


# ---- NumPy, by hand -------------------------------------------------------------------------
class NumpyMLP:
    def __init__(self, weights):
        self.params = [w.copy() for w in weights]
        self.m = [np.zeros_like(w) for w in self.params]
        self.v = [np.zeros_like(w) for w in self.params]
        self.t = 0

    def step(self, x, y):
        ps = self.params
        n_layers = len(ps) // 2
        acts, pre = [x], []
        h = x
        for i in range(n_layers):
            z = h @ ps[2 * i].T + ps[2 * i + 1]
            pre.append(z)
            h = np.maximum(z, 0) if i < n_layers - 1 else z
            acts.append(h)
        logits = acts[-1]
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        rows = np.arange(len(y))
        loss = float(np.mean(np.log(s[:, 0]) - shifted[rows, y]))
        g = e / s
        g[rows, y] -= 1
        g /= len(y)
        grads = [None] * len(ps)
        for i in reversed(range(n_layers)):
            grads[2 * i] = g.T @ acts[i]
            grads[2 * i + 1] = g.sum(axis=0)
            if i:
                g = (g @ ps[2 * i]) * (pre[i - 1] > 0)
        self.t += 1
        c1, c2 = 1 - B1**self.t, 1 - B2**self.t
        for p, gr, m, v in zip(ps, grads, self.m, self.v):
            m *= B1
            m += (1 - B1) * gr
            v *= B2
            v += (1 - B2) * (gr * gr)
            p -= (LR / c1) * m / (np.sqrt(v) / math.sqrt(c2) + EPS)
        return loss


# ---- everyo ---------------------------------------------------------------------------------
class EveryoMLP:
    def __init__(self, weights, sizes):
        layers = []
        for i in range(len(sizes) - 1):
            layers.append(eo.Linear(sizes[i], sizes[i + 1], seed=0))
            if i < len(sizes) - 2:
                layers.append(eo.ReLU())
        self.model = eo.Sequential(*layers)
        for p, w in zip(self.model.parameters(), weights):
            p.data[...] = w
        self.opt = eo.optim.Adam(self.model.parameters(), lr=LR, betas=(B1, B2), eps=EPS)
        self.loss_fn = eo.CrossEntropyLoss()

    def step(self, x, y):
        self.opt.zero_grad()
        loss = self.loss_fn(self.model(x), y)
        loss.backward()
        self.opt.step()
        return loss

    @property
    def params(self):
        return [p.numpy() for p in self.model.parameters()]


# ---- PyTorch --------------------------------------------------------------------------------
def torch_impl(weights, sizes):
    try:
        import torch
    except ImportError:
        return None

    class TorchMLP:
        def __init__(self):
            layers = []
            for i in range(len(sizes) - 1):
                layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
                if i < len(sizes) - 2:
                    layers.append(torch.nn.ReLU())
            self.model = torch.nn.Sequential(*layers)
            with torch.no_grad():
                for p, w in zip(self.model.parameters(), weights):
                    p.copy_(torch.from_numpy(w))
            self.opt = torch.optim.Adam(self.model.parameters(), lr=LR, betas=(B1, B2), eps=EPS)
            self.loss_fn = torch.nn.CrossEntropyLoss()

        def step(self, x, y):
            self.opt.zero_grad()
            loss = self.loss_fn(self.model(x), y)
            loss.backward()
            self.opt.step()
            return loss

        @property
        def params(self):
            return [p.detach().numpy().copy() for p in self.model.parameters()]

    return TorchMLP(), torch


def check_same(impls, inputs, steps=3):
    for _ in range(steps):
        for name, impl in impls.items():
            impl.step(*inputs[name])
    ref = impls["numpy"].params
    for name, impl in impls.items():
        for a, b in zip(ref, impl.params):
            np.testing.assert_allclose(b, a, rtol=2e-3, atol=2e-5, err_msg=f"{name} differs")


def measure(config: str, rounds: int, steps: int) -> dict:
    batch, sizes = CONFIGS[config]
    weights = init_weights(sizes)
    x, y = make_data(batch, sizes)
    impls = {"numpy": NumpyMLP(weights), "everyo": EveryoMLP(weights, sizes)}
    inputs = {"numpy": (x, y), "everyo": (eo.tensor(x), eo.tensor(y))}
    torch_pair = torch_impl(weights, sizes)
    if torch_pair is not None:
        impls["torch"], torch = torch_pair
        inputs["torch"] = (torch.from_numpy(x), torch.from_numpy(y))
    check_same(impls, inputs)
    times: dict[str, list[float]] = {name: [] for name in impls}
    for _ in range(rounds):
        for name, impl in impls.items():
            args = inputs[name]
            start = time.perf_counter()
            for _ in range(steps):
                impl.step(*args)
            times[name].append((time.perf_counter() - start) / steps)
    row = {"config": config, "batch": batch, "sizes": "-".join(map(str, sizes))}
    for name, ts in times.items():
        row[f"{name}_ms"] = 1000 * statistics.median(ts)
    row["vs_numpy"] = statistics.median(e / n for e, n in zip(times["everyo"], times["numpy"]))
    if "torch" in times:
        row["vs_torch"] = statistics.median(e / t for e, t in zip(times["everyo"], times["torch"]))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=None, help="BLAS/torch threads")
    parser.add_argument("--sizes", default="small,medium,large")
    args = parser.parse_args()
    limiter = None
    if args.threads:
        from threadpoolctl import threadpool_limits

        limiter = threadpool_limits(args.threads)
        try:
            import torch

            torch.set_num_threads(args.threads)
        except ImportError:
            pass
    rows = [measure(c, args.rounds, args.steps) for c in args.sizes.split(",")]
    has_torch = any("vs_torch" in r for r in rows)
    head = "| config | batch | layers | NumPy ms | everyo ms | everyo/NumPy |"
    sep = "| --- | --- | --- | --- | --- | --- |"
    if has_torch:
        head += " torch ms | everyo/torch |"
        sep += " --- | --- |"
    print(head)
    print(sep)
    for r in rows:
        line = (
            f"| {r['config']} | {r['batch']} | {r['sizes']} | {r['numpy_ms']:.3f} | "
            f"{r['everyo_ms']:.3f} | {r['vs_numpy']:.3f}× |"
        )
        if has_torch:
            line += (
                f" {r.get('torch_ms', float('nan')):.3f} | {r.get('vs_torch', float('nan')):.3f}× |"
            )
        print(line)
    print("\ntargets: everyo/NumPy ≤ 1.1×, everyo/torch ≤ 1.2× (medians of per-round ratios)")
    if limiter is not None:
        limiter.unregister()


if __name__ == "__main__":
    main()
