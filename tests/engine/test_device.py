"""Devices: spellings, printing, CUDA fallback (one warning per process), strict, auto,
EVERYO_DISABLE_CUDA, malformed specs, mixed-device ops, a light import."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import everyo as eo
from everyo.core import backend
from everyo.core.device import Device, device
from everyo.core.tensor import Tensor

device_mod = sys.modules["everyo.core.device"]  # the module (everyo.core.device is the function)


@pytest.fixture
def no_gpu(monkeypatch):
    """Pretend no GPU is present, and let the fallback warning fire again."""
    monkeypatch.setattr(backend, "_cuda_count", 0)
    monkeypatch.delenv("EVERYO_DISABLE_CUDA", raising=False)
    device_mod._reset_fallback_warning()
    yield
    device_mod._reset_fallback_warning()


@pytest.fixture
def two_gpus(monkeypatch):
    """Pretend two GPUs are visible (only the spec resolution is exercised, no CuPy call)."""
    monkeypatch.setattr(backend, "_cuda_count", 2)
    monkeypatch.delenv("EVERYO_DISABLE_CUDA", raising=False)


def test_guide_cpu_example(capsys):
    cpu = device("cpu")
    print(cpu)
    assert capsys.readouterr().out == "cpu\n"
    assert repr(cpu) == "device('cpu')" and cpu.type == "cpu" and cpu.xp is np


def test_cuda_falls_back_with_one_warning(no_gpu):
    with pytest.warns(eo.EveryODeviceWarning, match="falling back to the CPU"):
        assert device("cuda") == device("cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second fallback is silent: once per process
        assert str(device("cuda:0")) == "cpu"
        assert str(device("gpu")) == "cpu"


def test_warning_class_is_its_own():
    assert issubclass(eo.EveryODeviceWarning, Warning)
    assert eo.EveryODeviceWarning is not UserWarning


def test_strict_raises(no_gpu):
    with pytest.raises(eo.EveryODeviceError, match="strict=True"):
        device("cuda", strict=True)
    with pytest.raises(eo.EveryODeviceError):
        eo.ones(2).cuda(strict=True)


def test_auto_is_silent(no_gpu):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert str(device("auto")) == "cpu"


def test_disable_env_forces_cpu(monkeypatch):
    monkeypatch.setattr(backend, "_cuda_count", 2)
    monkeypatch.setenv("EVERYO_DISABLE_CUDA", "1")
    device_mod._reset_fallback_warning()
    assert not eo.cuda.is_available() and eo.cuda.device_count() == 0
    assert str(device("auto")) == "cpu"
    with pytest.warns(eo.EveryODeviceWarning, match="EVERYO_DISABLE_CUDA"):
        assert str(device("cuda")) == "cpu"
    device_mod._reset_fallback_warning()


@pytest.mark.parametrize("spec", ["tpu", "cuda:abc", "cuda:-1", "cuda:", "cuda:1:2", "", "cpu:0"])
def test_malformed_specs_raise(spec):
    with pytest.raises(eo.EveryODeviceError, match=repr(spec)[1:-1] or "device"):
        device(spec)


def test_non_string_spec():
    with pytest.raises(eo.EveryODeviceError, match="string"):
        device(3)


def test_cuda_spec_resolution_with_gpus(two_gpus):
    assert str(device("cuda")) == "cuda:0"
    assert str(device("gpu:1")) == "cuda:1"
    assert device("auto") == Device("cuda", 0)
    assert device("cuda:1") is device("cuda:1")
    with pytest.raises(eo.EveryODeviceError, match="2 CUDA device"):
        device("cuda:2")


def test_device_equality_and_hash():
    assert device("cpu") == "cpu" and device(None) == device("cpu")
    assert device(device("cpu")) is device("cpu")
    assert device("cpu") != "tpu"
    assert len({device("cpu"), Device("cpu")}) == 1


def test_mixed_devices_raise_naming_both():
    cpu = eo.ones(2)
    fake = Tensor._make(np.ones(2, dtype=np.float32), Device("cuda", 0))  # a stand-in cuda tensor
    for op in (eo.add, eo.matmul, eo.multiply, lambda a, b: eo.concatenate([a, b])):
        with pytest.raises(eo.EveryODeviceError, match=r"cpu.*cuda:0"):
            op(cpu, fake)
    with pytest.raises(eo.EveryODeviceError, match="cuda:0"):
        eo.linear(cpu, fake)
    with pytest.raises(eo.EveryODeviceError, match="cuda:0"):
        eo.conv2d(eo.ones(1, 1, 3, 3), Tensor._make(np.ones((1, 1, 1, 1), "f4"), Device("cuda", 0)))


def test_cuda_module_without_gpu(no_gpu):
    assert eo.cuda.is_available() is False
    assert eo.cuda.device_count() == 0
    assert eo.cuda.synchronize() is None


def test_tensor_cuda_falls_back(no_gpu):
    t = eo.ones(2)
    with pytest.warns(eo.EveryODeviceWarning):
        assert t.cuda() is t
    with pytest.raises(TypeError, match=r"\.numpy\(\)"):
        np.asarray(Tensor._make(np.ones(2), Device("cuda", 0)))


def test_import_is_light():
    code = (
        "import sys, everyo as eo; eo.matmul(eo.ones(2, 2), eo.ones(2, 2)); "
        "bad = [m for m in ('cupy', 'IPython', 'ipywidgets', 'plotly', 'pandas', 'anywidget') "
        "if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.gpu
def test_data_stays_on_the_gpu():
    import cupy

    x = eo.randn(4, 3, device="cuda", requires_grad=True, seed=0)
    w = eo.randn(5, 3, device="cuda", requires_grad=True, seed=1)
    loss = eo.cross_entropy(eo.linear(x, w).relu(), eo.tensor([0, 1, 2, 3], device="cuda"))
    loss.backward()
    for t in (loss, x.grad, w.grad):
        assert isinstance(t.data, cupy.ndarray) and str(t.device) == "cuda:0"
    assert x.to("cpu").device == device("cpu")
    np.testing.assert_allclose(x.cpu().numpy(), x.numpy())


def test_where_and_index_tensors_on_another_device_raise():
    cpu = eo.ones(3)
    fake_mask = Tensor._make(np.ones(3, dtype=bool), Device("cuda", 0))
    with pytest.raises(eo.EveryODeviceError, match="cuda:0"):
        eo.where(fake_mask, cpu, 0.0)
    with pytest.raises(eo.EveryODeviceError, match="cuda:0"):
        cpu[fake_mask]
