"""Losses: values against NumPy references and finite-difference gradients (float64)."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import gradcheck

import everyo as eo
import everyo.nn.functional as F

RNG = np.random.default_rng(1)


def _reduce(v, reduction):
    return {"mean": v.mean(), "sum": v.sum(), "none": v}[reduction]


def _log_softmax(z, axis=1):
    s = z - z.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_pointwise_losses(reduction, device_name):
    x, t = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    for fn, ref in ((F.mse_loss, (x - t) ** 2), (F.l1_loss, np.abs(x - t))):
        out = fn(eo.tensor(x, device=device_name), eo.tensor(t, device=device_name),
                 reduction=reduction)  # fmt: skip
        np.testing.assert_allclose(out.numpy(), _reduce(ref, reduction), rtol=1e-12)
        assert gradcheck(lambda a, b, f=fn: f(a, b, reduction=reduction), x, t, device=device_name)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy(reduction, smoothing, device_name):
    z = RNG.standard_normal((5, 4))
    t = np.array([0, 3, 1, 1, 2])
    lp = _log_softmax(z)
    q = np.eye(4)[t] * (1 - smoothing) + smoothing / 4
    ref = _reduce(-(q * lp).sum(1), reduction)
    out = F.cross_entropy(eo.tensor(z, device=device_name), eo.tensor(t, device=device_name),
                          reduction=reduction, label_smoothing=smoothing)  # fmt: skip
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)
    fn = lambda a: F.cross_entropy(a, t, reduction=reduction, label_smoothing=smoothing)  # noqa: E731
    assert gradcheck(fn, z, device=device_name)


def test_cross_entropy_weight_ignore_and_spatial():
    z = RNG.standard_normal((4, 3, 2, 2))
    t = RNG.integers(0, 3, (4, 2, 2))
    t[0, 0, 0] = -100
    w = np.array([0.5, 1.0, 2.0])
    lp = _log_softmax(z)
    picked = np.take_along_axis(lp, np.where(t < 0, 0, t)[:, None], axis=1)[:, 0]
    wt = w[np.where(t < 0, 0, t)] * (t >= 0)
    ref = -(wt * picked).sum() / wt.sum()
    out = F.cross_entropy(eo.tensor(z), eo.tensor(t), weight=eo.tensor(w))
    np.testing.assert_allclose(out.item(), ref, rtol=1e-10)
    assert gradcheck(lambda a: F.cross_entropy(a, t, weight=w, label_smoothing=0.1), z)
    assert gradcheck(lambda a: F.nll_loss(F.log_softmax(a, dim=1), t, weight=w), z)


def test_cross_entropy_probability_targets():
    z = RNG.standard_normal((3, 4))
    p = np.exp(_log_softmax(RNG.standard_normal((3, 4))))
    out = F.cross_entropy(eo.tensor(z), eo.tensor(p))
    np.testing.assert_allclose(out.item(), -(p * _log_softmax(z)).sum(1).mean(), rtol=1e-10)
    assert gradcheck(lambda a: F.cross_entropy(a, p), z)


def test_nll_loss_values():
    lp = _log_softmax(RNG.standard_normal((3, 5)))
    t = np.array([4, 0, 2])
    out = F.nll_loss(eo.tensor(lp), eo.tensor(t), reduction="none")
    np.testing.assert_allclose(out.numpy(), -lp[np.arange(3), t])
    assert gradcheck(lambda a: F.nll_loss(a, t), lp)
    with pytest.raises(IndexError):
        F.nll_loss(eo.tensor(lp), eo.tensor([5, 0, 0]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropies(reduction, device_name):
    z = RNG.standard_normal((4, 3))
    y = (RNG.random((4, 3)) > 0.5).astype(float)
    p = 1 / (1 + np.exp(-z))
    ref = _reduce(-(y * np.log(p) + (1 - y) * np.log(1 - p)), reduction)
    a = F.binary_cross_entropy(eo.tensor(p, device=device_name), eo.tensor(y, device=device_name),
                               reduction=reduction)  # fmt: skip
    b = F.binary_cross_entropy_with_logits(
        eo.tensor(z, device=device_name), eo.tensor(y, device=device_name), reduction=reduction
    )
    np.testing.assert_allclose(a.numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(b.numpy(), ref, rtol=1e-10)
    assert gradcheck(lambda q: F.binary_cross_entropy(q, y, reduction=reduction),
                     np.clip(p, 0.05, 0.95), device=device_name)  # fmt: skip
    soft = RNG.random((4, 3))
    pw = np.array([0.5, 1.0, 3.0])
    assert gradcheck(
        lambda q, t: F.binary_cross_entropy_with_logits(q, t, reduction=reduction, pos_weight=pw),
        z, soft, device=device_name,
    )  # fmt: skip


def test_bce_with_logits_is_stable():
    out = F.binary_cross_entropy_with_logits(eo.tensor([1000.0, -1000.0]), eo.tensor([0.0, 1.0]))
    np.testing.assert_allclose(out.item(), 1000.0)
    clamped = F.binary_cross_entropy(eo.tensor([0.0]), eo.tensor([1.0]))
    assert clamped.item() == pytest.approx(100.0)


def test_bad_reduction():
    with pytest.raises(eo.EveryOConfigError):
        F.mse_loss(eo.ones(2), eo.ones(2), reduction="avg")
