"""Statistics for timing samples: summaries and confidence intervals for ratios.

Every function works along the last axis, so one call can summarise a single run (a 1-D array
of times) or thousands of synthetic runs at once (a 2-D array, one run per row). The regression
tests rely on that to check false-alarm rates over many trials in well under a second.

Timing noise is multiplicative (a slower moment slows the whole call by a factor), so ratios are
handled on the log scale, where their confidence intervals are symmetric.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

from everyo.errors import EveryOBenchmarkError

__all__ = [
    "summarize",
    "t_quantile",
    "ratio_interval",
    "STATISTICS",
    "PROCESS_STATISTICS",
    "statistic_fn",
    "outliers",
    "stability",
]

STATISTICS = ("median", "mean")
PROCESS_STATISTICS = (*STATISTICS, "min")
"""What one worker process's calls may be summed up by in :func:`process_ratio_interval`: also
its fastest call, ``"min"``, which the regression gate reads (another program, a VM's
neighbours, only ever add time to a call; docs/benchmarking.md). A call-level interval
(:func:`ratio_interval`) takes :data:`STATISTICS` only: a bootstrap of a minimum is degenerate."""
_STATISTIC_FNS = {"median": np.median, "mean": np.mean, "min": np.min}
_MAD_TO_SIGMA = 1.482602218505602  # 1 / Phi^-1(3/4): MAD of a normal sample -> its sigma
_MEDIAN_EFFICIENCY = math.sqrt(math.pi / 2)  # se(median) / se(mean) for normal data


def summarize(times: Any) -> dict[str, float | int]:
    """Summarise one sample of timings (any unit; the results keep it).

    Parameters
    ----------
    times : array-like
        A non-empty 1-D sample.

    Returns
    -------
    dict
        ``n, mean, median, std`` (sample standard deviation, 0 for one value), ``min, max, p5,
        p95`` (linear-interpolated percentiles).

    Examples
    --------
    >>> summarize([1.0, 2.0, 3.0, 4.0])["median"]
    2.5
    """
    x = _as_sample(times)
    return {
        "n": int(x.size),
        "mean": float(x.mean()),
        "median": float(np.median(x)),
        "std": float(x.std(ddof=1)) if x.size > 1 else 0.0,
        "min": float(x.min()),
        "max": float(x.max()),
        "p5": float(np.percentile(x, 5)),
        "p95": float(np.percentile(x, 95)),
    }


OUTLIER_Z = 3.5
"""Modified z-score (Iglewicz and Hoaglin: 0.6745 (x - median) / MAD) beyond which a timing is an
outlier."""
STABLE_CV, NOISY_CV = 0.05, 0.15
"""Robust coefficient of variation (1.4826 MAD / median) up to which timings are ``"stable"``,
and up to which ``"noisy"``; above it ``"unstable"`` (pyperf warns from a standard deviation of
10 % of the mean)."""


def outliers(times: Any) -> np.ndarray:
    """Indices of the timings that break from the rest (modified z-score above
    :data:`OUTLIER_Z`); empty when the spread is zero.

    >>> outliers([1.0, 1.01, 0.99, 1.0, 5.0]).tolist()
    [4]
    """
    x = _as_sample(times)
    median = np.median(x)
    mad = np.median(np.abs(x - median))
    if mad == 0:
        return np.flatnonzero(x != median) if x.size > 2 else np.array([], dtype=np.int64)
    return np.flatnonzero(np.abs(0.6745 * (x - median) / mad) > OUTLIER_Z)


def stability(times: Any) -> tuple[str, float]:
    """``("stable" | "noisy" | "unstable", robust coefficient of variation)`` of a sample.

    The spread decides first (up to :data:`STABLE_CV`, :data:`NOISY_CV`); outliers then lower
    the verdict, since they move the mean that throughput is often read from: more than 2 % of
    the calls (and at least two) make it at best ``"noisy"``, more than 10 % ``"unstable"``.

    >>> stability([1.0, 1.01, 0.99, 1.0, 1.02])[0]
    'stable'
    """
    x = _as_sample(times)
    median = float(np.median(x))
    cv = _MAD_TO_SIGMA * float(np.median(np.abs(x - median))) / median if median > 0 else 0.0
    level = 0 if cv <= STABLE_CV else 1 if cv <= NOISY_CV else 2
    n_out = len(outliers(x))
    if n_out > 0.1 * x.size:
        level = 2
    elif n_out >= 2 and n_out > 0.02 * x.size:
        level = max(level, 1)
    return ("stable", "noisy", "unstable")[level], cv


def check_one_process_statistic(statistic: str) -> None:
    """Refuse a statistic that needs several processes on each side (``"min"``: a comparison
    of processes' fastest calls) when a side holds one (the CLI's ``--statistic min`` says the
    same, before timing)."""
    if statistic not in STATISTICS:
        raise EveryOBenchmarkError(
            f"statistic={statistic!r} compares worker processes' fastest calls, and a side "
            f"holds one process: measure both with processes=N, or use 'median'"
        )


def statistic_fn(statistic: str):
    """The numpy function (``np.median``, ``np.mean``, ``np.min``) named by one of
    :data:`PROCESS_STATISTICS`."""
    return _STATISTIC_FNS[statistic]


def t_quantile(p: float, df: Any) -> np.ndarray:
    """Quantile ``p`` of Student's t distribution with ``df`` degrees of freedom.

    Exact for 1 and 2 degrees of freedom; a Cornish-Fisher expansion around the normal quantile
    otherwise (for ``p`` up to 0.995: relative error under 1.5 % from 4 degrees of freedom on,
    under 0.1 % from 10 on, which is where timing samples live). ``df`` may be an array and may
    hold ``inf`` (the normal quantile).

    Examples
    --------
    >>> round(float(t_quantile(0.975, 10)), 3)
    2.228
    """
    if not 0.0 < p < 1.0:
        raise EveryOBenchmarkError(f"t_quantile needs 0 < p < 1, got {p!r}")
    df = np.asarray(df, dtype=float)
    z = NormalDist().inv_cdf(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(df > 0, df, np.nan)
        series = (
            z
            + (z**3 + z) / (4 * v)
            + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
        )
    exact1 = math.tan(math.pi * (p - 0.5))
    exact2 = (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    out = np.where(df <= 1, exact1, np.where(df <= 2, exact2, series))
    return np.where(np.isinf(df), z, out)


def ratio_interval(
    numerator: Any,
    denominator: Any,
    *,
    statistic: str = "median",
    confidence: float = 0.95,
    method: str = "asymptotic",
    n_boot: int = 2000,
    seed: int | None = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Estimate ``stat(numerator) / stat(denominator)`` with a confidence interval.

    Parameters
    ----------
    numerator, denominator : array-like
        Positive samples along the last axis; leading axes are independent runs (broadcast).
    statistic : {"median", "mean"}
        Median (robust to the occasional slow call; the default) or mean.
    confidence : float
        Two-sided coverage of the interval.
    method : {"asymptotic", "bootstrap"}
        ``"asymptotic"``: a Welch interval on the log scale. For the median the spread comes
        from the median absolute deviation of the log times (so outliers do not widen it) and
        the standard error of a median is taken as sqrt(pi/2) times that of a mean; for the mean
        the delta method gives the standard error of log(mean). ``"bootstrap"``: a seeded
        percentile bootstrap with ``n_boot`` resamples (1-D samples only).

    Returns
    -------
    (estimate, low, high) : tuple of numpy arrays
        0-d arrays for 1-D inputs.

    Examples
    --------
    >>> est, lo, hi = ratio_interval([2.0, 2.1, 1.9, 2.0], [1.0, 1.05, 0.95, 1.0])
    >>> float(est), bool(lo < 2.0 < hi)
    (2.0, True)
    """
    if statistic not in STATISTICS:
        raise EveryOBenchmarkError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    if not 0.0 < confidence < 1.0:
        raise EveryOBenchmarkError(f"confidence must be between 0 and 1, got {confidence!r}")
    a, b = _as_sample(numerator, positive=True), _as_sample(denominator, positive=True)
    if method == "bootstrap":
        return _bootstrap(a, b, statistic, confidence, n_boot, seed)
    if method != "asymptotic":
        raise EveryOBenchmarkError(f"method must be 'asymptotic' or 'bootstrap', got {method!r}")
    if a.shape[-1] < 2 or b.shape[-1] < 2:
        raise EveryOBenchmarkError("a confidence interval needs at least 2 timings per sample")
    centre_a, var_a = _log_centre_and_variance(a, statistic)
    centre_b, var_b = _log_centre_and_variance(b, statistic)
    log_ratio = centre_a - centre_b
    se2 = var_a + var_b
    df = _welch_df(var_a, a.shape[-1], var_b, b.shape[-1])
    half = t_quantile(0.5 + confidence / 2, df) * np.sqrt(se2)
    low, high = np.exp(log_ratio - half), np.exp(log_ratio + half)
    if statistic == "median":
        # A busy machine makes times bimodal (calls preempted or not): the MAD sees one mode,
        # while each median can jump between them. The ratio of the medians' own
        # distribution-free intervals sees the jump; each is taken at the width whose ratio
        # matches Welch's for one normal mode (z / sqrt(2) each), and the interval is the wider.
        z = NormalDist().inv_cdf(0.5 + confidence / 2) / math.sqrt(2)
        each = 2 * NormalDist().cdf(z) - 1
        (a_lo, a_hi), (b_lo, b_hi) = _median_bounds(a, each), _median_bounds(b, each)
        low, high = np.minimum(low, a_lo / b_hi), np.maximum(high, a_hi / b_lo)
    return np.exp(log_ratio), low, high


def _as_sample(values: Any, *, positive: bool = False) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise EveryOBenchmarkError("a timing sample must hold at least one value")
    if not np.all(np.isfinite(x)):
        raise EveryOBenchmarkError("timings must be finite numbers (found NaN or inf)")
    if positive and np.any(x <= 0):
        raise EveryOBenchmarkError("timings must be positive to form a ratio")
    return x


def _log_centre_and_variance(x: np.ndarray, statistic: str) -> tuple[np.ndarray, np.ndarray]:
    """log(stat(x)) and the squared standard error of that log, along the last axis."""
    n = x.shape[-1]
    if statistic == "mean":
        mean = x.mean(axis=-1)
        # delta method: var(log m) ~= var(m) / m^2
        return np.log(mean), x.var(axis=-1, ddof=1) / (n * mean**2)
    logs = np.log(x)
    centre = np.median(logs, axis=-1, keepdims=True)
    sigma = _MAD_TO_SIGMA * np.median(np.abs(logs - centre), axis=-1)
    # A MAD of zero (quantised or identical timings) would claim perfect precision.
    sigma = np.where(sigma > 0, sigma, logs.std(axis=-1, ddof=1))
    se = _MEDIAN_EFFICIENCY * sigma / math.sqrt(n)
    return np.log(np.median(x, axis=-1)), se**2


def _median_bounds(x: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """The distribution-free interval of a median: the order statistics around it that cover
    it with ``confidence`` (the sign test's interval, normal approximation to the binomial)."""
    n = x.shape[-1]
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    lo = min(max(int(math.floor(n / 2 - z * math.sqrt(n) / 2)), 0), n - 1)
    hi = max(min(int(math.ceil(n / 2 + z * math.sqrt(n) / 2)) - 1, n - 1), 0)
    ordered = np.sort(x, axis=-1)
    return ordered[..., lo], ordered[..., hi]


def _welch_df(var_a: np.ndarray, n_a: int, var_b: np.ndarray, n_b: int) -> np.ndarray:
    num = (var_a + var_b) ** 2
    den = var_a**2 / (n_a - 1) + var_b**2 / (n_b - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, np.inf)


def _bootstrap(a, b, statistic, confidence, n_boot, seed):
    if a.ndim != 1 or b.ndim != 1:
        raise EveryOBenchmarkError("the bootstrap takes 1-D samples; use method='asymptotic'")
    if n_boot < 100:
        raise EveryOBenchmarkError(f"n_boot must be at least 100, got {n_boot}")
    stat = statistic_fn(statistic)
    rng = np.random.default_rng(seed)
    boot_a = stat(a[rng.integers(0, a.size, (n_boot, a.size))], axis=1)
    boot_b = stat(b[rng.integers(0, b.size, (n_boot, b.size))], axis=1)
    ratios = boot_a / boot_b
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(ratios, [tail, 100 - tail])
    return np.asarray(stat(a) / stat(b)), np.asarray(lo), np.asarray(hi)


def process_spread(groups: Any) -> float:
    """The spread between processes: the standard deviation of the log of each process's
    median, as a fraction (``exp(sd) - 1``); 0 for one process."""
    logs = np.log([np.median(_as_sample(g, positive=True)) for g in groups])
    return float(np.expm1(logs.std(ddof=1))) if logs.size > 1 else 0.0


def process_ratio_interval(
    numerator: Any,
    denominator: Any,
    *,
    statistic: str = "median",
    confidence: float = 0.95,
    spread: float | None = None,
    run_spread: float = 0.0,
) -> tuple[float, float, float]:
    """``T(numerator) / T(denominator)`` with an interval that counts the spread between
    processes.

    Each side is a list of samples, one per process. ``T`` is the geometric mean of the
    processes' ``statistic``; the interval is Welch's on the log of those per-process figures,
    so a process's own noise and the differences between processes both widen it (the
    per-process median, as pyperf keeps per-process values). A side measured in one process
    cannot show its spread: it borrows the other side's, the usual assumption that one
    workload's processes vary alike (a baseline saved before processes were kept). When both
    sides hold one process, ``spread`` (a between-process standard deviation on the log scale,
    e.g. :data:`PROCESS_SPREAD`) widens the calls' own interval; ``None`` leaves it as
    :func:`ratio_interval` gives it. ``run_spread`` (the standard deviation of the log of the
    ratio of two runs' figures, on a steady machine: :data:`~everyo.bench.regression.RUN_SPREAD`)
    widens the interval of two sides measured in separate runs by what whole runs differ by,
    which no process of either run shows.

    Examples
    --------
    >>> same = [[1.0, 1.01, 0.99], [1.3, 1.31, 1.29], [0.8, 0.81, 0.79]]
    >>> est, lo, hi = process_ratio_interval(same, same)
    >>> round(est, 3), bool(lo < 0.8 and hi > 1.25)
    (1.0, True)
    """
    if statistic not in PROCESS_STATISTICS:
        raise EveryOBenchmarkError(
            f"statistic must be one of {PROCESS_STATISTICS}, got {statistic!r}"
        )
    if not 0.0 < confidence < 1.0:
        raise EveryOBenchmarkError(f"confidence must be between 0 and 1, got {confidence!r}")
    stat = statistic_fn(statistic)
    if 1 in (len(numerator), len(denominator)):
        check_one_process_statistic(statistic)
    a = np.log([stat(_as_sample(g, positive=True)) for g in numerator])
    b = np.log([stat(_as_sample(g, positive=True)) for g in denominator])
    if a.size == 1 and b.size == 1:
        est, lo, hi = ratio_interval(
            numerator[0], denominator[0], statistic=statistic, confidence=confidence
        )
        if not spread:
            return float(est), float(lo), float(hi)
        half = np.log(float(hi) / float(lo)) / 2
        z = NormalDist().inv_cdf(0.5 + confidence / 2)
        half = math.sqrt(half**2 + (z * spread) ** 2 * 2)  # each side one draw of a process
        return float(est), float(est) * math.exp(-half), float(est) * math.exp(half)
    var_a = a.var(ddof=1) if a.size > 1 else None
    var_b = b.var(ddof=1) if b.size > 1 else None
    var_a = var_b if var_a is None else var_a
    var_b = var_a if var_b is None else var_b
    se_a, se_b = var_a / a.size, var_b / b.size
    # degrees of freedom: Welch's, from the sides that measured their own spread
    n_a, n_b = max(a.size, 2), max(b.size, 2)
    df = _welch_df(np.asarray(se_a), n_a, np.asarray(se_b), n_b)
    if a.size == 1 or b.size == 1:
        df = np.asarray(float(max(a.size, b.size) - 1))
    half = float(t_quantile(0.5 + confidence / 2, df)) * math.sqrt(se_a + se_b)
    if run_spread:
        half = math.sqrt(half**2 + (NormalDist().inv_cdf(0.5 + confidence / 2) * run_spread) ** 2)
    log_ratio = float(a.mean() - b.mean())
    return math.exp(log_ratio), math.exp(log_ratio - half), math.exp(log_ratio + half)


def process_mean(groups: Any, statistic: str = "median") -> float:
    """The geometric mean of each process's ``statistic``: the ``T`` of
    :func:`process_ratio_interval`."""
    stat = statistic_fn(statistic)
    return float(np.exp(np.mean(np.log([stat(_as_sample(g, positive=True)) for g in groups]))))
