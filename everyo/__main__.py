"""``python -m everyo``: info | doctor | bench | profile | demo.

Each subcommand lives in its own module of :mod:`everyo.cli` with two functions,
``add_arguments(parser)`` and ``run(args) -> int`` (the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from everyo._version import __version__

COMMANDS = {
    "info": "print the environment record every benchmark stores",
    "doctor": "check Python, NumPy/BLAS, the machine's load, CuPy and the lab extras, with a fix "
    "for each problem",
    "bench": "time a callable (module:function), compare it to a baseline, gate CI on regressions",
    "profile": "run a Python script under the profiler and print the summary table",
    "demo": "profile a built-in example model and write everyo-demo.trace.json",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m everyo", description=__doc__.splitlines()[0].replace("``", "")
    )
    parser.add_argument("--version", action="version", version=f"everyo {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        module = importlib.import_module(f"everyo.cli.{name}")
        p = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "_run", None) is None:
        parser.print_help()
        return 2
    from everyo.errors import EveryOError

    try:
        return int(args._run(args) or 0)
    except EveryOError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `python -m everyo info | head`: the reader left; no traceback
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
