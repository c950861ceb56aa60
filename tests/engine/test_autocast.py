"""Mixed precision: autocast (float16 compute, float32 parameters and gradients) and GradScaler
(scaling, unscaling, skipped steps on inf/NaN, scale updates, state)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import everyo as eo
import everyo.nn.functional as F


class SGD:
    """The smallest optimizer with PyTorch's interface (param_groups, step)."""

    def __init__(self, params, lr=0.1):
        self.param_groups = [{"params": list(params), "lr": lr}]
        self.steps = 0

    def step(self):
        self.steps += 1
        with eo.no_grad():
            for p in self.param_groups[0]["params"]:
                p.data -= self.param_groups[0]["lr"] * p.grad.data


def test_autocast_matmul_linear_conv_in_float16(device_name):
    w = eo.randn(8, 4, requires_grad=True, seed=0, device=device_name)
    k = eo.randn(2, 3, 3, 3, requires_grad=True, seed=1, device=device_name)
    x = eo.randn(5, 4, seed=2, device=device_name)
    img = eo.randn(1, 3, 6, 6, seed=3, device=device_name)
    with eo.autocast("float16"):
        y = F.linear(x, w)
        z = x @ w.T
        c = F.conv2d(img, k, padding=1)
        s = F.softmax(y, dim=-1)
        loss = F.cross_entropy(y, eo.tensor([0, 1, 2, 3, 4], device=device_name))
    assert y.dtype == z.dtype == c.dtype == np.float16
    assert s.dtype == np.float32 and loss.dtype == np.float32  # range-hungry ops widen
    (loss + c.astype("float32").sum()).backward()
    assert w.dtype == w.grad.dtype == np.float32
    assert k.grad.dtype == np.float32
    ref = x.numpy() @ w.numpy().T
    np.testing.assert_allclose(y.numpy().astype(np.float32), ref, rtol=1e-2, atol=1e-2)


def test_autocast_off_and_disabled():
    w = eo.ones(2, 2)
    with eo.autocast("float16", enabled=False):
        assert (w @ w).dtype == np.float32
    assert (w @ w).dtype == np.float32
    with pytest.raises(eo.EveryODTypeError):
        eo.autocast("int32")


def test_autocast_decorator_and_thread_local():
    @eo.autocast()
    def f(a):
        return (a @ a).dtype

    assert f(eo.ones(2, 2)) == np.float16
    seen = {}

    def other():
        seen["dtype"] = (eo.ones(2, 2) @ eo.ones(2, 2)).dtype

    with eo.autocast("float16"):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen["dtype"] == np.float32


def test_autocast_decorator_restores_the_mode_after_a_recursive_call():
    @eo.autocast("float16")
    def f(n):
        return f(n - 1) if n else (eo.ones(2, 2) @ eo.ones(2, 2)).dtype

    assert f(2) == np.float16
    assert (eo.ones(2, 2) @ eo.ones(2, 2)).dtype == np.float32  # the inner calls shared `_prev`


def _model_step(scaler, w, opt, x_value):
    x = eo.full((2, 3), x_value)
    with eo.autocast("float16"):
        loss = (x @ w).sum()
    scaler.scale(loss).backward()
    out = scaler.step(opt)
    scaler.update()
    w.zero_grad()
    return out


def test_grad_scaler_scales_and_unscales():
    w = eo.ones(3, 2, requires_grad=True)
    opt = SGD([w], lr=0.0)
    scaler = eo.GradScaler(init_scale=1024.0)
    x = eo.ones(2, 3)
    with eo.autocast("float16"):
        loss = (x @ w).sum()
    scaled = scaler.scale(loss)
    assert scaled.dtype == np.float32 and scaled.item() == pytest.approx(1024 * loss.item())
    scaled.backward()
    assert w.grad.numpy()[0, 0] == pytest.approx(2048.0)
    scaler.unscale_(opt)
    np.testing.assert_allclose(w.grad.numpy(), 2.0)
    with pytest.raises(RuntimeError, match="already"):
        scaler.unscale_(opt)
    scaler.step(opt)
    assert opt.steps == 1
    scaler.update()
    assert scaler.get_scale() == 1024.0


def test_grad_scaler_skips_inf_steps_and_backs_off():
    w = eo.ones(3, 2, requires_grad=True)
    opt = SGD([w])
    scaler = eo.GradScaler(init_scale=1024.0, growth_interval=2)
    # 60000 * 3 overflows float16 (max 65504): inf gradients, the step must be skipped
    with np.errstate(over="ignore", invalid="ignore"):  # NumPy reports float16 overflow
        assert _model_step(scaler, w, opt, 60000.0) is None
    assert opt.steps == 0 and w.tolist() == [[1.0, 1.0]] * 3
    assert scaler.get_scale() == 512.0
    _model_step(scaler, w, opt, 0.001)
    assert opt.steps == 1 and scaler.get_scale() == 512.0
    _model_step(scaler, w, opt, 0.001)
    assert scaler.get_scale() == 1024.0  # grew after growth_interval clean steps


def test_grad_scaler_nan_and_state_dict():
    w = eo.ones(2, requires_grad=True)
    opt = SGD([w])
    scaler = eo.GradScaler(init_scale=4.0, backoff_factor=0.25)
    w.grad = eo.tensor([np.nan, 1.0])
    assert scaler.step(opt) is None
    scaler.update()
    assert scaler.get_scale() == 1.0
    state = scaler.state_dict()
    other = eo.GradScaler()
    other.load_state_dict(state)
    assert other.get_scale() == 1.0 and other.state_dict() == state


def test_grad_scaler_disabled_is_pass_through():
    w = eo.ones(2, requires_grad=True)
    opt = SGD([w])
    scaler = eo.GradScaler(enabled=False)
    loss = w.sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.step(opt)
    scaler.update()
    assert opt.steps == 1 and scaler.get_scale() == 1.0 and scaler.state_dict() == {}


def test_grad_scaler_bad_config():
    with pytest.raises(eo.EveryOConfigError):
        eo.GradScaler(growth_factor=0.5)


def test_autocast_attention_softmax_in_float32():
    q = eo.randn(2, 3, 4, seed=0, requires_grad=True)
    with eo.autocast("float16"):
        out = eo.scaled_dot_product_attention(q, q, q * 100.0, is_causal=True)
    assert out.dtype == np.float16 and np.isfinite(out.numpy()).all()
    out.astype("float32").sum().backward()
    assert q.grad.dtype == np.float32 and np.isfinite(q.grad.numpy()).all()
