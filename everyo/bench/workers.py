"""Measure a workload in several fresh worker processes, as pyperf does.

Two processes running the same code can differ by far more than two calls in one process do:
where the memory landed, where BLAS's threads run, what the VM did. A confidence interval
computed from one process's calls is blind to that, so a comparison with a saved baseline (or a
result from yesterday) needs the spread between processes. :func:`benchmark_in_workers` starts
``processes`` fresh interpreters one after the other (never at once: they would contend), each
imports the workload by name (``module:function``), times it as :func:`~everyo.bench.benchmark`
does, and sends its result back; the combined result keeps the times per process.

A thread limit is set in each worker's environment (``OPENBLAS_NUM_THREADS``...) before NumPy
loads, so BLAS starts with that many threads rather than being limited at run time.

The worker side is ``python -m everyo.bench.worker REQUEST RESULT`` (two file paths):
:mod:`everyo.bench.worker`.
"""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
import tempfile
import traceback
import uuid
from pathlib import Path
from typing import Any

from everyo.bench.result import BenchmarkResult
from everyo.errors import EveryOBenchmarkError

__all__ = [
    "benchmark_in_workers",
    "resolve_spec",
    "spec_of",
    "WorkloadFailed",
    "DEFAULT_PROCESSES",
    "THREAD_VARIABLES",
]

DEFAULT_PROCESSES = 6
"""Worker processes per measurement (see docs/benchmarking.md for the measurements behind it)."""
THREAD_VARIABLES = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
"""What a worker's environment sets to limit its threads before BLAS and OpenMP start."""
WORKLOAD_FAILED = 3  # a worker's exit status when the workload raised (the CLI's exit code too)
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class WorkloadFailed(EveryOBenchmarkError):
    """The workload raised in a worker: ``summary`` says what and where, in one line."""

    def __init__(self, spec: str, summary: str):
        self.spec, self.summary = spec, summary
        super().__init__(f"the workload {spec} raised {summary}")


def benchmark_in_workers(
    spec: str,
    args: tuple = (),
    kwargs: dict | None = None,
    *,
    processes: int = DEFAULT_PROCESSES,
    warmup: int = 10,
    repeat: int = 100,
    min_time: float | None = None,
    samples: int | None = None,
    name: str | None = None,
    threads: Any = "auto",
    timeout: float | None = None,
    workload: dict | None = None,
) -> BenchmarkResult:
    """Time ``spec`` (``"module:function"``) in ``processes`` fresh worker processes in turn.

    Each worker makes ``warmup`` untimed calls and ``repeat`` timed ones (``min_time`` as in
    :func:`~everyo.bench.benchmark`); ``args``/``kwargs`` reach it pickled. ``threads`` is
    decided here, once: a limit (an integer, or what ``"auto"`` chooses from the machine's load
    now) is set in each worker's environment before NumPy loads. ``timeout`` bounds each
    worker (seconds; default: none, as an in-process benchmark has none). A worker
    that dies or hangs raises :class:`~everyo.errors.EveryOBenchmarkError` naming it; a workload
    that raises, :class:`WorkloadFailed`.
    """
    from everyo.bench.checks import check_count
    from everyo.machine_state import worst
    from everyo.thread_policy import check_threads, choose_threads

    processes = check_count("processes", processes, minimum=1)
    policy = check_threads(threads)
    limit = choose_threads(policy) if policy is not None else None
    env = dict(os.environ)
    if limit is not None:
        env.update({variable: str(limit) for variable in THREAD_VARIABLES})
    # the worker imports the workload as this process would: from the current directory too
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.getcwd(), env.get("PYTHONPATH", "")) if p)
    request = {
        "spec": spec,
        "args": args,
        "kwargs": kwargs or {},
        "warmup": warmup,
        "repeat": repeat,
        "min_time": min_time,
        "samples": samples,
        "name": name or spec,
        # the limit is already in the environment: the worker's policy only records it
        "threads": limit if limit is not None else policy,
    }
    results = []
    with tempfile.TemporaryDirectory(prefix="everyo-workers-") as folder:
        request_path = Path(folder) / "request.pickle"
        try:
            request_path.write_bytes(pickle.dumps(request))
        except Exception as exc:  # noqa: BLE001 - any pickling failure reads the same
            raise EveryOBenchmarkError(
                f"the arguments of {spec} cannot be sent to a worker process "
                f"({type(exc).__name__}: {exc}); pass picklable arguments, or build them "
                "inside the function"
            ) from None
        for index in range(processes):
            out = Path(folder) / f"result-{index}.pickle"
            results.append(_run_worker(spec, request_path, out, env, index, processes, timeout))
    first = results[0]
    machine = worst([r.machine_state for r in results])
    return BenchmarkResult(
        times=[t for r in results for t in r.times],
        name=first.name,
        warmup=first.warmup,
        repeat=first.repeat,
        min_time=first.min_time,
        samples=first.samples,
        synchronized=first.synchronized,
        workload=workload or first.workload,
        environment=first.environment,
        machine=None if machine is None else machine.to_dict(),
        process_times=[r.times for r in results],
        process=f"workers-{uuid.uuid4().hex[:12]}",  # (one run of workers: its own identity)
        reference=_joined_reference(results),
        thread_limit="environment"
        if limit is not None
        else "runtime"  # ("auto" in a worker that found the machine busier than this process)
        if any(r.thread_limit == "runtime" for r in results)
        else None,
    )


def _joined_reference(results: list[BenchmarkResult]) -> dict | None:
    """Each part of the reference (bench/reference.py), one list of times per worker."""
    from everyo.bench.reference import KINDS

    refs = [r.reference for r in results]
    if any(not ref or any(kind not in ref for kind in KINDS) for ref in refs):
        return None
    return {kind: [t for ref in refs for t in ref[kind]] for kind in KINDS}


def _run_worker(spec, request_path, out, env, index, processes, timeout) -> BenchmarkResult:
    """One worker: its result, or an error that names it and what it printed last."""
    command = [sys.executable, "-m", "everyo.bench.worker", str(request_path), str(out)]
    command += [] if index == 0 else ["--no-environment"]  # (the first worker's record serves)
    which = f"worker process {index + 1} of {processes} for {spec}"
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise EveryOBenchmarkError(
            f"{which} did not finish within {timeout:g} s and was stopped; time fewer calls "
            "(--repeat) or allow more time"
        ) from None
    if done.returncode == WORKLOAD_FAILED and out.exists():
        raise WorkloadFailed(spec, pickle.loads(out.read_bytes())["error"])
    if done.returncode != 0 or not out.exists():
        status = (
            f"was killed by signal {-done.returncode}"
            if done.returncode < 0
            else f"exited with status {done.returncode}"
        )
        last = (done.stderr or "").strip().splitlines()
        said = f": {last[-1]}" if last else " without a message"
        raise EveryOBenchmarkError(f"{which} {status} before sending its result{said}")
    return BenchmarkResult.from_dict(pickle.loads(out.read_bytes()))


def spec_of(fn: Any) -> str:
    """``"module:qualname"`` of a function a worker can import, or an error saying why not."""
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    what = getattr(fn, "__name__", type(fn).__name__)
    if not module or not qualname or "<" in qualname or module == "__main__":
        where = "a notebook or script's __main__" if module == "__main__" else "no module"
        local = "<lambda>" in (qualname or "") or "<locals>" in (qualname or "")
        raise EveryOBenchmarkError(
            f"processes= runs {what!r} in fresh worker processes, which import it by name, but "
            + (
                "it is a lambda or a function defined inside another"
                if local
                else f"it has {where}"
            )
            + ": define it at the top level of a module (a .py file next to the notebook) and "
            "import it from there"
        )
    spec = f"{module}:{qualname}"
    try:
        found = resolve_spec(spec)
    except EveryOBenchmarkError as exc:
        raise EveryOBenchmarkError(f"processes= cannot import {what!r} by name: {exc}") from None
    if found is not fn:
        raise EveryOBenchmarkError(
            f"processes= imports {spec}, which is not the object passed (a decorated or "
            "reassigned function?); pass the module-level function itself"
        )
    return spec


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
        raise EveryOBenchmarkError(
            f"importing {module_name!r} from SPEC {spec!r} raised {failure_summary(exc)}; "
            "nothing was timed (import it by hand to see the full traceback)"
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


def failure_summary(exc: BaseException) -> str:
    """``"ZeroDivisionError: division by zero at work.py:3 in f"``: the innermost frame of the
    user's code, outside everyo (an everyo error names the user's line that called everyo)."""
    frames = traceback.extract_tb(exc.__traceback__)
    frames = [f for f in frames if not f.filename.startswith("<frozen ")] or frames
    own = [f for f in frames if not os.path.abspath(f.filename).startswith(PACKAGE + os.sep)]
    where = ""
    if own or frames:
        last = (own or frames)[-1]
        where = f" at {os.path.basename(last.filename)}:{last.lineno} in {last.name}"
    return f"{type(exc).__name__}: {exc}{where}"
