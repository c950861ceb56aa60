"""``python -m everyo demo``: profile a small MLP and a small CNN, print the table, write a trace.

Everything runs on the CPU in a few seconds; open the trace in https://ui.perfetto.dev or
chrome://tracing.
"""

from __future__ import annotations

import argparse

import numpy as np

from everyo.cli.destination import check_destination
from everyo.errors import EveryOConfigError
from everyo.profiler.analysis import schema

DEFAULT_OUT = "everyo-demo.trace.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        default=DEFAULT_OUT,
        metavar="PATH",
        help=f"where to write the Chrome trace (default {DEFAULT_OUT})",
    )
    parser.add_argument("--steps", type=int, default=5, help="training steps per model")
    parser.add_argument("--top", type=int, default=None, metavar="N", help="rows to show")
    parser.add_argument(
        "--group-by", default="name", metavar="KEY", help=" | ".join(schema.GROUP_BY)
    )


def _check(args: argparse.Namespace) -> None:
    """Every option, before any work (the export path too)."""
    from everyo.profiler.analysis.schema import check_group_by

    if args.steps < 1:
        raise EveryOConfigError(
            f"--steps takes a whole number >= 1 (training steps per model), got {args.steps}"
        )
    if args.top is not None and args.top < 1:
        raise EveryOConfigError(f"--top takes a whole number >= 1, got {args.top}")
    check_group_by(args.group_by, "--group-by")
    check_destination(args.out, "--out")


def _train(model, loader, steps: int) -> float:
    import everyo as eo

    loss_fn = eo.CrossEntropyLoss()
    opt = eo.optim.Adam(model.parameters(), lr=1e-3)
    loss, step = None, 0
    while step < steps:  # as many epochs as the steps need
        for xb, yb in loader:
            if step == steps:
                break
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            step += 1
    return float(loss.item()) if loss is not None else float("nan")


def build_models():
    """The demo's two models: an MLP on 32 features and a CNN on 1x16x16 images."""
    import everyo as eo

    mlp = eo.Sequential(
        eo.Linear(32, 128, seed=0),
        eo.ReLU(),
        eo.Linear(128, 64, seed=1),
        eo.ReLU(),
        eo.Linear(64, 10, seed=2),
    )
    cnn = eo.Sequential(
        eo.Conv2d(1, 8, 3, padding=1, seed=3),
        eo.ReLU(),
        eo.MaxPool2d(2),
        eo.Conv2d(8, 16, 3, padding=1, seed=4),
        eo.ReLU(),
        eo.MaxPool2d(2),
        eo.Flatten(),
        eo.Linear(16 * 4 * 4, 10, seed=5),
    )
    return mlp, cnn


def _warm_up(model, x, y) -> None:
    """One forward and backward pass of ``model``, outside the record; its weights unchanged."""
    import everyo as eo

    with eo.no_grad():
        model(x)
    eo.CrossEntropyLoss()(model(x), eo.tensor(y)).backward()
    for p in model.parameters():
        p.grad = None


def run_demo(steps: int = 5):
    """Profile forward passes and ``steps`` training steps of both models, after one untimed
    pass of each, with BLAS threads limited to the cores other processes leave free
    (``threads="auto"``); return the profiler."""
    import everyo as eo
    from everyo.profiler import profile, record_function
    from everyo.thread_policy import ThreadPolicy

    rng = np.random.default_rng(0)
    x_tab = rng.standard_normal((256, 32)).astype(np.float32)
    x_img = rng.standard_normal((128, 1, 16, 16)).astype(np.float32)
    y_tab, y_img = rng.integers(0, 10, 256), rng.integers(0, 10, 128)
    mlp, cnn = build_models()
    tab = eo.DataLoader(eo.ArrayDataset(x_tab, y_tab), batch_size=32, shuffle=True, seed=0)
    img = eo.DataLoader(eo.ArrayDataset(x_img, y_img), batch_size=16, shuffle=True, seed=0)
    # the first calls pay once for what later ones reuse (BLAS threads starting, buffers the
    # allocator grows, code loaded): 7.8 ms for a Linear that then takes 0.02 ms, which made
    # mlp.inference read 7x slower than five training steps; they run before the record
    _warm_up(mlp, eo.tensor(x_tab[:32]), y_tab[:32])
    _warm_up(cnn, eo.tensor(x_img[:16]), y_img[:16])
    with ThreadPolicy("auto") as policy, profile(label="everyo demo") as profiler:
        profiler.run.watch_threads(policy.policy, policy.applied)
        with eo.no_grad(), record_function("mlp.inference", batch_size=256):
            mlp(eo.tensor(x_tab))
        with record_function("mlp.train", steps=steps, batch_size=32):
            _train(mlp, tab, steps)
        with eo.no_grad(), record_function("cnn.inference", batch_size=32):
            cnn(eo.tensor(x_img[:32]))
        with record_function("cnn.train", steps=steps, batch_size=16):
            _train(cnn, img, steps)
    return profiler


def run(args: argparse.Namespace) -> int:
    _check(args)
    steps = args.steps
    profiler = run_demo(steps)
    r = profiler.run
    print(f"everyo demo: an MLP and a CNN, forward and {steps} training steps each, on CPU")
    print(f"{r.num_events:,} events, wall {r.wall_ns / 1e6:.1f} ms\n")
    print(profiler.summary(group_by=args.group_by, top=args.top))
    path = profiler.export_chrome_trace(args.out)
    print(f"\nwrote {path}: open it in https://ui.perfetto.dev or chrome://tracing")
    return 0
