"""``python -m everyo bench SPEC``: time a callable, save or check a baseline, gate CI.

Exit codes: 0 (measured; no regression), 1 (a regression beyond the threshold), 2 (bad input,
reported by ``everyo.__main__``), 3 (the workload itself raised: nothing was timed or saved),
4 (inconclusive: the machine was busy, so the check could not tell; rerun on a quiet machine).

    python -m everyo bench mypkg.workloads:forward --save-baseline bench/forward.json
    python -m everyo bench mypkg.workloads:forward --baseline bench/forward.json --threshold 10

The callable is timed in ``--processes`` fresh worker processes, one after the other, and the
verdict counts the spread between them (see :mod:`everyo.bench.workers`).
"""

from __future__ import annotations

import argparse
import sys

from everyo.bench.workers import DEFAULT_PROCESSES, resolve_spec  # noqa: F401 - the CLI's API

REGRESSION = 1  # the check found a regression beyond the threshold
WORKLOAD_FAILED = 3  # the workload raised: a broken benchmark, not a slow one
MACHINE_BUSY = 4  # either side measured on a contended machine, or on a busy one


EXIT_CODES = (
    f"Exit codes: 0 measured, no regression; {REGRESSION} a regression beyond the threshold; "
    f"2 bad input; {WORKLOAD_FAILED} the workload itself raised; {MACHINE_BUSY} inconclusive: "
    "the machine was busy (either side measured on a contended machine, or on a busy one: the "
    "baseline and this check are separate runs and the load moves between them): rerun on a "
    "quiet machine."
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
    parser.add_argument(
        "--repeat", type=int, default=100, help="timed calls in each process (default 100)"
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=DEFAULT_PROCESSES,
        metavar="N",
        help=f"fresh worker processes to time it in, one after the other (default "
        f"{DEFAULT_PROCESSES}); the interval counts the spread between them, which is wider "
        "than the spread between calls. 1: one worker",
    )
    parser.add_argument(
        "--margin",
        metavar="PCT",
        default=None,
        help="a change smaller than this (percent) is never a regression or an improvement "
        "(default 5)",
    )
    parser.add_argument(
        "--statistic",
        choices=("auto", "min", "median", "mean"),
        default="auto",
        help="what --baseline compares: auto (default: each process's fastest call when both "
        "sides ran in several processes, else the median; interference only adds time, and "
        "moves every process of a run alike: see docs/benchmarking.md), min, median or mean",
    )
    parser.add_argument(
        "--min-time", type=float, default=None, help="keep timing until this many seconds"
    )
    parser.add_argument("--samples", type=int, default=None, help="samples per call (throughput)")
    parser.add_argument(
        "--threads",
        metavar="N",
        default="1",
        help="BLAS/OpenMP threads in each worker: 1 (default: worker processes with one BLAS "
        "thread each agree far better than with several; see docs/benchmarking.md), N, auto "
        "(the cores other processes leave free) or keep; set in each worker's environment "
        "before NumPy loads",
    )


def run(args: argparse.Namespace) -> int:
    from everyo.bench import check_regression, load
    from everyo.bench.regression import MACHINE_BUSY as BUSY_VERDICT
    from everyo.bench.regression import check_margin
    from everyo.bench.threshold import threshold_fraction
    from everyo.bench.timing import _check_options, check_count
    from everyo.bench.workers import WorkloadFailed, benchmark_in_workers
    from everyo.errors import EveryOBenchmarkError
    from everyo.thread_policy import parse_threads

    threads = parse_threads(args.threads)  # EveryOConfigError names the values it takes
    threshold_fraction(args.threshold, bare="percent")  # refuse a bad value before timing
    threshold = args.threshold.strip()  # percent: spelt so for check_regression
    threshold = threshold if threshold.endswith("%") else f"{threshold}%"
    margin = None if args.margin is None else threshold_fraction(args.margin, bare="percent")
    check_margin(margin)
    processes = check_count("--processes", args.processes, minimum=1)
    fn = resolve_spec(args.spec)
    baseline = load(args.baseline) if args.baseline else None  # fail before timing, not after
    if args.statistic == "min" and baseline is not None and 1 in (processes, baseline.processes):
        raise EveryOBenchmarkError(
            "--statistic min compares each worker process's fastest call, and "
            + ("--processes is 1" if processes == 1 else "the baseline holds one process")
            + ": measure both with several processes, or use --statistic median"
        )
    # every option is checked here, so an error from a worker below is the workload's own
    _check_options(fn, args.warmup, args.repeat, args.min_time, args.samples, "auto")
    try:
        result = benchmark_in_workers(
            args.spec,
            processes=processes,
            warmup=args.warmup,
            repeat=args.repeat,
            min_time=args.min_time,
            samples=args.samples,
            name=args.spec,
            threads=threads,
        )
    except WorkloadFailed as exc:
        print(f"error: {workload_failure(args.spec, exc.summary)}", file=sys.stderr)
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
    check = check_regression(
        result, baseline, threshold=threshold, margin=margin, statistic=args.statistic
    )
    print(check)
    if check.verdict == BUSY_VERDICT:
        return MACHINE_BUSY
    return 0 if check.passed else REGRESSION


def workload_failure(spec: str, summary: str) -> str:
    """One line: what the workload raised and where (``summary``, from
    :func:`everyo.bench.workers.failure_summary`)."""
    return (
        f"the workload {spec} raised {summary}; nothing was timed or saved (exit code "
        f"{WORKLOAD_FAILED}): call it once by hand to see the full traceback"
    )
