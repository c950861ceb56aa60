"""Neural ops: finite-difference gradients (float64) and values against NumPy references."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import gradcheck

import everyo as eo
import everyo.nn.functional as F

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape)


@pytest.mark.parametrize(
    "name", ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "gelu", "gelu_tanh"]
)
def test_activation_gradients(name, device_name):
    x = rand(3, 5)
    x[np.abs(x) < 1e-3] = 0.5  # keep relu away from its kink
    if name == "gelu_tanh":
        fn = lambda a: eo.gelu(a, approximate="tanh")  # noqa: E731
    else:
        fn = getattr(eo, name)
    assert gradcheck(fn, x, device=device_name)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_axes(axis, device_name):
    x = rand(3, 4, 2)
    assert gradcheck(lambda a: eo.softmax(a, axis=axis), x, device=device_name)
    assert gradcheck(lambda a: F.log_softmax(a, dim=axis), x, device=device_name)


def test_stable_values():
    big = eo.tensor([[1000.0, 0.0, -1000.0]])
    assert np.isfinite(eo.softmax(big).numpy()).all()
    assert np.isfinite(eo.log_softmax(big).numpy()).all()
    s = eo.sigmoid(eo.tensor([-1000.0, 0.0, 1000.0])).numpy()
    np.testing.assert_allclose(s, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(eo.log_softmax(big).numpy()[0, 0], 0.0, atol=1e-6)


def test_gelu_matches_erf_form():
    import math

    x = np.linspace(-5, 5, 101)
    ref = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(eo.gelu(eo.tensor(x)).numpy(), ref, atol=1e-6)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_gradients(bias, device_name):
    args = (rand(2, 3, 4), rand(5, 4)) + ((rand(5),) if bias else ())
    assert gradcheck(lambda *t: eo.linear(*t), *args, device=device_name)
    out = eo.linear(*(eo.tensor(a) for a in args))
    ref = args[0] @ args[1].T + (args[2] if bias else 0)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)


@pytest.mark.parametrize(
    "stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 2, 2), ((2, 1), (0, 1), (1, 2))]
)
def test_conv2d_gradients(stride, padding, dilation, device_name):
    x, w, b = rand(2, 3, 6, 7), rand(4, 3, 3, 2), rand(4)
    fn = lambda a, k, c: eo.conv2d(a, k, c, stride, padding, dilation)  # noqa: E731
    assert gradcheck(fn, x, w, b, device=device_name)


def _conv_reference(x, w, stride, pad, dil):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    wo = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, ho, wo))
    for i in range(ho):
        for j in range(wo):
            hs, ws = i * stride, j * stride
            patch = xp[:, :, hs : hs + dil * (kh - 1) + 1 : dil, ws : ws + dil * (kw - 1) + 1 : dil]
            out[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w)
    return out


@pytest.mark.parametrize("stride,pad,dil", [(1, 0, 1), (2, 1, 1), (1, 1, 2), (3, 2, 1)])
def test_conv2d_values(stride, pad, dil):
    x, w = rand(2, 3, 9, 8), rand(5, 3, 3, 3)
    out = eo.conv2d(eo.tensor(x), eo.tensor(w), stride=stride, padding=pad, dilation=dil)
    np.testing.assert_allclose(out.numpy(), _conv_reference(x, w, stride, pad, dil), rtol=1e-10)


def test_conv2d_1x1_and_shape_errors():
    x, w = rand(2, 3, 4, 4), rand(6, 3, 1, 1)
    out = eo.conv2d(eo.tensor(x), eo.tensor(w))
    np.testing.assert_allclose(out.numpy(), np.einsum("nchw,oc->nohw", x, w[:, :, 0, 0]))
    assert gradcheck(lambda a, k: eo.conv2d(a, k), x, w)
    with pytest.raises(eo.EveryOShapeError, match="channels"):
        eo.conv2d(eo.tensor(x), eo.tensor(rand(6, 2, 1, 1)))


@pytest.mark.parametrize("kernel,stride,padding", [(2, None, 0), (3, 2, 1), ((2, 3), 1, 0)])
def test_pool_gradients(kernel, stride, padding, device_name):
    x = rand(2, 2, 7, 6)
    assert gradcheck(lambda a: eo.max_pool2d(a, kernel, stride, padding), x, device=device_name)
    assert gradcheck(lambda a: eo.avg_pool2d(a, kernel, stride, padding), x, device=device_name)
    assert gradcheck(
        lambda a: F.avg_pool2d(a, kernel, stride, padding, count_include_pad=False),
        x,
        device=device_name,
    )


def test_pool_values():
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    np.testing.assert_array_equal(eo.max_pool2d(eo.tensor(x), 2).numpy()[0, 0], [[5, 7], [13, 15]])
    np.testing.assert_array_equal(
        eo.avg_pool2d(eo.tensor(x), 2).numpy()[0, 0], [[2.5, 4.5], [10.5, 12.5]]
    )
    padded = eo.avg_pool2d(eo.tensor(x), 3, 1, 1, count_include_pad=False).numpy()
    assert padded[0, 0, 0, 0] == pytest.approx(np.mean([0, 1, 4, 5]))


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(affine, device_name):
    x = rand(3, 2, 4)
    args = (x, rand(2, 4), rand(2, 4)) if affine else (x,)
    fn = lambda a, *wb: eo.layer_norm(a, (2, 4), *wb)  # noqa: E731
    assert gradcheck(fn, *args, device=device_name)
    out = eo.layer_norm(eo.tensor(x), 4).numpy()
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out, ref, rtol=1e-10)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(training, device_name):
    x, w, b = rand(4, 3, 2, 2), rand(3), rand(3)
    rm, rv = np.zeros(3), np.ones(3)

    def fn(a, ww, bb):
        return eo.batch_norm(a, rm.copy(), rv.copy(), ww, bb, training, 0.1, 1e-5)

    assert gradcheck(fn, x, w, b, device=device_name)


def test_batch_norm_updates_running_stats():
    x = rand(8, 3, 2)
    rm, rv = eo.zeros(3, dtype="float64"), eo.ones(3, dtype="float64")
    eo.batch_norm(eo.tensor(x), rm, rv, training=True, momentum=0.1)
    mean = x.mean(axis=(0, 2))
    var = x.var(axis=(0, 2), ddof=1)
    np.testing.assert_allclose(rm.numpy(), 0.1 * mean)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * var)
    out = eo.batch_norm(eo.tensor(x), rm, rv, training=False).numpy()
    ref = (x - rm.numpy()[None, :, None]) / np.sqrt(rv.numpy()[None, :, None] + 1e-5)
    np.testing.assert_allclose(out, ref)


def test_embedding(device_name):
    idx = np.array([[0, 2, 2], [3, 0, 0]])
    w = rand(4, 3)
    assert gradcheck(lambda t: eo.embedding(eo.tensor(idx, device=device_name), t), w,
                     device=device_name)  # fmt: skip
    wt = eo.tensor(w, requires_grad=True)
    eo.embedding(eo.tensor(idx), wt, padding_idx=0).sum().backward()
    np.testing.assert_array_equal(wt.grad.numpy()[:, 0], [0, 0, 2, 1])
    with pytest.raises(IndexError):
        eo.embedding(eo.tensor([4]), wt)


@pytest.mark.parametrize("mask", [None, "bool", "float", "causal"])
def test_attention(mask, device_name):
    q, k, v = rand(2, 3, 4), rand(2, 5, 4), rand(2, 5, 6)
    kwargs = {}
    if mask == "bool":
        m = RNG.random((3, 5)) > 0.3
        m[:, 0] = True
        kwargs["attn_mask"] = eo.tensor(m, device=device_name)
    elif mask == "float":
        kwargs["attn_mask"] = eo.tensor(rand(3, 5), device=device_name)
    elif mask == "causal":
        kwargs["is_causal"] = True
    fn = lambda a, b, c: eo.scaled_dot_product_attention(a, b, c, **kwargs)  # noqa: E731
    assert gradcheck(fn, q, k, v, device=device_name)


def test_attention_values_and_broadcast():
    q, k, v = rand(2, 1, 3, 4), rand(1, 5, 4), rand(1, 5, 6)
    out = eo.scaled_dot_product_attention(eo.tensor(q), eo.tensor(k), eo.tensor(v), is_causal=True)
    s = q @ np.swapaxes(k, -1, -2) / 2.0
    s = np.where(np.tril(np.ones((3, 5), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(out.numpy(), p @ v, rtol=1e-10)
    assert gradcheck(lambda a, b, c: eo.scaled_dot_product_attention(a, b, c), q, k, v)


def test_dropout():
    x = eo.ones(1000, 100)
    y = eo.dropout(x, 0.25, seed=3)
    vals = np.unique(y.numpy())
    np.testing.assert_allclose(vals, [0.0, 1 / 0.75], rtol=1e-6)
    assert abs((y.numpy() == 0).mean() - 0.25) < 0.01
    np.testing.assert_array_equal(y.numpy(), eo.dropout(x, 0.25, seed=3).numpy())
    assert eo.dropout(x, 0.5, training=False) is x
    assert (eo.dropout(x, 1.0).numpy() == 0).all()
    xg = eo.ones(4, 4, requires_grad=True)
    out = eo.dropout(xg, 0.5, seed=1)
    out.sum().backward()
    np.testing.assert_array_equal(xg.grad.numpy(), out.numpy())


def test_max_pool_sends_a_tied_window_gradient_to_its_first_maximum():
    x = eo.tensor([[[[1.0, 2.0, 2.0], [0.0, 2.0, 1.0], [2.0, 0.0, 2.0]]]], requires_grad=True)
    eo.max_pool2d(x, 2, 1).sum().backward()  # four overlapping windows, each with tied maxima
    assert x.grad.tolist() == [[[[0.0, 2.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]]]]
