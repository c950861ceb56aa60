"""The result of one benchmark: raw times, statistics, environment, workload; saved as JSON."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from everyo.bench.stats import NOISY_CV, OUTLIER_Z, STABLE_CV, outliers, stability, summarize
from everyo.errors import EveryOBenchmarkError, EveryOExportError, EveryOSerializationError
from everyo.fileio import dumps, write_text
from everyo.machine_state import MachineState

__all__ = ["BenchmarkResult", "load", "describe"]

FORMAT = "everyo.benchmark"
FORMAT_VERSION = 3  # 2: the times per process (worker processes), the process, the thread limit
# 3: the reference workload's times per process (the machine's speed: bench/reference.py)


@dataclass(eq=False)
class BenchmarkResult:
    """Timings of one workload. Times are stored in seconds; reports are in milliseconds.

    Attributes
    ----------
    times : numpy.ndarray
        Seconds taken by each timed call, in call order.
    name : str
        The workload's name (what baselines are matched on).
    warmup, repeat : int
        Untimed calls, and the timed calls asked for (``n`` may exceed it with ``min_time``).
    samples : int or None
        Samples per call; gives :attr:`throughput`.
    synchronized : bool
        Whether each timed call was synchronised with the GPU.
    workload : dict
        The callable and its argument shapes and dtypes.
    environment : dict or None
        :func:`everyo.environment` at measurement time.
    worker : str or None
        The worker that measured it when an executor ran it (``benchmark_grid``), else ``None``.
    machine : dict or None
        What the machine did while it measured (:class:`~everyo.machine_state.MachineState`
        as a dict: other processes' CPU use, threads, the verdict); ``None`` in a result saved
        before it was recorded. :attr:`machine_state` gives the object.
    process_times : list of numpy.ndarray or None
        The times of each worker process, when several measured it (``processes=``, the CLI);
        ``None`` for a result measured in one process (``times`` is then that process's).
    process : str or None
        Which process measured it: a token of this process for an in-process result
        (:func:`process_token`), ``"workers-..."`` for one run of worker processes, ``None``
        when unknown (a result saved before it was recorded).
    thread_limit : str or None
        How a thread limit was applied: ``"environment"`` (set before BLAS started, in each
        worker), ``"runtime"`` (threadpoolctl, after BLAS's pool started: can run slower), or
        ``None`` (threads left as they were).
    reference : dict or None
        The reference workload's seconds per call, per part (``"blas"``) and per worker
        process, timed beside the workload (:mod:`everyo.bench.reference`): how fast the
        machine itself ran. ``None`` for an in-process result or one saved before it was kept.
    """

    times: Any
    name: str = "workload"
    warmup: int = 0
    repeat: int = 0
    min_time: float | None = None
    samples: int | None = None
    synchronized: bool = False
    workload: dict = field(default_factory=dict)
    environment: dict | None = None
    created: float = field(default_factory=time.time)
    worker: str | None = None
    machine: dict | None = None
    process_times: Any = None
    process: str | None = None
    thread_limit: str | None = None
    reference: dict | None = None

    def __post_init__(self) -> None:
        if self.process_times is not None:
            self.process_times = [np.asarray(t, dtype=float) for t in self.process_times]
            if sum(t.size for t in self.process_times) != np.size(self.times):
                raise EveryOBenchmarkError(
                    "process_times must hold the same timings as times, per process"
                )
            if len(self.process_times) < 2:  # (one process is an ordinary result)
                self.process_times = None
        self.times = np.asarray(self.times, dtype=float)
        self._stats = summarize(self.times)

    @property
    def processes(self) -> int:
        """How many processes measured it (1 for an in-process result or an old baseline)."""
        return 1 if self.process_times is None else len(self.process_times)

    @property
    def groups(self) -> list[np.ndarray]:
        """The times per process: :attr:`process_times`, or ``[times]`` for one process."""
        return [self.times] if self.process_times is None else list(self.process_times)

    n = property(lambda self: self._stats["n"], doc="Number of timed calls.")
    mean = property(lambda self: self._stats["mean"], doc="Mean seconds per call.")
    median = property(lambda self: self._stats["median"], doc="Median seconds per call.")
    std = property(lambda self: self._stats["std"], doc="Sample standard deviation, seconds.")
    min = property(lambda self: self._stats["min"], doc="Fastest call, seconds.")
    max = property(lambda self: self._stats["max"], doc="Slowest call, seconds.")
    p5 = property(lambda self: self._stats["p5"], doc="5th percentile, seconds.")
    p95 = property(lambda self: self._stats["p95"], doc="95th percentile, seconds.")

    @property
    def throughput(self) -> float | None:
        """Samples per second at the mean latency (the guide's ``N / t``), or ``None``."""
        if self.samples is None:
            return None
        return self.samples / self.mean

    @property
    def machine_state(self) -> MachineState | None:
        """The machine's state while it measured (``None`` when not recorded)."""
        return MachineState.from_dict(self.machine)

    @property
    def outliers(self) -> np.ndarray:
        """Indices of the timed calls that break from the rest (see
        :func:`everyo.bench.stats.outliers`)."""
        return outliers(self.times)

    @property
    def stability(self) -> str:
        """``"stable"``, ``"noisy"`` or ``"unstable"``: the timings' spread (1.4826 MAD) relative
        to their median, up to 5 %, 15 %, or above."""
        return stability(self.times)[0]

    @property
    def trusted(self) -> bool:
        """False when the machine was contended while it measured (see :attr:`machine_state`)."""
        state = self.machine_state
        return state is None or state.trusted

    def quality_lines(self) -> list[str]:
        """The outliers, the stability and the machine's state, one line each."""
        verdict, cv = stability(self.times)
        n_out = len(self.outliers)
        why = _outliers_lowered(verdict, cv, n_out, self.n)
        lines = [
            f"Outliers: {n_out} of {self.n} timed calls (modified z-score > {OUTLIER_Z:g})",
            f"Stability: {verdict} (spread {cv:.1%} of the median{why})",
        ]
        lines.append(self.process_line())
        if self.thread_limit == "runtime":
            lines.append(
                "Threads: limited at run time (threadpoolctl, after BLAS's pool started), which "
                "can time slower than a process started with that limit: processes=N sets it "
                "before NumPy loads"
            )
        elif self.thread_limit == "environment":
            lines.append("Threads: limited in each worker's environment before NumPy loaded")
        state = self.machine_state
        if state is not None:
            lines.append(state.line())
            if not state.trusted:
                lines.append(
                    "Warning: the machine was contended while this was measured: these "
                    "figures are not to be trusted"
                )
        return lines

    def process_line(self) -> str:
        """``"Processes: 8 (medians 0.219 to 0.482 ms; spread between processes 12.3%)"``, or
        for one process what a comparison across processes needs."""
        if self.process_times is None:
            return (
                "Processes: 1 (this process only: a comparison with another process or session, "
                "such as a saved baseline, needs processes=N for the spread between processes)"
            )
        from everyo.bench.stats import process_spread

        medians = [float(np.median(t)) for t in self.process_times]
        return (
            f"Processes: {self.processes} (medians {min(medians) * 1e3:.4f} to "
            f"{max(medians) * 1e3:.4f} ms; spread between processes "
            f"{process_spread(self.process_times):.1%})"
        )

    def stats_ms(self) -> dict[str, float | int]:
        """The statistics in milliseconds (``n`` stays a count)."""
        return {k: (v if k == "n" else v * 1e3) for k, v in self._stats.items()}

    def __str__(self) -> str:
        ms = self.stats_ms()
        lines = [
            f"Benchmark: {self.name} (n={self.n}, warmup={self.warmup}"
            + (", CUDA-synchronised)" if self.synchronized else ")"),
            f"Mean latency: {ms['mean']:.4f} ms",
            f"Median latency: {ms['median']:.4f} ms",
            f"Std deviation: {ms['std']:.4f} ms",
            f"Minimum latency: {ms['min']:.4f} ms",
            f"Maximum latency: {ms['max']:.4f} ms",
            f"P5 / P95 latency: {ms['p5']:.4f} / {ms['p95']:.4f} ms",
        ]
        if self.throughput is not None:
            lines.append(f"Approx. throughput: {self.throughput:.2f} samples/s")
        return "\n".join(lines + self.quality_lines())

    def __repr__(self) -> str:
        return (
            f"BenchmarkResult(name={self.name!r}, n={self.n}, "
            f"median={self.median * 1e3:.4g} ms, mean={self.mean * 1e3:.4g} ms)"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (what :meth:`to_json` writes and :func:`load` reads)."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "name": self.name,
            "created": self.created,
            "warmup": self.warmup,
            "repeat": self.repeat,
            "min_time": self.min_time,
            "samples": self.samples,
            "synchronized": self.synchronized,
            "times_s": [float(t) for t in self.times],
            "stats_ms": self.stats_ms(),
            "throughput": self.throughput,
            "workload": self.workload,
            "environment": self.environment,
            "worker": self.worker,
            "outliers": len(self.outliers),
            "stability": self.stability,
            "machine": self.machine,
            "processes": self.processes,
            "process_times_s": None
            if self.process_times is None
            else [[float(t) for t in times] for times in self.process_times],
            "process": self.process,
            "thread_limit": self.thread_limit,
            "reference_s": self.reference,
        }

    def to_json(self, path: str | os.PathLike) -> Path:
        """Write :meth:`to_dict` to ``path`` atomically; return the path."""
        return write_json(self.to_dict(), path)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BenchmarkResult:
        """Rebuild a result from :meth:`to_dict` output."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise EveryOSerializationError(
                "this is not an everyo benchmark result (no 'format': 'everyo.benchmark'); "
                "save one with BenchmarkResult.to_json() or "
                "`python -m everyo bench SPEC --save-baseline PATH`"
            )
        check_fields(data)
        try:
            return cls(
                times=data["times_s"],
                name=data.get("name", "workload"),
                warmup=data.get("warmup", 0),
                repeat=data.get("repeat", 0),
                min_time=data.get("min_time"),
                samples=data.get("samples"),
                synchronized=data.get("synchronized", False),
                workload=data.get("workload") or {},
                environment=data.get("environment"),
                created=data.get("created", 0.0),
                worker=data.get("worker"),
                machine=data.get("machine") if isinstance(data.get("machine"), dict) else None,
                process_times=_process_times(data.get("process_times_s")),
                process=data.get("process") if isinstance(data.get("process"), str) else None,
                thread_limit=data.get("thread_limit")
                if data.get("thread_limit") in ("environment", "runtime")
                else None,
                reference=_reference(data.get("reference_s")),
            )
        except (KeyError, TypeError, ValueError, EveryOBenchmarkError) as exc:
            message = f"benchmark result is incomplete or corrupt: {exc}"
            raise EveryOSerializationError(message) from exc

    @classmethod
    def load(cls, path: str | os.PathLike) -> BenchmarkResult:
        """Read a result written by :meth:`to_json`."""
        return cls.from_dict(read_json(path))


def _process_times(value: Any) -> list | None:
    """The saved times per process, checked (``None`` in a result from one process, or saved
    before they were kept)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(times, list) and times and all(_is_number(t) for t in times) for times in value
    ):
        raise ValueError("'process_times_s' must be a list of lists of seconds")
    return value


def _reference(value: Any) -> dict | None:
    """The saved reference times, checked (``None`` in a result saved before they were kept)."""
    if value is None:
        return None
    if not isinstance(value, dict) or not value:
        raise ValueError("'reference_s' must map each reference part to its times per process")
    for processes in value.values():
        try:
            _process_times(processes)  # (the same shape: a list per process, of seconds)
        except ValueError:
            raise ValueError(
                "'reference_s' must map each reference part to its times per process"
            ) from None
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_token: tuple[int, str] = (0, "")


def process_token() -> str:
    """An identity of this process that a forked child does not share (pid and a random part):
    results with the same token were measured in the same process."""
    global _token
    if _token[0] != os.getpid():
        import uuid

        _token = (os.getpid(), f"{os.getpid()}-{uuid.uuid4().hex[:12]}")
    return _token[1]


_NUMBERS = {"warmup": False, "repeat": False, "min_time": True, "samples": True, "created": True}


def check_fields(data: dict) -> None:
    """The fields of a saved result that the checks compute with have the types it writes: a
    string where a number belongs is an :class:`EveryOSerializationError` naming the field at
    load, not a bare ``TypeError`` in the comparison (issue 44: ``bench --baseline`` exited 1,
    the "regression" code, with a traceback). Missing fields keep their defaults."""

    def bad(field: str, value, expected: str):
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        return EveryOSerializationError(
            f"benchmark result is corrupt: {field!r} is {shown}, not {expected}"
        )

    times = data.get("times_s")
    if not isinstance(times, list) or not times:
        raise bad("times_s", times, "a list of seconds")
    for t in times:
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t < float("inf"):
            raise bad("times_s", t, "a number of seconds")
    for name, nullable in _NUMBERS.items():
        value = data.get(name)
        if value is None and (nullable or name not in data):
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise bad(name, value, "a number")
    for name, kind in (("name", str), ("synchronized", bool), ("workload", dict)):
        if name in data and data[name] is not None and not isinstance(data[name], kind):
            raise bad(name, data[name], f"a {kind.__name__}")
    machine = data.get("machine")
    if isinstance(machine, dict):
        for name in _MACHINE_NUMBERS:
            value = machine.get(name)
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if value is not None and not number:
                raise bad(f"machine.{name}", value, "a number")


_MACHINE_NUMBERS = (
    "others_cores",
    "own_cores",
    "usable_cores",
    "blas_threads",
    "openmp_threads",
    "involuntary_switches",
    "window_s",
    "threads_applied",
)


def load(path: str | os.PathLike) -> BenchmarkResult:
    """Read a :class:`BenchmarkResult` from a JSON file (e.g. a stored baseline)."""
    return BenchmarkResult.load(path)


def write_json(data: dict[str, Any], path: str | os.PathLike) -> Path:
    """Write ``data`` as JSON atomically (temporary file, then rename); NaN as ``"NaN"``."""
    return write_text(path, dumps(data, indent=1), parents=True)


def read_json(path: str | os.PathLike) -> Any:
    """Read JSON from ``path`` with errors that name the path."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EveryOExportError(f"could not read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:  # (issue 44: a bare traceback)
        raise EveryOSerializationError(
            f"{path} is not UTF-8 text (byte {exc.start}), so not a JSON file everyo wrote"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise EveryOSerializationError(f"{path} is not valid JSON: {exc}") from exc
    except RecursionError:
        raise EveryOSerializationError(
            f"{path}: its JSON nests arrays or objects too deeply to be a file everyo wrote"
        ) from None


def describe(fn: Any, args: tuple = (), kwargs: dict | None = None) -> dict[str, Any]:
    """A JSON-serialisable description of a call: callable, argument shapes and dtypes."""
    return {
        "callable": getattr(fn, "__qualname__", None) or type(fn).__qualname__,
        "module": getattr(fn, "__module__", None) or type(fn).__module__,
        "args": [describe_value(a) for a in args],
        "kwargs": {k: describe_value(v) for k, v in (kwargs or {}).items()},
    }


def describe_value(value: Any) -> str:
    """``"ndarray(128, 32) float32 cpu"`` for arrays and tensors; a short repr otherwise."""
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple):
        kind = type(value).__name__
        dtype = getattr(value, "dtype", "")
        device = getattr(value, "device", None)
        where = f" {device}" if device is not None and not isinstance(value, np.ndarray) else ""
        return f"{kind}{shape} {dtype}{where}".strip()
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _outliers_lowered(verdict: str, cv: float, n_out: int, n: int) -> str:
    """``"; 24% of the calls are outliers"`` when the outliers, not the spread, set the
    stability verdict (an "unstable" beside a 1 % spread reads as a contradiction otherwise)."""
    by_spread = "stable" if cv <= STABLE_CV else "noisy" if cv <= NOISY_CV else "unstable"
    if verdict == by_spread or n_out == 0:
        return ""
    return f"; {n_out / n:.0%} of the calls are outliers"
