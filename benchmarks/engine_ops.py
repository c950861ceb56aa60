"""Engine per-op overhead against NumPy and PyTorch CPU, and large ops against NumPy.

    python benchmarks/engine_ops.py [--quick]      (the same as: run.py --only ops)

- The per-op table of issue 14: 8x8 float32 operands, one thread, ``a + b``, ``a @ b``,
  ``relu(a)``, ``a.sum()`` and ``a + b`` building a graph, each timed as a statement in
  ``timeit``'s loop, NumPy / everyo / torch interleaved in every repeat. Targets (TARGETS.md,
  Engine): everyo at most torch's time for every op; ``a + b`` at most 3x NumPy's.
- A 1024x1024 float32 matmul (target <= 1.02x NumPy) and an elementwise chain forward and
  backward (512x512) against the same NumPy calls with the gradient written by hand.
- ``import everyo`` in a fresh interpreter (target <= 0.3 s).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from suite import (
    Section,
    interleaved,
    interleaved_stmts,
    median,
    one_thread,
    optional,
    paired_ratio,
    script_main,
    spread,
    us,
    verdict,
)

import everyo as eo

# (label, NumPy statement, everyo statement, torch statement)
PER_OP = [
    ("`a + b`", "a + b", "ea + eb", "ta + tb"),
    ("`a @ b`", "a @ b", "ea @ eb", "ta @ tb"),
    ("`relu(a)`", "np.maximum(a, 0)", "relu(ea)", "trelu(ta)"),
    ("`a.sum()`", "a.sum()", "ea.sum()", "ta.sum()"),
    ("`a + b` building a graph", None, "ga + eb", "tga + tb"),
]


def per_op(section: Section, quick: bool) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 8), dtype=np.float32)
    b = rng.standard_normal((8, 8), dtype=np.float32)
    ns = {"np": np, "a": a, "b": b, "ea": eo.tensor(a), "eb": eo.tensor(b), "relu": eo.relu}
    ns["ga"] = eo.tensor(a, requires_grad=True)
    torch = optional("torch")
    if torch is not None:
        ns.update(ta=torch.from_numpy(a.copy()), tb=torch.from_numpy(b.copy()), trelu=torch.relu)
        ns["tga"] = torch.from_numpy(a.copy()).requires_grad_(True)
    else:
        section.notes.append("torch is not installed: the torch column and its targets skipped")
    np.testing.assert_allclose((ns["ea"] @ ns["eb"]).numpy(), a @ b, rtol=1e-5)
    repeats, number = (3, 2_000) if quick else (15, 20_000)
    for label, np_stmt, eo_stmt, t_stmt in PER_OP:
        stmts = {"everyo": eo_stmt}
        if np_stmt:
            stmts["numpy"] = np_stmt
        if torch is not None:
            stmts["torch"] = t_stmt
        with one_thread():
            t = interleaved_stmts(stmts, ns, repeats, number)
        e = t["everyo"]
        cells = [label, us(median(t["numpy"])) if np_stmt else "–", us(median(e))]
        if torch is not None:
            r = paired_ratio(e, t["torch"])
            cells += [us(median(t["torch"])), f"{r:.2f}× ({spread(e, t['torch'])})"]
            target = f"≤ torch: {verdict(r, 1.0)}"
        else:
            cells += ["–", "–"]
            target = "≤ torch: not measured"
        if np_stmt:
            rn = paired_ratio(e, t["numpy"])
            cells.append(f"{rn:.2f}×")
            if label == "`a + b`":
                target += f"; ≤ 3× NumPy: {verdict(rn, 3.0)}"
        else:
            cells.append("–")
        section.row(*cells, target)


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
        e = np.exp(x * 2 + 1)
        q = e / y
        out = q.sum()
        g = np.ones_like(q)
        gq_y = g / y
        gy = -g * q / y
        gx = (gq_y * e) * 2
        return out, gx, gy

    return engine, numpy_fn


def import_seconds(runs: int = 5, module: str = "everyo") -> float:
    """Median wall time of ``import <module>`` in a fresh interpreter."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = []
    for _ in range(runs):
        res = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        out.append(float(res.stdout.strip()))
    return median(out)


def section(quick: bool = False) -> Section:
    s = Section(
        "ops",
        "Engine: per-op overhead and large ops",
        "8×8 float32 operands, one thread (BLAS and torch), each op a statement in `timeit`'s "
        "loop, timed in CPU time of the thread; NumPy, everyo and torch 2.13 CPU interleaved in "
        "every repeat. Times are medians of the repeats; ratios are medians of the per-repeat "
        "ratios, with their inter-quartile range in brackets (the machine's noise). Large ops: "
        "everyo / NumPy.",
        ["op", "NumPy µs", "everyo µs", "torch µs", "everyo / torch", "everyo / NumPy", "target"],
    )
    per_op(s, quick)
    repeats = 3 if quick else 15
    pairs = {"1024×1024 float32 matmul": matmul_pair(256 if quick else 1024)}
    pairs["elementwise chain forward + backward, 512×512"] = chain_pair()
    for name, (engine, numpy_fn) in pairs.items():
        with one_thread():
            t = interleaved({"e": engine, "n": numpy_fn}, repeats, 1 if not quick else 2)
        r = paired_ratio(t["e"], t["n"])
        target = f"≤ 1.02×: {verdict(r, 1.02)}" if "matmul" in name else "–"
        label = name if not quick else f"{name} (quick: smaller)"
        s.row(label, f"{median(t['n']) * 1e3:.3f} ms", f"{median(t['e']) * 1e3:.3f} ms", "–", "–",
              f"{r:.3f}× ({spread(t['e'], t['n'])})", target)  # fmt: skip
    imp = import_seconds(1 if quick else 5)
    imp_np = import_seconds(1 if quick else 5, "numpy")
    label = "`import everyo`, fresh interpreter (NumPy column: `import numpy` alone)"
    target = f"≤ 0.3 s: {verdict(imp, 0.3)}"
    s.row(label, f"{imp_np:.3f} s", f"{imp:.3f} s", "–", "–", "–", target)
    return s


def main(argv=None) -> None:
    script_main(section, __doc__, argv)


if __name__ == "__main__":
    main()
