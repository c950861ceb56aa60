"""compare_precisions(): errors against float64 with the guide's tolerances, per dtype."""

from __future__ import annotations

import numpy as np
import pytest
from bench_fakes import FakeClock

from everyo.bench import compare_precisions
from everyo.errors import EveryOBenchmarkError

X = np.random.default_rng(0).standard_normal((32, 32))


def test_errors_and_verdicts_per_dtype():
    result = compare_precisions(np.tanh, X, warmup=0, repeat=2)
    assert [r.dtype for r in result.rows] == ["float16", "float32", "float64"]
    ref = result["float64"]
    assert ref.max_abs_error == 0 and ref.passed and ref.speedup == 1.0
    f32, f16 = result["float32"], result["float16"]
    expected32 = np.abs(np.tanh(X.astype(np.float32)).astype(np.float64) - np.tanh(X)).max()
    assert f32.max_abs_error == pytest.approx(expected32)
    assert f32.passed  # float32 tanh is within rtol=1e-5
    assert not f16.passed  # float16 carries ~3 significant digits
    assert f16.max_rel_error > 1e-4
    assert f16.output_dtype == "float16"
    text = str(result)
    assert "FAIL" in text and "pass" in text and "rtol=1e-05" in text


def test_tolerances_decide_the_verdict():
    loose = compare_precisions(np.tanh, X, ("float16",), rtol=1e-2, atol=1e-3, repeat=2)
    assert loose["float16"].passed
    assert [r.dtype for r in loose.rows] == ["float64", "float16"]  # the reference is added


def test_tuple_inputs_and_non_float_arguments_pass_through():
    def scaled_sum(a, b, axis):
        return (a @ b).sum(axis=axis)

    result = compare_precisions(scaled_sum, (X, X, 0), ("float32",), repeat=2)
    assert result["float32"].status == "ok"
    assert result["float32"].output_dtype == "float32"


def test_timing_uses_the_clock_and_gives_speedups():
    clock = FakeClock()

    def work(x):
        clock.advance(0.001 * x.dtype.itemsize)  # pretend time scales with bytes per element
        return x * 2

    result = compare_precisions(work, X, ("float32", "float64"), clock=clock, repeat=3)
    assert result["float64"].median_ms == pytest.approx(8.0)
    assert result["float32"].median_ms == pytest.approx(4.0)
    assert result["float32"].speedup == pytest.approx(2.0)


def test_unsupported_dtype_is_an_error_row():
    def picky(x):
        if x.dtype == np.float16:
            raise TypeError("float16 is not supported here")
        return x

    result = compare_precisions(picky, X, repeat=2)
    assert result["float16"].status == "error"
    assert "float16 is not supported" in result["float16"].message
    assert "error:" in str(result)


def test_to_dataframe():
    df = compare_precisions(np.tanh, X, ("float32",), repeat=2).to_dataframe()
    assert list(df["dtype"]) == ["float64", "float32"]
    assert {"max_abs_error", "max_rel_error", "passed", "median_ms"} <= set(df.columns)


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((np.tanh, X, ("int32",)), {}, "floating"),
        ((np.tanh, X, ("float99",)), {}, "unknown dtype"),
        ((42, X), {}, "needs a callable"),
        ((np.tanh, X), {"repeat": 0}, "repeat must be an integer >= 1"),
        ((np.tanh, X), {"warmup": -1}, "warmup must be an integer >= 0"),
        ((np.tanh, X), {"repeat": 2.5}, "repeat must be an integer >= 1"),
    ],
)
def test_bad_inputs(args, kwargs, message):
    with pytest.raises(EveryOBenchmarkError, match=message):
        compare_precisions(*args, **kwargs)


def test_failing_reference_is_an_error():
    def no_float64(x):
        if x.dtype == np.float64:
            raise ValueError("nope")
        return x

    with pytest.raises(EveryOBenchmarkError, match="reference run failed"):
        compare_precisions(no_float64, X, repeat=2)


def test_numpy_integer_counts_are_accepted():
    result = compare_precisions(np.tanh, X, ("float32",), warmup=np.int64(0), repeat=np.int32(2))
    assert result["float32"].status == "ok"
