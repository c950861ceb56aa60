"""The profiler's command-line options, declared once for ``python -m everyo profile`` and the
``%%everyo_profile`` magic.

Each option's ``dest`` is the Python API's keyword (``Profiler(warmup=..., record_shapes=...)``,
``summary(group_by=..., top=...)``; ``sort`` is ``sort_by``, ``chrome_trace`` the path given
to ``export_chrome_trace``). The first flag is the canonical name; later ones are aliases kept
for old command lines (``--export`` for ``--chrome-trace``). Each front end turns a
:attr:`Option.kind` into its own argparse ``type`` (the magic reports a bad value as a usage
message, the CLI as an ``EveryOConfigError``), so the checks differ in wording only.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NamedTuple

from everyo.profiler.analysis import schema

__all__ = [
    "OPTIONS",
    "Option",
    "add_options",
    "flag_used",
    "option_for",
    "profiler_kwargs",
    "sample_interval",
    "sample_mode",
    "takes_value",
]


class Option(NamedTuple):
    """One option: ``flags`` (canonical first), ``dest``, ``kind``, ``default``, ``help``.

    ``kind`` is ``"flag"`` (sets ``True``), ``"no"`` (sets ``False``: ``--no-shapes`` clears
    ``record_shapes``), ``"count"`` (whole number >= 0), ``"positive"`` (whole number >= 1),
    ``"group_by"``, ``"sort"``, ``"threads"`` (``auto``, ``keep`` or a number: the thread policy
    the front end applies around the profiled code, not a ``Profiler`` keyword), ``"path"``,
    ``"text"``, ``"sample"`` (an interval in ms,
    the value optional: ``--sample`` alone means 1 ms) or ``"sample_mode"`` (wall or cpu).
    The last two parse the same way in every front end (:func:`sample_interval`,
    :func:`sample_mode`).
    """

    flags: tuple[str, ...]
    dest: str
    kind: str
    default: object
    help: str
    metavar: str | None = None


OPTIONS = (
    Option(("--warmup",), "warmup", "count", 0, "skip the first N recorded events", "N"),
    Option(("--no-shapes",), "record_shapes", "no", True, "do not record input/output shapes"),
    Option(("--record-ops",), "record_ops", "flag", False, "also record every op (FLOPs, bytes)"),
    Option(
        ("--profile-memory",),
        "profile_memory",
        "flag",
        False,
        "bytes allocated per event, live tensor bytes and peak",
    ),
    Option(
        ("--sample",),
        "sample",
        "sample",
        None,
        "also sample Python stacks every MS milliseconds (default 1) and show the hot lines "
        "of the top rows",
        "MS",
    ),
    Option(
        ("--sample-mode",),
        "sample_mode",
        "sample_mode",
        "wall",
        "weigh samples by wall time (wall, waits included) or CPU time (cpu)",
        "MODE",
    ),
    Option(
        ("--no-torch",),
        "torch",
        "no",
        True,
        "leave PyTorch alone (by default its modules, backward passes, optimizer steps and "
        "data batches are recorded when torch is imported)",
    ),
    Option(
        ("--torch-sync",),
        "torch_sync",
        "flag",
        False,
        "synchronise CUDA at each torch module's start and end (per-layer GPU time, slower)",
    ),
    Option(("--label",), "label", "text", None, "name of the run in everyo.profiler.runs", "NAME"),
    Option(("--top",), "top", "positive", None, "show the N largest table rows", "N"),
    Option(
        ("--sort",),
        "sort",
        "sort",
        "total_ms",
        "table sort column (total_ms, self_ms, calls, mean_ms, ...)",
        "KEY",
    ),
    Option(("--group-by",), "group_by", "group_by", "name", " | ".join(schema.GROUP_BY), "KEY"),
    Option(
        ("--threads",),
        "threads",
        "threads",
        "auto",
        "BLAS/OpenMP threads while profiling: auto (limit them to the cores other processes "
        "leave free when those are busy), N, or keep",
        "N",
    ),
    Option(
        ("--chrome-trace", "--export"),
        "chrome_trace",
        "path",
        None,
        "also write a Chrome/Perfetto trace to PATH (.json or .json.gz)",
        "PATH",
    ),
)
"""The options the CLI and the magic share, in the order ``--help`` lists them."""


def sample_interval(text: str) -> float:
    """``--sample``'s value: milliseconds between samples (argparse ``type``)."""
    from everyo.profiler.sampling.sampler import MIN_INTERVAL_MS

    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not MIN_INTERVAL_MS <= value <= 10_000:
        raise argparse.ArgumentTypeError(
            f"--sample takes the interval in milliseconds, from {MIN_INTERVAL_MS} to 10000 "
            f"(or nothing, for 1 ms), got {text!r}"
        )
    return value


def sample_mode(text: str) -> str:
    """``--sample-mode``'s value (argparse ``type``)."""
    if text not in ("wall", "cpu"):
        raise argparse.ArgumentTypeError(
            f"--sample-mode takes wall (time spent, waits included) or cpu (CPU time only), "
            f"got {text!r}"
        )
    return text


def add_options(
    parser: argparse.ArgumentParser, types: dict[str, Callable[[str], object]] | None = None
) -> None:
    """Add :data:`OPTIONS` to ``parser``; ``types`` maps a kind to an argparse ``type``."""
    types = {"sample": sample_interval, "sample_mode": sample_mode, **(types or {})}
    for opt in OPTIONS:
        if opt.kind == "sample":  # the value is optional: `--sample` alone is 1 ms
            parser.add_argument(
                *opt.flags,
                dest=opt.dest,
                nargs="?",
                const=True,
                default=opt.default,
                type=types["sample"],
                metavar=opt.metavar,
                help=opt.help,
            )
            continue
        if opt.kind in ("flag", "no"):
            action = "store_true" if opt.kind == "flag" else "store_false"
            parser.add_argument(*opt.flags, dest=opt.dest, action=action, help=opt.help)
            continue
        kwargs = {"type": types[opt.kind]} if opt.kind in types else {}
        parser.add_argument(
            *opt.flags,
            dest=opt.dest,
            default=opt.default,
            metavar=opt.metavar,
            help=opt.help,
            **kwargs,
        )


def takes_value(flag: str) -> bool | None:
    """Whether ``flag`` (any alias) takes a value; ``None`` for a flag that is not ours."""
    for opt in OPTIONS:
        if flag in opt.flags:
            return opt.kind not in ("flag", "no")
    return None


def option_for(flag: str) -> Option | None:
    """The :class:`Option` a flag (or alias) names."""
    return next((opt for opt in OPTIONS if flag in opt.flags), None)


def flag_used(words: list[str], dest: str) -> str:
    """The flag the user typed for ``dest`` (an alias stays an alias in messages)."""
    opt = next(opt for opt in OPTIONS if opt.dest == dest)
    typed = [w.partition("=")[0] for w in words]
    return next((f for f in reversed(typed) if f in opt.flags), opt.flags[0])


def profiler_kwargs(ns: argparse.Namespace) -> dict:
    """The ``Profiler(...)`` keywords the parsed options set."""
    keys = ("warmup", "record_shapes", "record_ops", "profile_memory", "label", "sample")
    keys += ("sample_mode", "torch", "torch_sync")
    return {key: getattr(ns, key) for key in keys}
