"""``%everyo_sweep MODEL MAKE_BATCH [options]``: a batch-size sweep in the cell, painted live.

The names are looked up in the notebook's namespace (dotted names too: ``lab.model``). The
sweep runs in the cell, as ``%%everyo_profile`` runs its cell, and shows two outputs with
display ids: the live :class:`~everyo_lab.widgets.sweep_widget.SweepWidget`, which gains each
point as it is measured, and its static rendering (charts as SVG, table, recommendation),
which hides itself while the widget is on screen and is what a saved notebook, nbconvert and a
terminal show. A kernel interrupt ends the sweep between two timed calls and keeps the finished
points.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys

from everyo_lab import magic_options as options

__all__ = ["build_sweep_parser", "parse_sweep_options", "sweep_line"]

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9}
_UNITS.update({"kib": 2**10, "mib": 2**20, "gib": 2**30, "k": 2**10, "m": 2**20, "g": 2**30})


def _batch_sizes(text: str):
    if text == "auto":
        return "auto"
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(
            f"use 'auto' or positive whole numbers separated by commas, e.g. 1,8,64 — got {text!r}"
        )
    return [int(p) for p in parts]


def _bytes(text: str) -> int:
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    unit = found.group(2).lower() if found else None
    if found is None or unit not in _UNITS:
        raise argparse.ArgumentTypeError(
            f"use a number of bytes, optionally with a unit (600000, 512MiB, 2GB) — got {text!r}"
        )
    value = int(float(found.group(1)) * _UNITS[unit])
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 bytes, got {text!r}")
    return value


def build_sweep_parser() -> argparse.ArgumentParser:
    """The option parser; names match ``everyo_lab.SweepWidget``'s keyword arguments."""
    p = options.Parser(
        prog="%everyo_sweep",
        add_help=True,
        allow_abbrev=False,
        description="Measure throughput, latency and peak memory across batch sizes, live.",
    )
    p.add_argument("model", metavar="MODEL", help="a model, or a step function step(batch)")
    p.add_argument("make_batch", metavar="MAKE_BATCH", help="make_batch(batch_size) -> batch")
    p.add_argument(
        "--batch-sizes",
        type=_batch_sizes,
        default="auto",
        metavar="1,8,64|auto",
        help="sizes to measure, or auto: powers of two until memory runs out, then a bisection",
    )
    p.add_argument("--mode", choices=("inference", "train"), default="inference")
    p.add_argument(
        "--memory-limit",
        type=_bytes,
        default=None,
        metavar="BYTES",
        help="a point whose peak needs more is out of memory (e.g. 600000 or 512MiB)",
    )
    p.add_argument("--label", default=None, metavar="NAME", help="name in everyo_lab.sweeps")
    p.add_argument("--warmup", type=options.non_negative_int, default=3, metavar="N")
    p.add_argument("--repeat", type=options.positive_int, default=10, metavar="N")
    p.add_argument("--max-batch", type=options.positive_int, default=8192, metavar="N")
    p.add_argument("--device", default=None, metavar="DEVICE", help="cpu, cuda, cuda:N, auto")
    p.add_argument(
        "--threads",
        type=options.threads_option,
        default="auto",
        metavar="N",
        help="BLAS/OpenMP threads: auto (the cores other processes leave free), N, or keep",
    )
    return p


def parse_sweep_options(line: str) -> argparse.Namespace:
    """Parse the magic's line; raises :class:`~everyo_lab.magic_options.UsageProblem` with the
    reason."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise options.UsageProblem(str(exc)) from None
    return build_sweep_parser().parse_args(words)


def sweep_usage(problem: str) -> str:
    text = build_sweep_parser().format_help()
    return f"%everyo_sweep: {problem}\n\n{text}" if problem else text


def lookup(namespace: dict, name: str, what: str):
    """``name`` (``model`` or ``lab.model``) from the notebook's namespace, or a usage problem."""
    if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", name):
        raise options.UsageProblem(f"{what} must be a name from the notebook, got {name!r}")
    head, *rest = name.split(".")
    if head not in namespace:
        raise options.UsageProblem(
            f"{what} {head!r} is not defined in the notebook: run the cell that defines it first"
        )
    value = namespace[head]
    for i, part in enumerate(rest):
        try:
            value = getattr(value, part)
        except AttributeError:
            owner = ".".join([head, *rest[:i]])
            raise options.UsageProblem(
                f"{owner} has no attribute {part!r} (looking up {name})"
            ) from None
    if not callable(value):
        raise options.UsageProblem(
            f"{what} {name} must be callable, but it is a {type(value).__name__}"
        )
    return value


def sweep_line(shell, line: str):
    """Run ``%everyo_sweep`` in ``shell``; see the module doc."""
    from everyo.errors import EveryOError
    from everyo_lab.widgets.sweep_widget import SweepWidget

    try:
        opts = parse_sweep_options(line)
        model = lookup(shell.user_ns, opts.model, "MODEL")
        make_batch = lookup(shell.user_ns, opts.make_batch, "MAKE_BATCH")
        widget = SweepWidget(
            model,
            make_batch,
            batch_sizes=opts.batch_sizes,
            mode=opts.mode,
            warmup=opts.warmup,
            repeat=opts.repeat,
            max_batch=opts.max_batch,
            memory_limit=opts.memory_limit,
            device=opts.device,
            label=opts.label,
            threads=opts.threads,
        )
    except options.UsageProblem as problem:
        print(sweep_usage(str(problem)), file=sys.stdout)
        return None
    except EveryOError as exc:  # a bad argument the sweep itself names (train with a model, ...)
        print(f"%everyo_sweep: {exc}", file=sys.stdout)
        return None
    widget.show()
    try:
        widget.run()
    except KeyboardInterrupt:
        raise options.CellFailed(
            f"interrupted: the {len(widget.result.rows)} finished points are shown above and "
            f"kept as everyo_lab.sweeps[{widget.label!r}].result"
        ) from None
    except Exception as exc:
        raise options.CellFailed(
            f"the sweep failed ({type(exc).__name__}: {exc}); the points measured before are "
            f"kept as everyo_lab.sweeps[{widget.label!r}].result"
        ) from None
    return None
