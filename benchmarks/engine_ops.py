"""Engine overhead against plain NumPy, measured in one run with interleaved repeats.

Run: ``python benchmarks/engine_ops.py [--repeats N]``. Prints a markdown table of median times
and ratios (engine / NumPy; TARGETS.md: matmul <= 1.02x, MLP step <= 1.1x, import <= 0.3 s).

Workloads:
- a 1024x1024 float32 matmul (``eo.matmul`` vs ``a @ b``);
- an elementwise chain ``((x * 2 + 1).exp() / y).sum()``, forward and backward, vs the same NumPy
  calls with the gradient written by hand;
- an MLP training step (linear-relu-linear, cross-entropy, backward, SGD) through the engine's
  ops vs a hand-written NumPy forward/backward, at a realistic size and at a tiny one where the
  engine's constant per-op cost (dispatch, graph node) is visible;
- ``import everyo`` in a fresh interpreter (absolute seconds).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

import everyo as eo


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(pairs: dict, repeats: int, warmup: int = 3) -> dict:
    """Median seconds per callable; the callables of each workload alternate every repeat so that
    machine noise hits both sides alike."""
    for _ in range(warmup):
        for fns in pairs.values():
            for fn in fns:
                fn()
    times = {name: ([], []) for name in pairs}
    for _ in range(repeats):
        for name, (engine, numpy_fn) in pairs.items():
            times[name][0].append(_time(engine))
            times[name][1].append(_time(numpy_fn))
    return {
        n: {"median": (statistics.median(a), statistics.median(b)), "min": (min(a), min(b))}
        for n, (a, b) in times.items()
    }


def matmul_pair(n=1024):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    ta, tb = eo.as_tensor(a), eo.as_tensor(b)
    return (lambda: eo.matmul(ta, tb)), (lambda: a @ b)


def chain_pair(shape=(512, 512)):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape, dtype=np.float32)
    y = rng.random(shape, dtype=np.float32) + 0.5
    tx = eo.tensor(x, requires_grad=True)
    ty = eo.tensor(y, requires_grad=True)

    def engine():
        tx.grad = ty.grad = None
        ((tx * 2 + 1).exp() / ty).sum().backward()

    def numpy_fn():  # the same forward calls, and the gradient by the chain rule
        h = x * 2
        u = h + 1
        e = np.exp(u)
        q = e / y
        out = q.sum()
        g = np.ones_like(q)
        gq_y = g / y
        gy = -g * q / y
        gx = (gq_y * e) * 2
        return out, gx, gy

    return engine, numpy_fn


def mlp_pair(batch=128, d_in=784, hidden=256, classes=10, lr=0.01):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((batch, d_in), dtype=np.float32)
    t = rng.integers(0, classes, batch)
    w1 = (rng.standard_normal((hidden, d_in)) * 0.05).astype(np.float32)
    b1 = np.zeros(hidden, np.float32)
    w2 = (rng.standard_normal((classes, hidden)) * 0.05).astype(np.float32)
    b2 = np.zeros(classes, np.float32)
    params_np = [w1.copy(), b1.copy(), w2.copy(), b2.copy()]
    params = [eo.tensor(p, requires_grad=True) for p in (w1, b1, w2, b2)]
    tx, tt = eo.as_tensor(x), eo.as_tensor(t)

    def engine():
        W1, B1, W2, B2 = params
        loss = eo.cross_entropy(eo.linear(eo.relu(eo.linear(tx, W1, B1)), W2, B2), tt)
        loss.backward()
        with eo.no_grad():
            for p in params:
                p.data -= lr * p.grad.data
                p.grad = None

    def numpy_fn():
        W1, B1, W2, B2 = params_np
        h = x @ W1.T
        h += B1
        a = np.maximum(h, 0)
        z = a @ W2.T
        z += B2
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        p = e / e.sum(axis=1, keepdims=True)
        loss = -np.log(p[np.arange(batch), t]).mean()
        p[np.arange(batch), t] -= 1
        gz = p / batch
        gW2, gB2 = gz.T @ a, gz.sum(0)
        ga = gz @ W2
        gh = ga * (h > 0)
        gW1, gB1 = gh.T @ x, gh.sum(0)
        for prm, g in zip(params_np, (gW1, gB1, gW2, gB2)):
            prm -= lr * g
        return loss

    return engine, numpy_fn


def import_seconds(runs: int = 5) -> float:
    """Median wall time of ``import everyo`` in a fresh interpreter."""
    code = "import time; t = time.perf_counter(); import everyo; print(time.perf_counter() - t)"
    out = []
    for _ in range(runs):
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)  # fmt: skip
        out.append(float(res.stdout.strip()))
    return statistics.median(out)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    results = interleaved(
        {
            "matmul 1024x1024 float32": matmul_pair(),
            "elementwise chain fwd+bwd (512x512)": chain_pair(),
            "MLP step 128x784-256-10 (ops + SGD)": mlp_pair(),
            "MLP step 32x64-64-10 (per-op overhead shows)": mlp_pair(32, 64, 64),
        },
        args.repeats,
    )
    targets = {"matmul": "<= 1.02x", "elementwise": "-", "MLP": "<= 1.1x"}
    print("| workload | everyo ms (median) | NumPy ms (median) | ratio (median) | ratio (best) "
          "| target |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for name, r in results.items():
        (eng, ref), (eng_min, ref_min) = r["median"], r["min"]
        target = next(v for k, v in targets.items() if name.startswith(k))
        print(f"| {name} | {eng * 1e3:.3f} | {ref * 1e3:.3f} | {eng / ref:.3f}x | "
              f"{eng_min / ref_min:.3f}x | {target} |")  # fmt: skip
    imp = import_seconds()
    print(f"| import everyo (fresh interpreter, s) | {imp:.3f} | - | - | - | <= 0.3 s |")
    return {"results": results, "import_s": imp}


if __name__ == "__main__":
    main()
