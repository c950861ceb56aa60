"""A convolution's backward against its forward, and both against PyTorch CPU, at the shapes
users meet: the demo's CNN, docs/engine.md's example, the CNN training step of engine_step.py,
issue 35's conv stack, and the NHWC ``Conv2D`` (reference EveryO's layer) at the step's shapes.

    python benchmarks/conv_backward.py [--quick]      (the same as: run.py --only conv)

For each layer and framework: the forward with autograd on (it builds the graph node), and the
backward of that one layer (``backward(g)`` from its output: input gradient when the input needs
one, as in every layer but the first, weight and bias gradients). One thread (BLAS and torch),
rounds interleaved (everyo forward, everyo backward, torch forward, torch backward); times are
medians of CPU time, ratios medians of per-round ratios. Target (TARGETS.md, Engine): backward
at most 2.2x its forward.
"""

from __future__ import annotations

import numpy as np
from suite import Section, interleaved, median, one_thread, optional, paired_ratio, script_main

import everyo as eo

# name: (layer kind, input shape (N, C, H, W), out channels, stride, input needs a gradient)
SHAPES = {
    "demo conv 1 (16×1×16×16 → 8)": ("nchw", (16, 1, 16, 16), 8, 1, False),
    "demo conv 2 (16×8×8×8 → 16)": ("nchw", (16, 8, 8, 8), 16, 1, True),
    "docs/engine.md (8×3×32×32 → 16)": ("nchw", (8, 3, 32, 32), 16, 1, True),
    "CNN step conv 1 (32×3×32×32 → 8)": ("nchw", (32, 3, 32, 32), 8, 1, False),
    "CNN step conv 2 (32×8×16×16 → 16)": ("nchw", (32, 8, 16, 16), 16, 1, True),
    "issue 35 conv 1 (32×3×32×32 → 16)": ("nchw", (32, 3, 32, 32), 16, 1, False),
    "issue 35 conv 2 (32×16×16×16 → 32)": ("nchw", (32, 16, 16, 16), 32, 1, True),
    "stride 2 (32×16×16×16 → 32)": ("nchw", (32, 16, 16, 16), 32, 2, True),
    "NHWC Conv2D, step conv 2 (32×16×16×8 → 16)": ("nhwc", (32, 8, 16, 16), 16, 1, True),
}


def _layers(kind, c, o, stride, torch):
    if kind == "nhwc":
        e = eo.Conv2D(c, o, 3, stride=stride, padding=1, seed=0)
        t = None
        if torch is not None:  # the same layer in NCHW, weights (kh, kw, in, out) -> (out, in, ..)
            t = torch.nn.Conv2d(c, o, 3, stride=stride, padding=1)
            with torch.no_grad():
                t.weight.copy_(torch.from_numpy(e.weight.numpy().transpose(3, 2, 0, 1).copy()))
                t.bias.zero_()
        return e, t
    e = eo.Conv2d(c, o, 3, stride=stride, padding=1, seed=0)
    t = None
    if torch is not None:
        t = torch.nn.Conv2d(c, o, 3, stride=stride, padding=1)
        with torch.no_grad():
            t.weight.copy_(torch.from_numpy(e.weight.numpy()))
            t.bias.copy_(torch.from_numpy(e.bias.numpy()))
    return e, t


def _steps(kind, shape, o, stride, needs_grad, torch):
    """``{name: callable}``: forward and backward of the layer in everyo (and torch)."""
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    e, t = _layers(kind, shape[1], o, stride, torch)
    ex = eo.tensor(x.transpose(0, 2, 3, 1).copy() if kind == "nhwc" else x)
    ex.requires_grad = needs_grad
    out = e(ex)
    g = np.random.default_rng(1).standard_normal(out.shape).astype(np.float32)
    eg = eo.tensor(g)
    fns = {"everyo fwd": lambda: e(ex), "everyo bwd": lambda: e(ex).backward(eg)}
    if t is not None:
        tx = torch.from_numpy(x).requires_grad_(needs_grad)
        tg = torch.from_numpy(g.transpose(0, 3, 1, 2).copy() if kind == "nhwc" else g)
        got = t(tx).detach().numpy()
        want = out.numpy().transpose(0, 3, 1, 2) if kind == "nhwc" else out.numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        fns["torch fwd"] = lambda: t(tx)
        fns["torch bwd"] = lambda: t(tx).backward(tg)
    return fns


def section(quick: bool = False) -> Section:
    s = Section(
        "conv",
        "Engine: a convolution's backward against its forward, and against PyTorch CPU",
        "3×3 kernels, padding 1, one thread; forward with autograd on; backward of the layer "
        "alone, computed from a forward each time (bwd = (forward + backward) − forward, both "
        "measured). Medians of interleaved rounds (CPU time); ratios are medians of per-round "
        "ratios. Input gradient computed where the input needs one (every layer but a first).",
        ["layer", "everyo fwd ms", "everyo bwd ms", "bwd / fwd", "torch fwd ms", "torch bwd ms",
         "torch bwd / fwd", "everyo / torch (fwd + bwd)", "target bwd ≤ 2.2× fwd"],
    )  # fmt: skip
    torch = optional("torch")
    rounds, number = (2, 1) if quick else (11, 5)
    shapes = list(SHAPES.items())[:2] if quick else list(SHAPES.items())
    with one_thread():
        for name, (kind, shape, o, stride, needs_grad) in shapes:
            t = interleaved(_steps(kind, shape, o, stride, needs_grad, torch), rounds, number)
            ef, eb = t["everyo fwd"], [b - f for b, f in zip(t["everyo bwd"], t["everyo fwd"])]
            r = paired_ratio(eb, ef)
            cells = [name, f"{median(ef) * 1e3:.3f}", f"{median(eb) * 1e3:.3f}", f"{r:.2f}×"]
            if "torch fwd" in t:
                tf = t["torch fwd"]
                tb = [b - f for b, f in zip(t["torch bwd"], tf)]
                cells += [f"{median(tf) * 1e3:.3f}", f"{median(tb) * 1e3:.3f}",
                          f"{paired_ratio(tb, tf):.2f}×",
                          f"{paired_ratio(t['everyo bwd'], t['torch bwd']):.2f}×"]  # fmt: skip
            else:
                cells += ["–"] * 4
            cells.append("met" if r <= 2.2 else "**missed**")
            s.row(*cells)
    if torch is None:
        s.notes.append("torch is not installed: its columns skipped")
    return s


def main(argv=None) -> None:
    script_main(section, __doc__, argv)


if __name__ == "__main__":
    main()
