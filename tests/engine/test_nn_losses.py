"""Loss layers: values against NumPy, reductions, gradients through the fused ops."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import gradcheck

import everyo as eo

RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((6, 4))
LABELS = np.array([0, 3, 1, 1, 2, 0])


def _log_softmax(z):
    z = z - z.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def _reduce(v, reduction):
    return {"mean": v.mean(), "sum": v.sum(), "none": v}[reduction]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(reduction):
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    for cls, ref in ((eo.MSELoss, (a - b) ** 2), (eo.L1Loss, np.abs(a - b))):
        out = cls(reduction=reduction)(eo.tensor(a), eo.tensor(b))
        np.testing.assert_allclose(out.numpy(), _reduce(ref, reduction), rtol=1e-10)
        assert gradcheck(lambda x, y, c=cls: c(reduction=reduction)(x, y), a, b)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_and_nll(reduction):
    per = -_log_softmax(LOGITS)[np.arange(6), LABELS]
    ce = eo.CrossEntropyLoss(reduction=reduction)(eo.tensor(LOGITS), eo.tensor(LABELS))
    np.testing.assert_allclose(ce.numpy(), _reduce(per, reduction), rtol=1e-10)
    nll = eo.NLLLoss(reduction=reduction)(eo.tensor(_log_softmax(LOGITS)), eo.tensor(LABELS))
    np.testing.assert_allclose(nll.numpy(), _reduce(per, reduction), rtol=1e-10)
    labels = eo.tensor(LABELS)
    assert gradcheck(lambda z: eo.CrossEntropyLoss(reduction=reduction)(z, labels), LOGITS)


def test_cross_entropy_label_smoothing():
    eps = 0.1
    logp = _log_softmax(LOGITS)
    target = np.full((6, 4), eps / 4)
    target[np.arange(6), LABELS] += 1 - eps
    expected = -(target * logp).sum(1).mean()
    loss = eo.CrossEntropyLoss(label_smoothing=eps)(eo.tensor(LOGITS), eo.tensor(LABELS))
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-10)
    assert "label_smoothing=0.1" in repr(eo.CrossEntropyLoss(label_smoothing=0.1))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_losses(reduction):
    z = RNG.standard_normal((5, 2))
    y = (RNG.random((5, 2)) > 0.5).astype(np.float64)
    p = 1 / (1 + np.exp(-z))
    ref = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    bce = eo.BCELoss(reduction=reduction)(eo.tensor(p), eo.tensor(y))
    np.testing.assert_allclose(bce.numpy(), _reduce(ref, reduction), rtol=1e-8)
    logits = eo.BCEWithLogitsLoss(reduction=reduction)(eo.tensor(z), eo.tensor(y))
    np.testing.assert_allclose(logits.numpy(), _reduce(ref, reduction), rtol=1e-8)
    yt = eo.tensor(y)
    assert gradcheck(lambda a: eo.BCEWithLogitsLoss(reduction=reduction)(a, yt), z)
    assert gradcheck(lambda a: eo.BCELoss(reduction=reduction)(a, yt), p)


def test_bad_reduction():
    with pytest.raises(eo.EveryOConfigError, match="reduction"):
        eo.MSELoss(reduction="avg")
