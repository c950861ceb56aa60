"""The CLI and the magic read one declaration of the profiler options."""

from __future__ import annotations

import argparse

import pytest

from everyo.__main__ import build_parser as cli_parser
from everyo.cli.profile import split_script_args
from everyo.errors import EveryOProfilerError
from everyo.profiler.options import OPTIONS
from everyo_lab.magic import UsageProblem, build_parser, parse_options


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def test_both_front_ends_have_every_shared_option_and_alias():
    profile = cli_parser()._subparsers._group_actions[0].choices["profile"]
    shared = {flag for opt in OPTIONS for flag in opt.flags}
    assert shared <= _flags(build_parser())
    assert shared <= _flags(profile)


@pytest.mark.parametrize("flag", ["--chrome-trace", "--export"])
def test_the_trace_path_has_one_name_and_the_old_alias(flag, tmp_path):
    path = str(tmp_path / "t.json")
    assert parse_options(f"{flag} {path}").chrome_trace == path
    args = cli_parser().parse_args(["profile", "s.py", "1", flag, path, "--no-shapes"])
    assert split_script_args(args) == ["1"]
    assert args.chrome_trace == path and args.record_shapes is False


def test_a_bad_path_is_reported_under_the_flag_typed(tmp_path):
    with pytest.raises(UsageProblem, match="^--export: cannot write"):
        parse_options("--export nodir/x.json")
    with pytest.raises(UsageProblem, match="^--chrome-trace: cannot write"):
        parse_options("--chrome-trace nodir/x.json")


def test_a_bad_group_by_reads_the_same_everywhere():
    with pytest.raises(UsageProblem, match="group_by 'colour': use one of name, path, shape"):
        parse_options("--group-by colour")
    from everyo.cli.demo import _check

    args = argparse.Namespace(steps=1, top=None, group_by="colour", out="x.json")
    with pytest.raises(EveryOProfilerError, match="--group-by 'colour': use one of name"):
        _check(args)
