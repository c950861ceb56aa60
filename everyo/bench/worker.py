"""The worker side of :func:`everyo.bench.workers.benchmark_in_workers`: ``python -m
everyo.bench.worker REQUEST RESULT`` reads the pickled request, imports the workload by name,
times it as :func:`~everyo.bench.benchmark` does and writes the result (or the workload's
error, exit status 3) to RESULT."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

from everyo.bench import reference
from everyo.bench.result import describe
from everyo.bench.timing import benchmark
from everyo.bench.workers import WORKLOAD_FAILED, failure_summary, resolve_spec

__all__ = ["main"]


def main(request_path: str, result_path: str, *flags: str) -> int:
    """Import, time, write the result (or the workload's error)."""
    request = pickle.loads(Path(request_path).read_bytes())
    fn = resolve_spec(request["spec"])  # (an import error is the worker's, reported as such)
    try:
        result = benchmark(
            fn,
            *request["args"],
            warmup=request["warmup"],
            repeat=request["repeat"],
            min_time=request["min_time"],
            samples=request["samples"],
            name=request["name"],
            threads=request["threads"],
            record_environment="--no-environment" not in flags,
            **request["kwargs"],
        )
    except Exception as exc:  # noqa: BLE001 - any error of the workload is reported the same way
        Path(result_path).write_bytes(pickle.dumps({"error": failure_summary(exc)}))
        return WORKLOAD_FAILED
    result.workload = describe(fn, request["args"], request["kwargs"])
    # the machine's own speed in this process, beside the workload (bench/reference.py)
    result.reference = {k: [v] for k, v in reference.measure().items()}
    Path(result_path).write_bytes(pickle.dumps(result.to_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
