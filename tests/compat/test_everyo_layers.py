"""Reference EveryO §2 (layers): NHWC ``Conv2D``, ``MaxPool2D``, ``AvgPool2D`` with
TensorFlow-style padding, against direct NumPy loops; gradients against finite differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import gradcheck

import everyo as eo
from everyo.nn import channels_last as cl

RNG = np.random.default_rng(0)


def _pads(padding, size, k, s):
    if padding == "valid":
        return 0, 0
    if padding == "same":
        total = max((math.ceil(size / s) - 1) * s + k - size, 0)
        return total // 2, total - total // 2
    return padding, padding


def _windows(x, k, s, padding, fill):
    """Yield ``(i, j, window)`` of an NHWC array padded TensorFlow's way, window (N, kh, kw, C)."""
    (t, b), (left, r) = (
        _pads(padding, x.shape[1], k[0], s[0]),
        _pads(padding, x.shape[2], k[1], s[1]),
    )
    xp = np.pad(x, ((0, 0), (t, b), (left, r), (0, 0)), constant_values=fill)
    mask = np.pad(np.ones(x.shape[1:3]), ((t, b), (left, r)))
    ho, wo = (xp.shape[1] - k[0]) // s[0] + 1, (xp.shape[2] - k[1]) // s[1] + 1
    for i in range(ho):
        for j in range(wo):
            rows, cols = slice(i * s[0], i * s[0] + k[0]), slice(j * s[1], j * s[1] + k[1])
            yield i, j, ho, wo, xp[:, rows, cols], mask[rows, cols]


def ref_conv(x, w, b, s, padding):
    out = None
    for i, j, ho, wo, win, _ in _windows(x, w.shape[:2], s, padding, 0.0):
        if out is None:
            out = np.zeros((x.shape[0], ho, wo, w.shape[3]))
        out[:, i, j] = np.einsum("nhwc,hwco->no", win, w) + (0 if b is None else b)
    return out


def ref_pool(x, k, s, padding, kind):
    out = None
    fill = -np.inf if kind == "max" else 0.0
    for i, j, ho, wo, win, mask in _windows(x, k, s, padding, fill):
        if out is None:
            out = np.zeros((x.shape[0], ho, wo, x.shape[3]))
        out[:, i, j] = win.max(axis=(1, 2)) if kind == "max" else win.sum(axis=(1, 2)) / mask.sum()
    return out


CASES = [  # (H, W, kernel, stride, padding)
    (5, 7, (3, 3), (1, 1), "valid"),
    (5, 7, (3, 2), (2, 2), "same"),  # odd total padding: the extra goes bottom/right
    (6, 5, (2, 2), (2, 1), "SAME"),
    (4, 4, (3, 3), (1, 1), 1),
    (5, 5, (3, 3), (3, 2), 2),
]


@pytest.mark.parametrize("h, w, k, s, padding", CASES)
def test_conv2d_matches_a_direct_nhwc_loop(h, w, k, s, padding):
    x = RNG.standard_normal((2, h, w, 3)).astype(np.float32)
    layer = eo.Conv2D(3, 4, k, stride=s, padding=padding, seed=0)
    assert layer.weight.shape == (*k, 3, 4) and layer.weight.dtype == eo.float32
    assert layer.bias.shape == (4,) and not layer.bias.numpy().any()  # zero-initialised
    layer.bias.data[...] = RNG.standard_normal(4)
    out = layer(x)
    expected = ref_conv(x, layer.weight.numpy(), layer.bias.numpy(), s, str(padding).lower()
                        if isinstance(padding, str) else padding)  # fmt: skip
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_same_padding_keeps_ceil_of_size_over_stride():
    x = eo.zeros(1, 7, 8, 2)
    for s in (1, 2, 3):
        assert eo.Conv2D(2, 1, 3, stride=s, padding="same")(x).shape == (
            1, math.ceil(7 / s), math.ceil(8 / s), 1)  # fmt: skip


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("h, w, k, s, padding", CASES)
def test_pooling_matches_a_direct_nhwc_loop(kind, h, w, k, s, padding):
    x = RNG.standard_normal((2, h, w, 3)).astype(np.float32)
    cls = eo.MaxPool2D if kind == "max" else eo.AvgPool2D
    mode = padding.lower() if isinstance(padding, str) else padding
    out = cls(k, stride=s, padding=padding)(x)
    np.testing.assert_allclose(out.numpy(), ref_pool(x, k, s, mode, kind), rtol=1e-5, atol=1e-6)


def test_pool_stride_defaults_to_pool_size_and_config():
    pool = eo.MaxPool2D(2)
    assert pool.pool_size == (2, 2) and pool.stride is None and pool.padding == "valid"
    assert pool(eo.zeros(1, 6, 6, 1)).shape == (1, 3, 3, 1)
    assert eo.AvgPool2D((2, 3), stride=1).get_config() == {
        "pool_size": [2, 3], "stride": [1, 1], "padding": "valid"}  # fmt: skip


def test_avg_pool_divides_by_real_cells_only():
    x = eo.ones(1, 3, 3, 1)
    # every window average of ones is 1 when padded cells do not count
    assert (
        eo.AvgPool2D(3, stride=1, padding="same")(x).numpy().tolist()
        == np.ones((1, 3, 3, 1)).tolist()
    )
    assert (eo.AvgPool2D(2, stride=2, padding=1)(x).numpy() == 1).all()


def test_max_pool_gradient_goes_to_the_first_maximum():
    x = eo.tensor(np.array([[1.0, 5.0], [5.0, 2.0]]).reshape(1, 2, 2, 1), requires_grad=True)
    eo.MaxPool2D(2)(x).sum().backward()
    assert x.grad.numpy().reshape(2, 2).tolist() == [[0.0, 1.0], [0.0, 0.0]]


@pytest.mark.parametrize("padding, stride", [("valid", 1), ("same", 2), (1, 1)])
def test_conv_gradients_match_finite_differences(padding, stride):
    x = RNG.standard_normal((2, 4, 5, 2))
    w = RNG.standard_normal((3, 2, 2, 3))
    b = RNG.standard_normal(3)
    assert gradcheck(lambda a, k, c: cl.conv2d(a, k, c, stride=stride, padding=padding), x, w, b)


@pytest.mark.parametrize("fn", [cl.max_pool2d, cl.avg_pool2d])
@pytest.mark.parametrize("padding", ["valid", "same", 1])
def test_pool_gradients_match_finite_differences(fn, padding):
    x = RNG.permutation(60).reshape(1, 5, 4, 3) / 7.0  # distinct values: no max ties
    assert gradcheck(lambda a: fn(a, 3, stride=2, padding=padding), x)


def test_conv2d_config_initializers_and_no_bias():
    layer = eo.Conv2D(3, 8, (3, 5), stride=2, padding="same", bias=False,
                      initializer="Glorot_Normal", seed=1)  # fmt: skip
    assert layer.use_bias is False and layer.bias is None
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    assert layer.get_config() == {
        "in_channels": 3, "out_channels": 8, "kernel_size": [3, 5], "stride": [2, 2],
        "padding": "same", "bias": False, "initializer": "Glorot_Normal",
    }  # fmt: skip
    w = eo.Conv2D(16, 32, 3, seed=0).weight.numpy()
    bound = math.sqrt(6 / (3 * 3 * 16))  # he_uniform with fan-in kh*kw*in
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert (eo.Conv2D(1, 1, 1, initializer="ones").weight.numpy() == 1).all()
    same = eo.Conv2D(2, 2, 3, seed=5).weight.numpy()
    assert np.array_equal(same, eo.Conv2D(2, 2, 3, seed=5).weight.numpy())


def test_construction_errors():
    with pytest.raises(eo.EveryOShapeError):
        eo.Conv2D(0, 4)
    with pytest.raises(eo.EveryOShapeError):
        eo.Conv2D(3, 4, kernel_size=(3, 3, 3))
    with pytest.raises(eo.EveryOShapeError):
        eo.Conv2D(3, 4, stride=0)
    with pytest.raises(TypeError):
        eo.Conv2D(3, 4, kernel_size=2.5)
    with pytest.raises(ValueError, match="unknown initializer"):
        eo.Conv2D(3, 4, initializer="lecun")
    with pytest.raises(eo.EveryOShapeError):
        eo.MaxPool2D(pool_size=(2, 2, 2))


@pytest.mark.parametrize("x, padding", [
    (eo.zeros(2, 5, 5), "valid"),  # not 4-D
    (eo.zeros(2, 5, 5, 4), "valid"),  # channels last is 4, the layer expects 3
    (eo.zeros(2, 5, 5, 3), "full"),
    (eo.zeros(2, 5, 5, 3), -1),
    (eo.zeros(2, 5, 5, 3), (1, 1)),  # pairs are rejected
    (eo.zeros(2, 2, 2, 3), "valid"),  # kernel larger than the input
])  # fmt: skip
def test_call_errors_are_shape_errors(x, padding):
    with pytest.raises(eo.EveryOShapeError):
        eo.Conv2D(3, 4, 3, padding=padding)(x)


def test_pool_call_errors():
    with pytest.raises(eo.EveryOShapeError):
        eo.MaxPool2D(2)(eo.zeros(4, 4, 1))
    with pytest.raises(eo.EveryOShapeError):
        eo.AvgPool2D(5)(eo.zeros(1, 4, 4, 1))


def test_pytorch_style_conv2d_stays_nchw():
    conv = eo.Conv2d(3, 4, 3, padding=1, seed=0)
    assert conv.weight.shape == (4, 3, 3, 3)
    assert conv(eo.zeros(2, 3, 8, 8)).shape == (2, 4, 8, 8)
    assert eo.conv2d(eo.zeros(2, 3, 8, 8), conv.weight).shape == (2, 4, 6, 6)


def test_layers_train_and_are_profiled_as_modules():
    x = RNG.standard_normal((8, 6, 6, 1)).astype(np.float32)
    y = (x.mean(axis=(1, 2, 3)) > 0).astype(np.int64)
    model = eo.Sequential(
        eo.Conv2D(1, 4, 3, padding="same", seed=0), eo.ReLU(), eo.MaxPool2D(2),
        eo.AvgPool2D(3), eo.Flatten(), eo.Linear(4, 2, seed=0),
    )  # fmt: skip
    opt = eo.Adam(model.parameters(), lr=0.05)
    losses = []
    with eo.profile() as prof:
        for _ in range(15):
            opt.zero_grad()
            loss = eo.CrossEntropyLoss()(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert losses[-1] < losses[0]
    names = {e.name for e in prof.events}
    assert {"Conv2D", "MaxPool2D", "AvgPool2D"} <= names
