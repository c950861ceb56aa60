"""Compare two benchmarks and gate on regressions, allowing for measurement noise.

Two questions are kept apart:

- *Is the change real?* A confidence interval for the ratio of the two runs' medians (see
  :func:`everyo.bench.stats.ratio_interval`) says whether the difference exceeds the noise.
- *Does it matter?* The guide's ``Regression% = (T_new - T_baseline) / T_baseline * 100`` must
  exceed the threshold (10 % by default).

A regression is reported only when both hold, which keeps false alarms on unchanged code (A/A
runs) rare, while a 20 % slowdown measured with ordinary noise is always caught.

Both intervals count the spread between processes when either side was measured in several
worker processes (``processes=``, the CLI): two processes running the same code differ by more
than two calls in one process do, so a saved baseline is compared process against process (see
:func:`everyo.bench.stats.process_ratio_interval`); the gate reads each process's fastest call
then (:func:`gate_statistic`), which interference, adding time to whole runs, moves least. Two
in-process results from different processes (a saved one, a result from yesterday) allow for
:data:`PROCESS_SPREAD`.

A practical margin (:data:`MARGIN`) comes with it: a change smaller than that is never called
faster, slower, a regression or an improvement ("no meaningful change"), however tight its
interval: the load of a shared machine, the order of the calls, the process moves a time by a
few percent in ways no interval sees.

A third question comes first: *was the machine the same?* When either side was measured on a
contended machine (its threads shared cores with other processes), or one side on a quiet
machine and the other on a busy one, the times differ for that alone; the verdict is then
:data:`MACHINE_BUSY` ("inconclusive: the machine was busy"), never faster or slower.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from everyo.bench import reference
from everyo.bench.machine import machine_differences, only_settings_differ
from everyo.bench.result import BenchmarkResult
from everyo.bench.stats import (
    PROCESS_STATISTICS,
    check_one_process_statistic,
    process_mean,
    process_ratio_interval,
    process_spread,
    ratio_interval,
    statistic_fn,
)
from everyo.bench.threshold import threshold_fraction
from everyo.errors import EveryOBenchmarkError

__all__ = [
    "Comparison",
    "RegressionCheck",
    "compare",
    "check_regression",
    "regression_verdict",
    "gate_verdict",
    "machine_caveat",
    "MACHINE_BUSY",
    "MARGIN",
    "PROCESS_SPREAD",
    "RUN_SPREAD",
    "NO_MEANINGFUL_CHANGE",
]

MARGIN = 0.05
"""The practical margin: a change of less than 5 % (``max(r, 1/r) - 1`` for the ratio ``r``)
is "no meaningful change" in :func:`compare` and never a regression or an improvement in
:func:`check_regression`, whatever its interval (measurements in docs/benchmarking.md)."""
PROCESS_SPREAD = 0.25
"""The spread between processes (standard deviation of the log of a process's median) that
two single-process results from different processes are allowed: identical processes timing
the same function showed 26-68 % here (busy machine, 1 or 2 BLAS threads) and 31 % on a quiet
one (issue 46's five processes); ``processes=N`` measures it instead (docs/benchmarking.md)."""
RUN_SPREAD = 0.014
"""How much two runs of worker processes differ on a steady machine, every process of a run
alike (standard deviation of the log of the ratio of consecutive runs' figures, six processes of
the gate's 1.6-ms workload each, where the machine's speed stayed within
:data:`~everyo.bench.reference.FLOOR`): 0.7 % and 1.4 % on two occasions here
(``benchmarks/run_spread.py``, benchmarks/RESULTS.md); the gate takes the larger. Two runs
measured apart (a baseline and a check) get it added to the processes' interval: without it a
2x change read +100.7 % with an interval of +100.3 % to +101.1 %, tighter than runs reproduce."""
NO_MEANINGFUL_CHANGE = "no meaningful change"
"""The verdict of a comparison whose change is real but smaller than the margin."""

LOAD_GAP_CORES = 0.5
"""Other processes' load (in cores; at least a quarter of the cores) by which a busy side must
exceed a quiet one for the two to be incomparable."""
MACHINE_BUSY = "inconclusive: the machine was busy"
"""The verdict of a comparison or check whose sides the machine's state makes incomparable."""

Timings = Any  # BenchmarkResult, a path to a saved one, or an array of seconds


@dataclass(frozen=True)
class Comparison:
    """Speedup ``S = T_baseline / T_candidate`` of a candidate over a baseline.

    ``verdict`` is ``"faster"`` or ``"slower"`` when the confidence interval excludes 1,
    ``"no significant change"`` otherwise, and :data:`MACHINE_BUSY` when the machine's state
    makes the two sides incomparable (``machine_note`` says why). ``baseline_machine`` and
    ``candidate_machine`` say what the machine did while each side was measured (``"busy (other
    processes used 1.0 of 2 cores; 1 BLAS thread)"``; ``""`` when not recorded).
    """

    speedup: float
    ci_low: float
    ci_high: float
    confidence: float
    statistic: str
    baseline_time: float
    candidate_time: float
    verdict: str
    machine_note: str = ""
    baseline_machine: str = ""
    candidate_machine: str = ""
    margin: float = MARGIN
    processes_note: str = ""
    speed_note: str = ""

    @property
    def conclusive(self) -> bool:
        """False when the machine's state makes the two sides incomparable."""
        return self.verdict != MACHINE_BUSY

    def __str__(self) -> str:
        pct = round(self.confidence * 100)
        text = (
            f"Speedup: {self.speedup:.3f}x ({pct}% CI {self.ci_low:.3f}-{self.ci_high:.3f}), "
            f"{self.statistic} {self.baseline_time * 1e3:.4f} ms -> "
            f"{self.candidate_time * 1e3:.4f} ms: {self.verdict}"
        )
        if self.verdict == NO_MEANINGFUL_CHANGE:
            text += f" (under the {self.margin:.0%} margin)"
        if self.processes_note:
            text += f" [{self.processes_note}]"
        if self.speed_note.startswith("changed"):  # (steady goes without saying)
            text += f" [machine speed {self.speed_note}]"
        if self.machine_note:
            return f"{text} ({self.machine_note})"
        sides = (self.baseline_machine, self.candidate_machine)
        if not any(side and not side.startswith("quiet") for side in sides):
            return text  # (a quiet machine goes without saying)
        if sides[0] == sides[1]:  # an interleaved comparison: one machine for both
            return f"{text} (machine: {sides[0]})"
        return f"{text} (baseline's machine: {sides[0] or 'not recorded'}; candidate's: " + (
            f"{sides[1] or 'not recorded'})"
        )


@dataclass(frozen=True)
class RegressionCheck:
    """The outcome of :func:`check_regression`.

    Attributes
    ----------
    regression_pct : float
        The guide's ``(T_new - T_baseline) / T_baseline * 100`` (negative: faster).
    ratio, ci_low, ci_high : float
        ``T_new / T_baseline`` and its confidence interval.
    verdict : str
        ``"regression"`` (slower by more than the threshold and the margin, beyond noise),
        ``"improvement"`` (the same, faster), ``"inconclusive"`` (beyond the threshold but
        within noise: measure more), :data:`MACHINE_BUSY` (either side measured on a contended
        machine, or one on a quiet and one on a busy machine: ``machine_note`` says which), or
        ``"ok"``.
    baseline_processes, new_processes : int
        How many processes measured each side (1 for an in-process result or a baseline saved
        before processes were kept); ``processes_note`` says how the interval counted them.
    machine_differences : tuple of str
        How the baseline's machine or settings differ from the new result's (CPU, cores,
        GPUs, BLAS threads, subnormal flushing...), from the environment both recorded; empty
        when they match or either lacks a record. ``print(check)`` shows them next to the
        verdict ("baseline measured with other settings" when only the settings differ).
    speed_note : str
        What the reference workload timed beside each side says of the machine's own speed
        between the two runs (:mod:`everyo.bench.reference`): steady, or changed, and then the
        interval ``ci_low``-``ci_high`` covers the change with and without the machine's
        (``measured_ci_low``-``measured_ci_high`` is the interval without it); "unknown"
        when one side kept no reference (a baseline saved before it was kept), ``""`` when
        neither did or both came from one process.
    baseline_machine, new_machine : str
        What the machine did while each side was measured (``"busy (other processes used 1.0
        of 2 cores; 1 BLAS thread)"``); ``""`` when that side did not record it.
        ``print(check)`` shows each under its figure.
    """

    regression_pct: float
    ratio: float
    ci_low: float
    ci_high: float
    threshold: float
    confidence: float
    statistic: str
    baseline_time: float
    new_time: float
    verdict: str
    name: str = "workload"
    machine_differences: tuple[str, ...] = ()
    machine_note: str = ""
    baseline_machine: str = ""
    new_machine: str = ""
    baseline_processes: int = 1
    new_processes: int = 1
    processes_note: str = ""
    margin: float = MARGIN
    speed_note: str = ""
    measured_ci_low: float | None = None
    measured_ci_high: float | None = None

    @property
    def passed(self) -> bool:
        """False only for a regression (what gates CI)."""
        return self.verdict != "regression"

    @property
    def conclusive(self) -> bool:
        """False when the machine's state makes the two sides incomparable."""
        return self.verdict != MACHINE_BUSY

    def __str__(self) -> str:
        pct = round(self.confidence * 100)
        change = (self.ci_low - 1) * 100, (self.ci_high - 1) * 100
        return "\n".join(
            [
                f"Workload: {self.name}",
                f"Baseline {_word(self.statistic)}: {self.baseline_time * 1e3:.4f} ms"
                + _of_processes(self.baseline_processes, self.statistic),
                *([f"Baseline machine: {self.baseline_machine}"] if self.baseline_machine else []),
                f"New {_word(self.statistic)}: {self.new_time * 1e3:.4f} ms"
                + _of_processes(self.new_processes, self.statistic),
                *([f"New machine: {self.new_machine}"] if self.new_machine else []),
                f"Regression: {self.regression_pct:+.2f}% ({pct}% CI {change[0]:+.2f}% "
                f"to {change[1]:+.2f}%; threshold {self.threshold * 100:.1f}%, margin "
                f"{self.margin * 100:.1f}%)",
                *([f"Processes: {self.processes_note}"] if self.processes_note else []),
                *([f"Machine speed: {self._speed_text()}"] if self.speed_note else []),
                f"Verdict: {self.verdict.upper()}{self._machine_note()}",
                *([f"Machine: {self.machine_note}"] if self.machine_note else []),
            ]
        )

    def _speed_text(self) -> str:
        if self.measured_ci_low is None or (self.measured_ci_low, self.measured_ci_high) == (
            self.ci_low,
            self.ci_high,
        ):
            return self.speed_note
        alone = (self.measured_ci_low - 1) * 100, (self.measured_ci_high - 1) * 100
        return f"{self.speed_note} (without it: {alone[0]:+.2f}% to {alone[1]:+.2f}%)"

    def _machine_note(self) -> str:
        if not self.machine_differences:
            return ""
        listed = "; ".join(self.machine_differences)
        if only_settings_differ(self.machine_differences):  # (the same hardware, maybe)
            return (
                f" (baseline measured with other settings: {listed}; times measured with "
                f"different settings are not comparable: save a baseline with these)"
            )
        return (
            f" (baseline from another machine: {listed}; times from two machines are not "
            f"comparable: save a baseline on this one)"
        )


def _word(statistic: str, plural: bool = False) -> str:
    return STATISTIC_WORDS.get(statistic, (statistic, statistic + "s"))[plural]


def _of_processes(n: int, statistic: str) -> str:
    return f" (geometric mean of {n} processes' {_word(statistic, True)})" if n > 1 else ""


def compare(
    baseline: Timings,
    candidate: Timings,
    *,
    statistic: str = "median",
    confidence: float = 0.95,
    method: str = "asymptotic",
    margin: float | None = MARGIN,
) -> Comparison:
    """Speedup of ``candidate`` over ``baseline`` with a confidence interval and a verdict.

    Parameters
    ----------
    baseline, candidate : BenchmarkResult, path, or array of seconds
    statistic : {"median", "mean"}
    confidence : float
    method : {"asymptotic", "bootstrap"}
        See :func:`everyo.bench.stats.ratio_interval` (for two results from one process).
    margin : float
        A speed-up within ``1 ± margin`` (``max(s, 1/s) - 1 < margin``) reads
        :data:`NO_MEANINGFUL_CHANGE` even when its interval excludes 1 (:data:`MARGIN`).

    Two results measured in different processes (one saved, or from ``processes=``) are
    compared with the spread between processes (``processes_note`` says how): calls within one
    process agree more closely than processes do.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> old = rng.lognormal(np.log(0.012), 0.05, 100)
    >>> new = rng.lognormal(np.log(0.010), 0.05, 100)
    >>> compare(old, new).verdict
    'faster'
    """
    margin = check_margin(margin)
    baseline, candidate = _result(baseline), _result(candidate)
    _times(baseline), _times(candidate)  # (checks an array's shape)
    (est, lo, hi), note, (t_base, t_cand) = _interval(
        baseline, candidate, statistic=statistic, confidence=confidence, method=method
    )
    apart = not _same_process(baseline, candidate)
    drift, speed_note = _machine_speed(
        baseline, candidate, statistic, confidence, apart, sides=("baseline", "candidate")
    )
    lo, hi = reference.widen(lo, hi, drift)
    verdict = "faster" if lo > 1 else "slower" if hi < 1 else "no significant change"
    if verdict != "no significant change" and max(est, 1 / est) - 1 < margin:
        verdict = NO_MEANINGFUL_CHANGE
    caveat = machine_caveat(baseline, candidate, sides=("baseline", "candidate"), apart=apart)
    return Comparison(
        est,
        lo,
        hi,
        confidence,
        statistic,
        t_base,
        t_cand,
        MACHINE_BUSY if caveat else verdict,
        caveat or "",
        _machine_text(baseline),
        _machine_text(candidate),
        margin,
        note,
        speed_note,
    )


def check_regression(
    result: Timings,
    baseline: Timings | str | os.PathLike,
    *,
    threshold: float = 0.10,
    statistic: str = "auto",
    confidence: float = 0.95,
    margin: float = MARGIN,
) -> RegressionCheck:
    """Check a new result against a stored baseline.

    Parameters
    ----------
    result : BenchmarkResult, path to a saved one, or array of seconds
        The new measurement.
    baseline : BenchmarkResult, path to a saved result, or array of seconds
    threshold : float or str
        The smallest slowdown that counts: a fraction (0.10 = 10 %) or ``"10%"``; a number
        of 1 or more is refused (it reads as a percentage: write ``"10%"``).
    statistic : {"auto", "min", "median", "mean"}
        What ``T`` is in the guide's formula. ``"auto"`` (the default): each process's fastest
        call (``"min"``) when both sides were measured in several worker processes, else the
        median. Interference (another program, a VM's neighbours) only adds time to a call and
        comes and goes over seconds, moving every process of a run alike; the fastest call did
        as well or better than the median for unchanged code and for a +20 % change in the
        measurements of docs/benchmarking.md. ``"min"`` needs several processes on a side; the
        median also resists the occasional slow call and sees a change that slows only some
        calls, which the fastest call does not.
    confidence : float
        Coverage of the interval that separates real changes from noise; it counts the
        spread between processes when either side was measured in several (see
        :func:`compare`).
    margin : float
        A change within ``1 ± margin`` is never a regression or an improvement, even below a
        smaller threshold (:data:`MARGIN`).

    Returns
    -------
    RegressionCheck
        ``check.passed`` is False on a regression; ``print(check)`` explains the verdict.
    """
    # a path on either side is loaded: its machine state and environment are judged too (a
    # saved new result's contended state and settings went unread)
    baseline, result = _result(baseline), _result(result)
    _times(baseline), _times(result)  # (checks an array's shape)
    threshold = threshold_fraction(threshold)
    margin = check_margin(margin)
    statistic = gate_statistic(statistic, result, baseline)
    (est, lo, hi), note, (t_new, t_base) = _interval(
        result, baseline, statistic=statistic, confidence=confidence
    )
    measured = lo, hi
    apart = not _same_process(baseline, result)
    drift, speed_note = _machine_speed(
        result, baseline, statistic, confidence, apart, sides=("new result", "baseline")
    )
    lo, hi = reference.widen(lo, hi, drift)
    verdict = gate_verdict(est, lo, hi, threshold, margin)
    caveat = machine_caveat(baseline, result, sides=("baseline", "new result"), apart=apart)
    if caveat:
        verdict = MACHINE_BUSY
    return RegressionCheck(
        regression_pct=(t_new - t_base) / t_base * 100,
        ratio=float(est),
        ci_low=float(lo),
        ci_high=float(hi),
        threshold=threshold,
        confidence=confidence,
        statistic=statistic,
        baseline_time=t_base,
        new_time=t_new,
        verdict=str(verdict),
        name=getattr(result, "name", "workload"),
        machine_differences=tuple(
            machine_differences(_measured_environment(baseline), _measured_environment(result))
        ),
        machine_note=caveat or "",
        baseline_machine=_machine_text(baseline),
        new_machine=_machine_text(result),
        baseline_processes=_processes(baseline),
        new_processes=_processes(result),
        processes_note=note,
        margin=margin,
        speed_note=speed_note,
        measured_ci_low=float(measured[0]),
        measured_ci_high=float(measured[1]),
    )


def _machine_speed(num, den, statistic: str, confidence: float, apart: bool, sides):
    """The reference's drift between the runs of ``num`` and ``den`` (the ratio's numerator
    and denominator, named ``sides``) and what to print of it; nothing for two results of one
    process (the same machine at the same time) or two without a reference."""
    if not apart:
        return {}, ""
    refs = reference.reference_of(num), reference.reference_of(den)
    found = reference.drifts(*refs, statistic=statistic, confidence=confidence)
    if found:
        return found, reference.speed_note(found)
    if bool(refs[0]) != bool(refs[1]):
        side = sides[0] if not refs[0] else sides[1]
        if isinstance(num if side == sides[0] else den, BenchmarkResult):
            return {}, (
                f"unknown: the {side} was measured before the machine's speed was timed beside "
                "it; measure it again to tell a change of the machine from one of the code"
            )
    return {}, ""


def gate_statistic(statistic: str, result: Any, baseline: Any) -> str:
    """The statistic :func:`check_regression` reads: ``statistic``, or for ``"auto"`` each
    process's fastest call (``"min"``) when both sides hold several processes, else
    ``"median"``."""
    if statistic != "auto":
        if statistic not in PROCESS_STATISTICS:
            choices = ("auto", *PROCESS_STATISTICS)
            raise EveryOBenchmarkError(f"statistic must be one of {choices}, got {statistic!r}")
        if 1 in (len(_groups(result)), len(_groups(baseline))):
            check_one_process_statistic(statistic)
        return statistic
    several = len(_groups(result)) > 1 and len(_groups(baseline)) > 1
    return "min" if several else "median"


STATISTIC_WORDS = {"median": ("median", "medians"), "mean": ("mean", "means")}
STATISTIC_WORDS["min"] = ("fastest call", "fastest calls")
"""How the printed results name a statistic (one, several)."""


def gate_verdict(est, lo, hi, threshold: float = 0.10, margin: float = MARGIN):
    """The gate's verdict for a ratio ``T_new / T_baseline`` and its interval (scalars: one
    string; arrays: one each): ``"ok"`` within the threshold or the margin, else
    ``"regression"`` when the interval lies above 1, ``"improvement"`` below it, and
    ``"inconclusive"`` across it (or for a ratio that is not a number). The rule's one statement:
    :func:`check_regression`, :func:`regression_verdict` and ``benchmarks/regression_gate.py``
    apply it."""
    est, lo, hi = (np.asarray(x, dtype=np.float64) for x in (est, lo, hi))
    with np.errstate(divide="ignore", invalid="ignore"):
        within = (np.abs(est - 1) <= max(threshold, 0.0)) | (np.maximum(est, 1 / est) - 1 < margin)
    out = np.where(
        within,
        "ok",
        np.where(lo > 1, "regression", np.where(hi < 1, "improvement", "inconclusive")),
    )
    return str(out) if out.ndim == 0 else out


def _interval(num: Any, den: Any, *, statistic: str, confidence: float, method="asymptotic"):
    """``((T_num / T_den, low, high), note, (T_num, T_den))``: the interval that fits how the
    two sides were measured, and a note saying which, for the printed result."""
    groups_a, groups_b = _groups(num), _groups(den)
    if len(groups_a) > 1 or len(groups_b) > 1:
        runs = 0.0 if _same_process(num, den) else RUN_SPREAD  # (two runs: what runs differ by)
        interval = process_ratio_interval(
            groups_a, groups_b, statistic=statistic, confidence=confidence, run_spread=runs
        )
        t = process_mean(groups_a, statistic), process_mean(groups_b, statistic)
        note = _process_note(num, den, groups_a, groups_b)
        if runs:
            note += f" and the {runs:.1%} by which whole runs differ"
        return interval, note, t
    stat = statistic_fn(statistic)
    t = float(stat(groups_a[0])), float(stat(groups_b[0]))
    if _same_process(num, den):
        est, lo, hi = ratio_interval(
            groups_a[0], groups_b[0], statistic=statistic, confidence=confidence, method=method
        )
        return (float(est), float(lo), float(hi)), "", t
    interval = process_ratio_interval(
        groups_a, groups_b, statistic=statistic, confidence=confidence, spread=PROCESS_SPREAD
    )
    note = (
        f"two results from different processes, each from one: the interval allows for a "
        f"spread of {PROCESS_SPREAD:.0%} between processes; measure with processes=N to know it"
    )
    return interval, note, t


def _process_note(num, den, groups_a, groups_b) -> str:
    """``"8 and 8 (spread between processes 4.1% and 3.9%)"``, saying when one side borrowed."""
    sides = []
    for value, groups in ((den, groups_b), (num, groups_a)):
        if len(groups) > 1:
            sides.append(f"{len(groups)} (spread {process_spread(groups):.1%})")
        else:
            old = isinstance(value, BenchmarkResult) and value.process is None
            sides.append(
                "1 (saved before processes were kept: it borrows the other side's spread)"
                if old
                else "1 (it borrows the other side's spread)"
            )
    return f"baseline {sides[0]}, new {sides[1]}; the interval counts the spread between them"


def _groups(value: Any) -> list[np.ndarray]:
    return value.groups if isinstance(value, BenchmarkResult) else [_times(value)]


def _processes(value: Any) -> int:
    return value.processes if isinstance(value, BenchmarkResult) else 1


def _same_process(a: Any, b: Any) -> bool:
    """Whether two one-process measurements come from the same process. Plain arrays of
    seconds, and two results that both do not say (built by hand), are taken to: nothing says
    otherwise; a result that names its process and one that does not (saved before processes
    were recorded) are not."""
    if not isinstance(a, BenchmarkResult) or not isinstance(b, BenchmarkResult):
        return True
    return a.process == b.process


def check_margin(margin: Any) -> float:
    """``margin`` checked: a fraction in [0, 1) or ``"5%"``; ``None`` gives :data:`MARGIN`."""
    if margin is None:
        return MARGIN
    if isinstance(margin, str):  # "5%", as the threshold is spelt
        margin = threshold_fraction(margin)
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < 1:
        raise EveryOBenchmarkError(
            f"margin is a fraction between 0 and 1 (0.05 = 5 %), got {margin!r}"
        )
    return float(margin)


def _measured_environment(value: Any) -> dict | None:
    """The result's environment record with the BLAS threads its timed calls ran with.

    The record is taken after ``threads=`` has put the threads back (and a grid's once per
    process), so ``threads=1`` against ``threads=2`` read as the same settings; the machine
    state, read while the threads were in force, says what the measurement used."""
    env = getattr(value, "environment", None)
    state = getattr(value, "machine_state", None)
    threads = None if state is None else state.blas_threads
    numpy = env.get("numpy") if isinstance(env, dict) else None
    blas = numpy.get("blas") if isinstance(numpy, dict) else None
    if threads is None or not isinstance(blas, dict) or blas.get("threads") is None:
        return env  # (a record without BLAS threads compares none)
    return {**env, "numpy": {**numpy, "blas": {**blas, "threads": threads}}}


def _machine_text(value: Any) -> str:
    """``"quiet (other processes used 0.0 of 2 cores; 2 BLAS threads)"``, or ``""``."""
    state = getattr(value, "machine_state", None)
    return "" if state is None else f"{state.verdict} ({state.reason})"


def regression_verdict(
    baseline_times: Any,
    new_times: Any,
    *,
    threshold: float = 0.10,
    statistic: str = "median",
    confidence: float = 0.95,
    margin: float = MARGIN,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised verdicts for samples from one process each: samples along the last axis,
    one verdict per leading index.

    Returns ``(verdict, ratio, ci_low, ci_high)`` where ``ratio = T_new / T_baseline`` and
    ``verdict`` holds the strings of :attr:`RegressionCheck.verdict`.
    """
    threshold = threshold_fraction(threshold)
    margin = check_margin(margin)
    est, lo, hi = ratio_interval(
        new_times, baseline_times, statistic=statistic, confidence=confidence
    )
    return np.asarray(gate_verdict(est, lo, hi, threshold, margin)), est, lo, hi


def machine_caveat(
    a: Any, b: Any, *, sides: tuple[str, str] = ("baseline", "new result"), apart: bool = False
) -> str:
    """Why the machine's state makes two measurements incomparable, or ``""`` when it does not
    (or when either side did not record it).

    Either side measured on a contended machine, or one on a quiet and the other on a busy
    one (another process's load slows a measurement by itself) with loads at least
    :data:`LOAD_GAP_CORES` (and a quarter of the cores) apart, makes them incomparable, unless
    the busy side mostly waited (:attr:`~everyo.machine_state.MachineState.mostly_waited`: a
    sleep or I/O hardly slows down). ``apart``: the two were measured in separate runs (a
    saved baseline and a check, worker processes minutes apart); then a busy side is enough,
    since the load moves between the runs (an A/A beside a BLAS burner read -66 % and +73 %,
    each with a tight interval over six processes).
    """
    states = [getattr(x, "machine_state", None) for x in (a, b)]
    named = [(side, s) for side, s in zip(sides, states) if s is not None]
    contended = [(side, s) for side, s in named if not s.trusted]
    if contended:
        side, state = contended[0]
        return f"the {side} was measured on a contended machine: {state.reason}"
    busy = [(side, s) for side, s in named if s.verdict == "busy" and not s.mostly_waited]
    if apart and busy:
        side, state = busy[0]
        return (
            f"the {side} was measured on a busy machine ({state.reason}) in another run: the "
            "load moves between runs, so runs measured apart compare only on a quiet machine"
        )
    if len(named) == 2 and {named[0][1].verdict, named[1][1].verdict} == {"quiet", "busy"}:
        (_, a_state), (_, b_state) = named
        side, state = next((side, s) for side, s in named if s.verdict == "busy")
        gap = abs((a_state.others_cores or 0.0) - (b_state.others_cores or 0.0))
        if not state.mostly_waited and gap >= max(LOAD_GAP_CORES, 0.25 * state.usable_cores):
            return (
                f"only the {side} was measured on a busy machine ({state.reason}); measure "
                "both under the same conditions"
            )
    return ""


def _result(value: Timings) -> Any:
    """A saved result loaded (its machine state is needed), anything else as it is."""
    return BenchmarkResult.load(value) if isinstance(value, (str, os.PathLike)) else value


def _times(value: Timings) -> np.ndarray:
    if isinstance(value, BenchmarkResult):
        return value.times
    if isinstance(value, (str, os.PathLike)):
        return BenchmarkResult.load(value).times
    times = np.asarray(value, dtype=float)
    if times.ndim != 1:
        raise EveryOBenchmarkError(
            "pass a BenchmarkResult, a path to a saved one, or a 1-D array of seconds"
        )
    return times
