"""Optimizers against hand-computed updates, parameter groups, state dicts, schedulers, and the
profiler region around ``step()``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_nn_module import profiling

import everyo as eo
from everyo.optim import SGD, Adam, AdamW, CosineAnnealingLR, StepLR


def _param(value=1.0, device="cpu"):
    return eo.nn.Parameter(eo.tensor([value], dtype="float64", device=device))


def _run(opt_cls, steps, grad=0.5, device="cpu", **kw):
    w = _param(device=device)
    opt = opt_cls([w], **kw)
    out = []
    for _ in range(steps):
        w.grad = eo.tensor([grad], dtype="float64", device=device)
        opt.step()
        out.append(float(w.numpy()[0]))
    return out


def test_sgd_plain(device_name):
    assert _run(SGD, 3, lr=0.1, device=device_name) == pytest.approx([0.95, 0.9, 0.85])


def test_sgd_momentum_weight_decay():
    # g' = g + wd w; buf = g' then 0.9 buf + g'; w -= lr buf
    assert _run(SGD, 2, lr=0.1, momentum=0.9, weight_decay=0.1) == pytest.approx([0.94, 0.8266])


def test_sgd_nesterov():
    # buf = 0.5, 0.95; step uses g + 0.9 buf = 0.95, 1.355
    assert _run(SGD, 2, lr=0.1, momentum=0.9, nesterov=True) == pytest.approx([0.905, 0.7695])


def test_sgd_dampening():
    # buf = g (first step), then 0.9 buf + 0.5 g = 0.7
    assert _run(SGD, 2, lr=0.1, momentum=0.9, dampening=0.5) == pytest.approx([0.95, 0.88])


def test_adam_constant_gradient_moves_lr_per_step(device_name):
    # bias correction makes m_hat = g and v_hat = g^2 for a constant gradient
    got = _run(Adam, 3, lr=0.1, device=device_name)
    assert got == pytest.approx([0.9, 0.8, 0.7], abs=1e-7)


def test_adamw_decoupled_weight_decay():
    # w *= 1 - lr * wd, then the Adam step of -lr
    assert _run(AdamW, 2, lr=0.1, weight_decay=0.1) == pytest.approx([0.89, 0.7811], abs=1e-7)


def test_adam_l2_weight_decay_matches_reference_formula():
    lr, b1, b2, eps, wd = 0.01, 0.8, 0.9, 1e-6, 0.2
    grads = [np.array([0.3, -1.2]), np.array([0.5, 0.1]), np.array([-0.7, 0.4])]
    w = eo.nn.Parameter(eo.tensor([1.0, -2.0], dtype="float64"))
    opt = Adam([w], lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    ref, m, v = np.array([1.0, -2.0]), np.zeros(2), np.zeros(2)
    for t, g in enumerate(grads, 1):
        w.grad = eo.tensor(g)
        opt.step()
        g = g + wd * ref
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        ref = ref - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
        np.testing.assert_allclose(w.numpy(), ref, rtol=1e-12)


def test_training_reduces_loss_and_skips_params_without_grad():
    w = _param(3.0)
    frozen = _param(5.0)
    opt = SGD([w, frozen], lr=0.1)
    for _ in range(50):
        opt.zero_grad()
        loss = ((w - 1.0) ** 2).sum()
        loss.backward()
        opt.step()
    assert abs(float(w.numpy()[0]) - 1.0) < 1e-3
    assert float(frozen.numpy()[0]) == 5.0


def test_param_groups_and_zero_grad():
    a, b = _param(), _param()
    opt = SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    a.grad = eo.tensor([1.0], dtype="float64")
    b.grad = eo.tensor([1.0], dtype="float64")
    opt.step()
    assert float(a.numpy()[0]) == pytest.approx(0.9) and float(b.numpy()[0]) == pytest.approx(0.0)
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    with pytest.raises(ValueError, match="two parameter groups"):
        SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    with pytest.raises(ValueError, match="empty"):
        SGD([], lr=0.1)


def test_state_dict_round_trip_continues_identically():
    model_a = eo.Linear(3, 2, seed=0)
    model_b = eo.Linear(3, 2, seed=0)
    opt_a = Adam(model_a.parameters(), lr=0.01)
    x = eo.tensor(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))

    def step(model, opt):
        opt.zero_grad()
        (model(x) ** 2).sum().backward()
        opt.step()

    for _ in range(3):
        step(model_a, opt_a)
    sd = opt_a.state_dict()
    assert sd["state"][0]["step"] == 3 and sd["param_groups"][0]["params"] == [0, 1]
    model_b.load_state_dict(model_a.state_dict())
    opt_b = Adam(model_b.parameters(), lr=0.5)
    opt_b.load_state_dict(sd)
    assert opt_b.param_groups[0]["lr"] == 0.01
    step(model_a, opt_a)
    step(model_b, opt_b)
    np.testing.assert_array_equal(model_a.weight.numpy(), model_b.weight.numpy())
    with pytest.raises(eo.EveryOSerializationError):
        opt_b.load_state_dict({"nope": 1})
    with pytest.raises(eo.EveryOSerializationError, match="different sizes"):
        Adam([_param()]).load_state_dict(sd)


def test_step_closure_and_validation():
    w = _param(2.0)
    opt = SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    assert float(opt.step(closure).item()) == pytest.approx(4.0)
    with pytest.raises(ValueError):
        SGD([w], lr=-1)
    with pytest.raises(ValueError):
        SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError):
        Adam([w], betas=(1.0, 0.9))


def test_step_records_optimizer_region():
    w = _param()
    w.grad = eo.tensor([1.0], dtype="float64")
    with profiling() as p:
        AdamW([w]).step()
        SGD([w], lr=0.1).step()
    assert [(n, k) for n, k, _ in p.regions] == [("AdamW.step", "optimizer"),
                                                 ("SGD.step", "optimizer")]  # fmt: skip


def test_step_region_names_follow_subclasses_and_keep_no_class_alive():
    import gc
    import weakref

    def make():
        class Tuned(SGD):
            pass

        return Tuned

    w = _param()
    w.grad = eo.tensor([1.0], dtype="float64")
    tuned = make()
    with profiling() as p:
        tuned([w], lr=0.1).step()
        tuned([w], lr=0.1).step()
        SGD([w], lr=0.1).step()
    assert [n for n, _, _ in p.regions] == ["Tuned.step", "Tuned.step", "SGD.step"]
    gone = weakref.ref(tuned)
    del tuned
    gc.collect()
    assert gone() is None  # a class defined again in a notebook lets the old one go


def test_step_lr():
    opt = SGD([_param()], lr=1.0)
    sched = StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(6):
        lrs.append(opt.param_groups[0]["lr"])
        sched.step()
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    assert sched.get_last_lr() == [0.125]


def test_cosine_annealing():
    opt = SGD([_param()], lr=1.0)
    sched = CosineAnnealingLR(opt, T_max=4, eta_min=0.2)
    lrs = []
    for _ in range(5):
        lrs.append(opt.param_groups[0]["lr"])
        sched.step()
    expected = [0.2 + 0.8 * (1 + math.cos(math.pi * t / 4)) / 2 for t in range(5)]
    assert lrs == pytest.approx(expected)
    assert lrs[0] == 1.0 and lrs[-1] == pytest.approx(0.2)
    with pytest.raises(TypeError):
        StepLR(object(), 1)


@pytest.mark.parametrize("cls", [Adam, AdamW])
@pytest.mark.parametrize("shapes", [[(3, 2), (4,), (1,)], [(500, 300), (3,), (2,)]])
def test_adam_fused_buffers_equal_separate_optimizers(cls, shapes):
    """Parameters updated together (one flat buffer), apart (a step without a gradient) or one
    by one (large parameters) follow exactly the per-parameter rule."""
    rng = np.random.default_rng(0)
    joint = [eo.nn.Parameter(rng.standard_normal(s)) for s in shapes]
    alone = [eo.nn.Parameter(p.numpy()) for p in joint]
    opt = cls(joint, lr=0.05, weight_decay=0.1)
    singles = [cls([p], lr=0.05, weight_decay=0.1) for p in alone]
    for step in range(4):
        for i, (a, b) in enumerate(zip(joint, alone)):
            skip = step == 1 and i == 1  # parameter 1 gets no gradient on step 1
            g = None if skip else eo.tensor(rng.standard_normal(a.shape))
            a.grad = b.grad = g
        opt.step()
        for single in singles:
            single.step()
        for a, b in zip(joint, alone):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-15)
    sd = opt.state_dict()
    assert [sd["state"][i]["step"] for i in range(3)] == [4, 3, 4]
    assert sd["state"][0]["exp_avg"].shape == shapes[0]


def _trained(opt_cls, **kw):
    model = eo.nn.Linear(3, 2, seed=0)
    opt = opt_cls(model.parameters(), lr=0.1, **kw)
    return model, opt


def _step(model, opt):
    opt.zero_grad()
    x = eo.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    (model(x) ** 2).sum().backward()
    opt.step()


@pytest.mark.parametrize(
    ("opt_cls", "kw"),
    [(Adam, {}), (Adam, {"amsgrad": True}), (AdamW, {}), (SGD, {"momentum": 0.9})],
)
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_model_copied_with_its_optimizer_trains_on_as_the_original(opt_cls, kw, how):
    # the optimizer's state is keyed by id(param): a copy keyed by the old ids lost its
    # moments (a restart, without a word) while the original kept them
    import copy
    import pickle

    model, opt = _trained(opt_cls, **kw)
    for _ in range(3):
        _step(model, opt)
    if how == "pickle":
        model2, opt2 = pickle.loads(pickle.dumps((model, opt)))
    else:
        model2, opt2 = copy.deepcopy((model, opt))
    assert set(opt2.state) == {id(p) for p in model2.parameters()}
    for _ in range(2):
        _step(model, opt)
        _step(model2, opt2)
    for p, p2 in zip(model.parameters(), model2.parameters()):
        np.testing.assert_array_equal(p2.numpy(), p.numpy())
    state, state2 = opt.state_dict()["state"], opt2.state_dict()["state"]
    assert state.keys() == state2.keys() and state
    for i, st in state.items():
        assert st.keys() == state2[i].keys()
        for key, value in st.items():
            np.testing.assert_array_equal(state2[i][key], value)
