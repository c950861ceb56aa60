"""``python -m everyo bench SPEC``: time a callable, save or check a baseline, gate CI.

Exit codes: 0 (measured; no regression), 1 (a regression beyond the threshold), 2 (bad input,
reported by ``everyo.__main__``), 3 (the workload itself raised: nothing was timed or saved),
4 (inconclusive: the machine was busy, so the check could not tell; rerun on a quiet machine).

    python -m everyo bench mypkg.workloads:forward --save-baseline bench/forward.json
    python -m everyo bench mypkg.workloads:forward --baseline bench/forward.json --threshold 10
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from typing import Any

from everyo.errors import EveryOBenchmarkError

REGRESSION = 1  # the check found a regression beyond the threshold
WORKLOAD_FAILED = 3  # the workload raised: a broken benchmark, not a slow one
MACHINE_BUSY = 4  # either side measured on a contended machine (or one quiet, one busy)


EXIT_CODES = (
    f"Exit codes: 0 measured, no regression; {REGRESSION} a regression beyond the threshold; "
    f"2 bad input; {WORKLOAD_FAILED} the workload itself raised; {MACHINE_BUSY} inconclusive: "
    "the machine was busy (either side measured on a contended machine, or one quiet and one "
    "busy): rerun on a quiet machine."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXIT_CODES  # a CI script's author reads them here, not in the docs
    parser.add_argument("spec", metavar="SPEC", help="the callable to time, as module:function")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--save-baseline", metavar="PATH", help="save the result as a baseline")
    where.add_argument("--baseline", metavar="PATH", help="compare with a saved baseline")
    parser.add_argument(
        "--threshold",
        metavar="PCT",
        default="10",
        help="slowdown in percent that counts as a regression: 10 or 10%% (default: 10); "
        "a value below 1 is refused, as it would read as a fraction",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the result as JSON")
    parser.add_argument("--warmup", type=int, default=10, help="untimed calls first (default 10)")
    parser.add_argument("--repeat", type=int, default=100, help="timed calls (default 100)")
    parser.add_argument(
        "--min-time", type=float, default=None, help="keep timing until this many seconds"
    )
    parser.add_argument("--samples", type=int, default=None, help="samples per call (throughput)")
    parser.add_argument(
        "--threads",
        metavar="N",
        default="auto",
        help="BLAS/OpenMP threads while timing: auto (default: the cores other processes leave "
        "free), N, or keep",
    )


def run(args: argparse.Namespace) -> int:
    from everyo.bench import benchmark, check_regression, load
    from everyo.bench.regression import MACHINE_BUSY as BUSY_VERDICT
    from everyo.bench.threshold import threshold_fraction
    from everyo.bench.timing import _check_options
    from everyo.thread_policy import parse_threads

    threads = parse_threads(args.threads)  # EveryOConfigError names the values it takes
    threshold_fraction(args.threshold, bare="percent")  # refuse a bad value before timing
    threshold = args.threshold.strip()  # percent: spelt so for check_regression
    threshold = threshold if threshold.endswith("%") else f"{threshold}%"
    fn = resolve_spec(args.spec)
    baseline = load(args.baseline) if args.baseline else None  # fail before timing, not after
    # every option is checked here, so an error from benchmark() below is the workload's own
    _check_options(fn, args.warmup, args.repeat, args.min_time, args.samples, "auto")
    try:
        result = benchmark(
            fn,
            warmup=args.warmup,
            repeat=args.repeat,
            min_time=args.min_time,
            samples=args.samples,
            name=args.spec,
            threads=threads,
        )
    except Exception as exc:  # noqa: BLE001 - any error of the workload is reported the same way
        print(f"error: {workload_failure(args.spec, exc)}", file=sys.stderr)
        return WORKLOAD_FAILED
    print(result)
    if args.json:
        result.to_json(args.json)
    if args.save_baseline:
        path = result.to_json(args.save_baseline)
        print(f"Baseline saved to {path}")
        if not result.trusted:
            print(
                "warning: this baseline was measured on a contended machine; checks against it "
                f"will be inconclusive (exit code {MACHINE_BUSY}): save it again when the "
                "machine is quiet"
            )
        return 0
    if baseline is None:
        return 0
    if baseline.name != result.name:
        print(f"note: the baseline was recorded for {baseline.name!r}, not {result.name!r}")
    check = check_regression(result, baseline, threshold=threshold)
    print(check)
    if check.verdict == BUSY_VERDICT:
        return MACHINE_BUSY
    return 0 if check.passed else REGRESSION


def workload_failure(spec: str, exc: BaseException) -> str:
    """One line: what the workload raised and where (the innermost frame of the user's code,
    outside everyo: an everyo error names the user's line that called everyo)."""
    where = _where(exc)
    return (
        f"the workload {spec} raised {type(exc).__name__}: {exc}{where}; nothing was timed or "
        f"saved (exit code {WORKLOAD_FAILED}): call it once by hand to see the full traceback"
    )


def _where(exc: BaseException) -> str:
    """`` at file.py:12 in fn``: the innermost frame of the user's code that ``exc`` passed."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frames = traceback.extract_tb(exc.__traceback__)
    frames = [f for f in frames if not f.filename.startswith("<frozen ")] or frames
    own = [f for f in frames if not os.path.abspath(f.filename).startswith(package + os.sep)]
    if not (own or frames):
        return ""
    last = (own or frames)[-1]
    return f" at {os.path.basename(last.filename)}:{last.lineno} in {last.name}"


def resolve_spec(spec: str) -> Any:
    """Import ``module:attribute`` (dots allowed in the attribute) and check it is callable."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise EveryOBenchmarkError(f"SPEC must look like 'package.module:function', got {spec!r}")
    # like `python -m`, resolve modules from the current directory as well
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj = importlib.import_module(module_name)
    except ImportError as exc:
        raise EveryOBenchmarkError(
            f"cannot import {module_name!r} from SPEC {spec!r} ({exc}); check the module path "
            "and run from the directory it is importable from"
        ) from exc
    except Exception as exc:  # noqa: BLE001 - the module's own code raised while imported
        where = _where(exc)
        raise EveryOBenchmarkError(
            f"importing {module_name!r} from SPEC {spec!r} raised {type(exc).__name__}: "
            f"{exc}{where}; nothing was timed (import it by hand to see the full traceback)"
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise EveryOBenchmarkError(f"{module_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise EveryOBenchmarkError(
            f"SPEC {spec!r} names a {type(obj).__name__}, not a callable; point it at a function "
            "that runs the workload once"
        )
    return obj
