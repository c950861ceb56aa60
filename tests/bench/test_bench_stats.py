"""Statistics on known samples."""

from __future__ import annotations

import math

import numpy as np
import pytest

from everyo.bench.stats import ratio_interval, summarize, t_quantile
from everyo.errors import EveryOBenchmarkError


def test_summarize_known_sample():
    s = summarize([4.0, 1.0, 3.0, 2.0, 10.0])
    assert s["n"] == 5
    assert s["mean"] == 4.0
    assert s["median"] == 3.0
    assert s["min"] == 1.0 and s["max"] == 10.0
    assert s["std"] == pytest.approx(math.sqrt(50 / 4))  # squared deviations 0,9,1,4,36
    assert s["p5"] == pytest.approx(1.2)  # linear interpolation between 1 and 2
    assert s["p95"] == pytest.approx(8.8)


def test_summarize_single_value_has_zero_std():
    assert summarize([2.5])["std"] == 0.0


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf")]])
def test_summarize_rejects_empty_and_non_finite(bad):
    with pytest.raises(EveryOBenchmarkError):
        summarize(bad)


@pytest.mark.parametrize(
    "p, df, expected",
    [
        (0.975, 1, 12.706205),
        (0.975, 2, 4.302653),
        (0.975, 10, 2.228139),
        (0.975, 30, 2.042272),
        (0.995, 60, 2.660283),
        (0.975, math.inf, 1.959964),
    ],
)
def test_t_quantile_matches_tables(p, df, expected):
    assert float(t_quantile(p, df)) == pytest.approx(expected, rel=1e-3)


def test_t_quantile_is_vectorised():
    q = t_quantile(0.975, np.array([2.0, 10.0, np.inf]))
    assert q.shape == (3,) and np.all(np.diff(q) < 0)


def test_ratio_of_identical_samples_is_one_with_zero_width():
    est, lo, hi = ratio_interval([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    assert float(est) == float(lo) == float(hi) == 1.0


@pytest.mark.parametrize("statistic", ["median", "mean"])
def test_ratio_estimate_on_scaled_sample(statistic):
    base = np.array([1.0, 1.1, 0.9, 1.05, 0.95, 1.2, 1.0])
    est, lo, hi = ratio_interval(base * 2, base, statistic=statistic)
    assert float(est) == pytest.approx(2.0)
    assert lo < 2.0 < hi


@pytest.mark.parametrize("statistic", ["median", "mean"])
def test_interval_coverage_on_lognormal_samples(statistic):
    # 2,000 A/A pairs: a 95 % interval for a true ratio of 1 must contain 1 about 95 % of the time
    rng = np.random.default_rng(1)
    a = rng.lognormal(0.0, 0.08, (2000, 100))
    b = rng.lognormal(0.0, 0.08, (2000, 100))
    _, lo, hi = ratio_interval(a, b, statistic=statistic)
    coverage = np.mean((lo < 1) & (hi > 1))
    assert 0.92 <= coverage <= 0.98


def test_median_interval_ignores_outliers():
    rng = np.random.default_rng(2)
    a = rng.lognormal(0.0, 0.05, 100)
    spiky = a.copy()
    spiky[::10] *= 50  # 10 % of calls hit by a scheduler hiccup
    _, lo, hi = ratio_interval(a, a)
    _, lo_s, hi_s = ratio_interval(spiky, a)
    assert (hi_s - lo_s) < 2 * (hi - lo)


def test_bootstrap_agrees_with_asymptotic():
    rng = np.random.default_rng(3)
    a = rng.lognormal(0.1, 0.1, 200)
    b = rng.lognormal(0.0, 0.1, 200)
    boot = ratio_interval(a, b, method="bootstrap", seed=0)
    asym = ratio_interval(a, b)
    assert float(boot[0]) == pytest.approx(float(asym[0]))
    assert float(boot[1]) == pytest.approx(float(asym[1]), rel=0.02)
    assert float(boot[2]) == pytest.approx(float(asym[2]), rel=0.02)
    assert ratio_interval(a, b, method="bootstrap", seed=0)[1] == boot[1]  # seeded


@pytest.mark.parametrize(
    "kwargs",
    [
        {"statistic": "mode"},
        {"confidence": 1.5},
        {"method": "magic"},
    ],
)
def test_ratio_interval_rejects_bad_options(kwargs):
    with pytest.raises(EveryOBenchmarkError):
        ratio_interval([1.0, 2.0], [1.0, 2.0], **kwargs)


def test_ratio_interval_rejects_non_positive_and_tiny_samples():
    with pytest.raises(EveryOBenchmarkError, match="positive"):
        ratio_interval([1.0, 0.0], [1.0, 2.0])
    with pytest.raises(EveryOBenchmarkError, match="at least 2"):
        ratio_interval([1.0], [1.0, 2.0])
