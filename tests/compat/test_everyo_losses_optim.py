"""Reference EveryO §3 (losses) and §4 (optimizers)."""

from __future__ import annotations

import numpy as np
import pytest

import everyo as eo
from everyo.nn.losses import mae_loss


def test_loss_base_reduction_config_and_errors():
    class Squared(eo.Loss):
        def forward(self, prediction, target):
            return self._reduce((prediction - target) ** 2)

    p, t = eo.tensor([1.0, 2.0, 4.0]), eo.tensor([0.0, 0.0, 0.0])
    assert Squared()(p, t).item() == pytest.approx(7.0)
    assert Squared("sum")(p, t).item() == 21.0
    assert Squared("none")(p, t).tolist() == [1.0, 4.0, 16.0]
    assert Squared("sum").get_config() == {"reduction": "sum"}
    with pytest.raises(ValueError):
        eo.Loss("avg")
    with pytest.raises(NotImplementedError):
        eo.Loss()(p, t)
    for cls in (eo.MSELoss, eo.BCELoss, eo.BCEWithLogitsLoss, eo.CrossEntropyLoss, eo.MAELoss):
        assert isinstance(cls(reduction="sum"), eo.Loss)


def test_mae_loss_values_and_no_broadcasting():
    p, t = eo.tensor([[1.0], [-2.0]]), eo.tensor([[0.0], [1.0]])
    assert eo.MAELoss()(p, t).item() == 2.0
    assert eo.MAELoss("sum")(p, t).item() == 4.0
    assert mae_loss(p, t, reduction="none").tolist() == [[1.0], [3.0]]
    with pytest.raises(eo.EveryOShapeError, match="differ in shape"):
        eo.MAELoss()(eo.ones(4, 1), eo.ones(4))


def test_mae_gradient_is_the_sign():
    p = eo.tensor([1.0, -2.0, 0.5], requires_grad=True)
    eo.MAELoss("sum")(p, eo.zeros(3)).backward()
    assert p.grad.tolist() == [1.0, -1.0, 1.0]


def test_cross_entropy_takes_indices_column_indices_or_one_hot():
    logits = eo.tensor(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))
    idx = np.array([0, 2, 1, 2])
    want = eo.CrossEntropyLoss()(logits, idx).item()
    assert eo.CrossEntropyLoss()(logits, eo.one_hot_encode(idx, 3)).item() == pytest.approx(want)


def _param(values):
    return eo.nn.Parameter(eo.tensor(np.asarray(values, dtype=np.float32)))


def test_optimizer_base_reference_form():
    class PlainSGD(eo.Optimizer):
        def __init__(self, parameters, lr=0.1):
            super().__init__(parameters, lr)

        def step(self):
            self.step_count += 1
            for p in self.parameters:
                if p.grad is not None:
                    p.data -= self.lr * p.grad.data

    w = _param([1.0, 2.0])
    opt = PlainSGD([w])
    assert opt.parameters == [w] and opt.lr == 0.1 and opt.step_count == 0
    assert opt.get_config() == {"lr": 0.1}
    (w * w).sum().backward()
    opt.step()
    assert w.tolist() == pytest.approx([0.8, 1.6]) and opt.step_count == 1
    opt.zero_grad()
    assert w.grad is None
    assert opt.state_for(w) is opt.state_for(w) and opt.state == {id(w): {}}
    with pytest.raises(NotImplementedError):
        eo.Optimizer([w], 0.1).step()


def test_optimizer_errors():
    with pytest.raises(eo.EveryOError):
        eo.Optimizer([], 0.1)
    with pytest.raises(eo.EveryOError):
        eo.Optimizer([np.ones(2)], 0.1)
    with pytest.raises(ValueError):
        eo.Optimizer([_param([1.0])], 0.0)


def test_schedulers_set_lr_directly():
    opt = eo.SGD([_param([1.0])], lr=0.1)
    opt.lr = 0.05
    assert opt.param_groups[0]["lr"] == 0.05 and opt.lr == 0.05


def _reference_sgd(w, grads, lr, momentum=0.0, wd=0.0, nesterov=False):
    v = None
    for g in grads:
        g = g + wd * w
        if momentum:
            v = g.copy() if v is None else momentum * v + g
            g = g + momentum * v if nesterov else v
        w = w - lr * g
    return w


@pytest.mark.parametrize("kw", [{}, {"momentum": 0.9}, {"momentum": 0.5, "nesterov": True},
                                {"momentum": 0.9, "weight_decay": 0.1}])  # fmt: skip
def test_sgd_update_rule(kw):
    w0 = np.array([1.0, -2.0, 0.5])
    grads = [np.array([0.1, 0.2, -0.3]) * (i + 1) for i in range(4)]
    p = _param(w0)
    opt = eo.SGD([p], lr=0.1, **kw)
    for g in grads:
        p.grad = eo.tensor(g.astype(np.float32))
        opt.step()
    want = _reference_sgd(w0, grads, 0.1, kw.get("momentum", 0.0), kw.get("weight_decay", 0.0),
                          kw.get("nesterov", False))  # fmt: skip
    np.testing.assert_allclose(p.numpy(), want, rtol=1e-5)
    assert opt.step_count == 4


def test_sgd_defaults_and_errors():
    assert eo.SGD([_param([1.0])]).lr == 0.01
    for kw in ({"momentum": 1.0}, {"momentum": -0.1}, {"weight_decay": -1.0},
               {"nesterov": True}):  # fmt: skip
        with pytest.raises(ValueError):
            eo.SGD([_param([1.0])], lr=0.1, **kw)


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_matches_the_reference_update(amsgrad):
    w = np.array([1.0, -2.0, 3.0])
    p = _param(w)
    opt = eo.Adam([p], lr=0.01, betas=(0.8, 0.99), eps=1e-8, weight_decay=0.1, amsgrad=amsgrad)
    m = v = vmax = np.zeros(3)
    for t in range(1, 7):
        g = np.array([0.5, -1.0, 0.25]) * (-1) ** t * t
        p.grad = eo.tensor(g.astype(np.float32))
        opt.step()
        g = g + 0.1 * w  # coupled L2: plain Adam, not AdamW
        m, v = 0.8 * m + 0.2 * g, 0.99 * v + 0.01 * g * g
        vmax = np.maximum(vmax, v) if amsgrad else v
        w = w - 0.01 * (m / (1 - 0.8**t)) / (np.sqrt(vmax / (1 - 0.99**t)) + 1e-8)
    np.testing.assert_allclose(p.numpy(), w, rtol=1e-5, atol=1e-6)


def test_adam_defaults_and_errors():
    opt = eo.Adam([_param([1.0])])
    assert opt.lr == 0.001 and opt.param_groups[0]["betas"] == (0.9, 0.999)
    for kw in ({"betas": (1.0, 0.9)}, {"eps": -1.0}, {"weight_decay": -0.1}):
        with pytest.raises(ValueError):
            eo.Adam([_param([1.0])], **kw)
