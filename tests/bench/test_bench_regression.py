"""compare() and check_regression() on synthetic timing samples (no wall-clock timing)."""

from __future__ import annotations

import numpy as np
import pytest

from everyo.bench import (
    BenchmarkResult,
    check_regression,
    compare,
    regression_verdict,
)
from everyo.errors import EveryOBenchmarkError

TRIALS, N = 2000, 100


def noisy_runs(rng, median_s, sigma, trials=TRIALS, spikes=True):
    """Realistic timing noise: lognormal around the median, plus rare slow calls."""
    times = rng.lognormal(np.log(median_s), sigma, (trials, N))
    if spikes:
        hit = rng.random((trials, N)) < 0.02  # scheduler hiccups, page faults
        times = np.where(hit, times * rng.uniform(1.5, 5.0, (trials, N)), times)
    return times


@pytest.mark.parametrize("sigma", [0.05, 0.1])
def test_aa_false_alarm_rate_is_at_most_five_percent(sigma):
    rng = np.random.default_rng(12345)
    base = noisy_runs(rng, 0.010, sigma)
    same = noisy_runs(rng, 0.010, sigma)
    verdict, *_ = regression_verdict(base, same, threshold=0.10)
    assert verdict.shape == (TRIALS,)
    assert np.mean(verdict == "regression") <= 0.05
    # compare(): "slower" on identical code is a two-sided 95 % test's one tail
    slower = np.array([compare(b, s).verdict == "slower" for b, s in zip(base[:300], same[:300])])
    assert slower.mean() <= 0.05


@pytest.mark.parametrize("sigma", [0.05, 0.1])
def test_a_planted_twenty_percent_slowdown_is_always_caught(sigma):
    rng = np.random.default_rng(54321)
    base = noisy_runs(rng, 0.010, sigma)
    slow = noisy_runs(rng, 0.012, sigma)
    verdict, ratio, lo, hi = regression_verdict(base, slow, threshold=0.10)
    assert np.all(verdict == "regression")
    assert np.median(ratio) == pytest.approx(1.2, rel=0.02)


def test_a_twenty_percent_speedup_is_an_improvement_not_a_regression():
    rng = np.random.default_rng(7)
    base = noisy_runs(rng, 0.012, 0.08, trials=200)
    fast = noisy_runs(rng, 0.010, 0.08, trials=200)
    verdict, *_ = regression_verdict(base, fast)
    assert np.all(verdict == "improvement")


def test_too_noisy_to_tell_is_inconclusive():
    rng = np.random.default_rng(8)
    base = rng.lognormal(np.log(0.010), 1.0, 10)
    new = base * 1.3
    new[::2] = base[::2] * 0.7  # a large but unreliable change
    check = check_regression(new, base)
    assert check.verdict in ("inconclusive", "ok")
    assert check.passed


def test_check_regression_reports_the_guides_percentage(tmp_path):
    base = BenchmarkResult(times=[0.010] * 50 + [0.0101] * 50, name="fwd")
    new = BenchmarkResult(times=[0.012] * 50 + [0.01212] * 50, name="fwd")
    path = base.to_json(tmp_path / "base.json")
    check = check_regression(new, path)
    assert check.regression_pct == pytest.approx((0.01206 - 0.01005) / 0.01005 * 100)
    assert check.verdict == "regression" and not check.passed
    text = str(check)
    assert "Regression: +20.00%" in text and "REGRESSION" in text


def test_guide_example_ten_to_twelve_ms_is_twenty_percent():
    check = check_regression(np.full(20, 0.012), np.full(20, 0.010))
    assert check.regression_pct == pytest.approx(20.0)
    assert check.verdict == "regression"


def test_threshold_decides_what_matters():
    rng = np.random.default_rng(9)
    base = rng.lognormal(np.log(0.010), 0.02, 200)
    new = base * 1.05  # real, but small
    assert check_regression(new, base, threshold=0.10).verdict == "ok"
    assert check_regression(new, base, threshold=0.02).verdict == "regression"


def test_compare_speedup_and_interval():
    rng = np.random.default_rng(10)
    old = rng.lognormal(np.log(0.012), 0.05, 100)
    new = rng.lognormal(np.log(0.010), 0.05, 100)
    c = compare(old, new)
    assert c.speedup == pytest.approx(1.2, rel=0.03)
    assert c.ci_low < c.speedup < c.ci_high
    assert c.verdict == "faster"
    assert compare(new, old).verdict == "slower"
    assert "Speedup: " in str(c)
    assert compare(old, old).verdict == "no significant change"


def test_compare_with_bootstrap_and_mean():
    rng = np.random.default_rng(11)
    old = rng.lognormal(np.log(0.012), 0.05, 100)
    new = rng.lognormal(np.log(0.010), 0.05, 100)
    assert compare(old, new, method="bootstrap").verdict == "faster"
    assert compare(old, new, statistic="mean").verdict == "faster"


@pytest.mark.parametrize("threshold", [-0.1, "ten%", "-5%", "5000%", True, None])
def test_bad_threshold_is_rejected(threshold):
    with pytest.raises(EveryOBenchmarkError, match="threshold"):
        check_regression([1.0, 1.1], [1.0, 1.1], threshold=threshold)


def test_threshold_in_percent_text_is_the_same_threshold():
    """``"10%"`` is accepted wherever a threshold is (issue 33): the same check as 0.10."""
    rng = np.random.default_rng(9)
    base = rng.lognormal(np.log(0.010), 0.02, 200)
    new = base * 1.05
    for text, fraction in (("10%", 0.10), (" 2 % ", 0.02)):
        check = check_regression(new, base, threshold=text)
        assert check.threshold == pytest.approx(fraction)
        assert check.verdict == check_regression(new, base, threshold=fraction).verdict


@pytest.mark.parametrize("threshold", [1, 10, 50.0])
def test_a_python_threshold_of_one_or_more_names_the_unit(threshold):
    """``threshold=10`` meant 10 %, not 1000 %: refused with the spelling that works."""
    with pytest.raises(EveryOBenchmarkError, match=r"is a fraction \(0.10 = 10 %\).*'\d+%'"):
        check_regression([1.0, 1.1], [1.0, 1.1], threshold=threshold)


def test_two_dimensional_input_needs_the_vectorised_function():
    with pytest.raises(EveryOBenchmarkError, match="1-D"):
        compare(np.ones((2, 3)), np.ones((2, 3)))


def test_the_gates_rule_is_stated_once_for_one_ratio_and_for_many():
    from everyo.bench.regression import gate_verdict

    est = np.array([1.0, 1.08, 1.3, 1.3, 0.7, 0.7, 1.3, np.nan])
    lo = np.array([0.9, 1.02, 1.2, 0.95, 0.6, 0.65, 0.9, np.nan])
    hi = np.array([1.1, 1.15, 1.4, 1.5, 0.8, 1.05, 1.8, np.nan])
    many = gate_verdict(est, lo, hi, 0.10, 0.05)
    assert many.tolist() == [
        "ok",  # no change
        "ok",  # within the 10 % threshold, although its interval is above 1
        "regression",
        "inconclusive",
        "improvement",
        "inconclusive",
        "inconclusive",
        "inconclusive",  # not a number: no verdict either way
    ]
    one = [gate_verdict(e, a, b, 0.10, 0.05) for e, a, b in zip(est, lo, hi)]
    assert one == many.tolist() and all(isinstance(v, str) for v in one)
    assert gate_verdict(1.07, 1.01, 1.2, 0.0, 0.05) == "regression"  # no threshold: the margin
    assert gate_verdict(1.03, 1.01, 1.05, 0.0, 0.05) == "ok"  # inside the 5 % margin
