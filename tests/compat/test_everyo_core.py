"""Reference EveryO §1 (core): variance, is_tensor, device, and the exception names."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import gradcheck

import everyo as eo


def test_variance_is_the_population_variance_over_any_axes():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4) ** 1.5
    assert eo.variance(a).item() == pytest.approx(a.var(), rel=1e-5)
    np.testing.assert_allclose(eo.variance(a, axis=1).numpy(), a.var(axis=1), rtol=1e-5)
    out = eo.variance(a, axis=(0, 2), keepdims=True)
    assert out.shape == (1, 3, 1)
    np.testing.assert_allclose(out.numpy(), a.var(axis=(0, 2), keepdims=True), rtol=1e-5)
    # ddof=0, unlike torch.var's default: [1, 2, 3, 4] -> 1.25, not 1.6667
    assert eo.variance([1, 2, 3, 4]).item() == 1.25


def test_variance_of_lists_and_integers_is_float32():
    assert eo.variance([1, 2, 3]).dtype == eo.float32
    assert eo.variance(np.array([1.0, 2.0])).dtype == eo.float64  # float64 stays


def test_variance_gradient_matches_finite_differences():
    x = np.random.default_rng(0).standard_normal((3, 4))
    assert gradcheck(lambda t: eo.variance(t, axis=1), x)
    assert gradcheck(lambda t: eo.variance(t), x)


@pytest.mark.parametrize("axis", [2, -3, (0, 5)])
def test_variance_axis_out_of_range_is_a_shape_error(axis):
    with pytest.raises(eo.EveryOShapeError, match="out of range"):
        eo.variance(eo.ones(2, 3), axis=axis)


def test_is_tensor():
    assert eo.is_tensor(eo.ones(2)) and eo.is_tensor(eo.nn.Parameter(eo.ones(2)))
    assert not any(eo.is_tensor(x) for x in (np.ones(2), [1.0], 1.0, None, "x"))


def test_device_specs_and_fallback():
    cpu = eo.device()
    assert str(cpu) == "cpu" and repr(cpu) == "device('cpu')" and not cpu.is_cuda
    assert eo.device(None) == cpu and eo.device(" CPU ") == cpu and eo.device(cpu) is cpu
    auto = eo.device("auto")  # never warns, never raises
    assert auto == (eo.device("cuda:0", strict=True) if eo.cuda.is_available() else cpu)
    for bad in ("cuda:x", "tpu", "cuda:-1", "cpu:1"):
        with pytest.raises(eo.EveryODeviceError):
            eo.device(bad)


@pytest.mark.skipif(eo.cuda.is_available(), reason="checks the no-GPU fallback")
def test_device_without_cuda_falls_back_or_raises_the_cuda_error():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert eo.device("gpu") == eo.device("cpu")
    with pytest.raises(eo.EveryOCudaError):
        eo.device("cuda", strict=True)


def test_exception_names_and_hierarchy():
    for name in ("EveryOShapeError", "EveryODeviceError", "EveryODTypeError",
                 "EveryOGradientError", "EveryOSerializationError", "EveryOConfigurationError",
                 "EveryOBackendError", "EveryOCudaError"):  # fmt: skip
        assert issubclass(getattr(eo, name), eo.EveryOError)
    assert issubclass(eo.EveryOCudaError, eo.EveryOBackendError)
    # code written for the reference catches EveryO errors by these names; everyo's errors are
    # additionally ValueError/TypeError where the Python convention expects it
    assert issubclass(eo.EveryOShapeError, ValueError)
