"""``python -m everyo info [--json]``: print the environment record every benchmark stores."""

from __future__ import annotations

import argparse
import json

from everyo.environment_record import environment, format_environment


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the record as JSON (the same dict as everyo.environment())",
    )


def run(args: argparse.Namespace) -> int:
    env = environment()
    print(json.dumps(env, indent=2) if args.json else format_environment(env))
    return 0
