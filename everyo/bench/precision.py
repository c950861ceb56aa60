"""Compare numerical precisions: time and error of a workload per dtype against float64.

The guide's rule: lower precision must be *measured* for correctness and speed, never assumed.
Each dtype's output is checked with the guide's tolerances,
``np.testing.assert_allclose(reference, optimized, rtol=1e-5, atol=1e-7)``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from everyo.bench.devices import is_module
from everyo.bench.stats import summarize
from everyo.bench.timing import Timer, check_count
from everyo.errors import EveryOBenchmarkError
from everyo.machine_state import MachineState, MachineWatch
from everyo.thread_policy import ThreadPolicy

__all__ = ["compare_precisions", "PrecisionResult", "PrecisionRow"]


@dataclass
class PrecisionRow:
    """One dtype: timing (ms), error against the reference, and the tolerance verdict."""

    dtype: str
    status: str  # "ok" or "error"
    message: str = ""
    output_dtype: str | None = None
    mean_ms: float | None = None
    median_ms: float | None = None
    speedup: float | None = None  # reference median / this median
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    passed: bool | None = None  # the guide's assert_allclose with rtol/atol

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PrecisionResult:
    """Rows per dtype (the reference first), with the tolerances used."""

    rows: list[PrecisionRow]
    reference: str
    rtol: float
    atol: float
    machine: dict | None = None  # the machine's state over the timings (MachineState dict)

    @property
    def machine_state(self) -> MachineState | None:
        return MachineState.from_dict(self.machine)

    def __getitem__(self, dtype: str) -> PrecisionRow:
        name = np.dtype(dtype).name
        for row in self.rows:
            if row.dtype == name:
                return row
        raise KeyError(f"dtype {name} was not compared")

    def to_dict(self) -> dict[str, Any]:
        return {
            "reference": self.reference,
            "rtol": self.rtol,
            "atol": self.atol,
            "rows": [r.to_dict() for r in self.rows],
            "machine": self.machine,
        }

    def to_dataframe(self):
        """The rows as a pandas DataFrame (pandas is imported here, not with everyo)."""
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.rows])

    def __str__(self) -> str:
        lines = [
            f"Precision comparison against {self.reference} "
            f"(rtol={self.rtol:g}, atol={self.atol:g})",
            f"{'dtype':>9} {'median ms':>10} {'speedup':>8} {'max abs err':>12} "
            f"{'max rel err':>12}  allclose",
        ]
        for r in self.rows:
            if r.status != "ok":
                lines.append(f"{r.dtype:>9}  error: {r.message}")
                continue
            verdict = "pass" if r.passed else "FAIL"
            lines.append(
                f"{r.dtype:>9} {r.median_ms:>10.4f} {r.speedup:>7.2f}x {r.max_abs_error:>12.3e} "
                f"{r.max_rel_error:>12.3e}  {verdict}"
            )
        if (state := self.machine_state) is not None:
            lines.append(state.line())
        return "\n".join(lines)


def compare_precisions(
    fn: Callable[..., Any],
    inputs: Any,
    dtypes: Sequence[str] = ("float16", "float32", "float64"),
    *,
    reference: str = "float64",
    rtol: float = 1e-5,
    atol: float = 1e-7,
    warmup: int = 3,
    repeat: int = 20,
    clock: Callable[[], float] | None = None,
    synchronize: Callable[[], None] | None = None,
    threads: Any = "auto",
) -> PrecisionResult:
    """Run ``fn`` with its floating inputs (and, for a model, its parameters) cast to each dtype.

    Parameters
    ----------
    fn : callable
        A function of the inputs, or an everyo module (copied and cast with ``.to(dtype=...)``
        per dtype, called under ``eo.no_grad()``).
    inputs : array, tensor, or tuple of them
        A tuple is passed as positional arguments; anything else as the one argument. Floating
        arrays and tensors are cast; other values are passed unchanged.
    dtypes : sequence of str
        The precisions to compare; the reference is always measured too.
    reference : str
        The precision the others are compared with.
    rtol, atol : float
        Tolerances of ``np.testing.assert_allclose(reference, optimized, rtol, atol)``.
    warmup, repeat : int
        Untimed and timed calls per dtype.
    threads : "auto", int or None
        BLAS/OpenMP threads while timing, as for :func:`everyo.bench.benchmark`; the
        machine's state over the timings is recorded (``result.machine_state``).

    Returns
    -------
    PrecisionResult
        ``print()`` gives a table; ``result["float32"].passed`` the verdict for one dtype.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).standard_normal((64, 64))
    >>> result = compare_precisions(np.tanh, x, repeat=3)
    >>> result["float32"].passed, result["float16"].passed
    (True, False)
    """
    if not callable(fn):
        raise EveryOBenchmarkError(
            f"compare_precisions() needs a callable, got {type(fn).__name__}"
        )
    # checked before any run: repeat=0 was reported as "the float64 reference run failed",
    # and a negative warmup was taken
    warmup = check_count("warmup", warmup, minimum=0)
    repeat = check_count("repeat", repeat, minimum=1)
    names = [_dtype_name(d) for d in dtypes]
    ref_name = _dtype_name(reference)
    order = [ref_name] + [n for n in dict.fromkeys(names) if n != ref_name]
    args = inputs if isinstance(inputs, tuple) else (inputs,)
    rows, ref_out, ref_median = [], None, None
    with ThreadPolicy(threads) as policy:
        watch = MachineWatch(threads_policy=policy.policy, threads_applied=policy.applied)
        watch.start()
        for name in order:
            row, out = _measure_dtype(fn, args, name, warmup, repeat, clock, synchronize)
            if name == ref_name:
                if row.status != "ok":
                    message = f"the {ref_name} reference run failed: {row.message}"
                    raise EveryOBenchmarkError(message)
                ref_out, ref_median = out, row.median_ms
            if row.status == "ok":
                _fill_errors(row, ref_out, out, rtol, atol)
                row.speedup = ref_median / row.median_ms if row.median_ms else float("inf")
            rows.append(row)
        machine = watch.stop()
    # report in the order asked for (the reference first when it was not asked for)
    rows.sort(key=lambda r: names.index(r.dtype) if r.dtype in names else -1)
    return PrecisionResult(
        rows=rows, reference=ref_name, rtol=rtol, atol=atol, machine=machine.to_dict()
    )


def _measure_dtype(fn, args, name, warmup, repeat, clock, synchronize):
    try:
        call = _cast_callable(fn, name)
        cast = tuple(_cast(a, name) for a in args)
        out = _to_host(call(*cast))
        timer = Timer(clock=clock, synchronize=synchronize)
        times = timer.run(lambda: call(*cast), warmup, repeat, inputs=(cast,))
    except Exception as exc:  # noqa: BLE001 - an unsupported dtype is a row, not a crash
        return PrecisionRow(name, "error", f"{type(exc).__name__}: {exc}"), None
    s = summarize(times)
    row = PrecisionRow(
        name,
        "ok",
        output_dtype=out.dtype.name,
        mean_ms=s["mean"] * 1e3,
        median_ms=s["median"] * 1e3,
    )
    return row, out


def _fill_errors(row: PrecisionRow, reference: np.ndarray, optimized: np.ndarray, rtol, atol):
    if reference.shape != optimized.shape:
        row.status, row.message = "error", f"output shape {optimized.shape} != {reference.shape}"
        return
    ref = reference.astype(np.float64)
    diff = np.abs(optimized.astype(np.float64) - ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(ref != 0, diff / np.abs(ref), np.where(diff == 0, 0.0, np.inf))
    row.max_abs_error = float(diff.max()) if diff.size else 0.0
    row.max_rel_error = float(rel.max()) if rel.size else 0.0
    try:
        np.testing.assert_allclose(reference, optimized, rtol=rtol, atol=atol)
        row.passed = True
    except AssertionError:
        row.passed = False


def _dtype_name(dtype: Any) -> str:
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise EveryOBenchmarkError(f"unknown dtype {dtype!r}: use e.g. 'float32'") from exc
    if dt.kind != "f":
        raise EveryOBenchmarkError(f"precisions are floating dtypes, got {dt.name}")
    return dt.name


def _cast(value: Any, dtype: str) -> Any:
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind == "f" and hasattr(value, "astype"):
        return value.astype(dtype)
    return value


def _cast_callable(fn, dtype):
    if not is_module(fn):
        return fn
    import everyo as eo

    model = copy.deepcopy(fn).to(dtype=dtype)
    model.eval()

    def call(*args):
        with eo.no_grad():
            return model(*args)

    return call


def _to_host(out: Any) -> np.ndarray:
    """The output as one NumPy array (tuples and lists are flattened and joined)."""
    if isinstance(out, (tuple, list)):
        return np.concatenate([_to_host(o).ravel() for o in out])
    if hasattr(out, "numpy") and callable(out.numpy):  # everyo tensors
        return np.asarray(out.numpy())
    if hasattr(out, "get") and type(out).__module__.split(".")[0] == "cupy":
        return out.get()
    return np.asarray(out)
