"""Layers: finite-difference gradients (input and every parameter, float64), seeding,
Dropout in eval mode, BatchNorm running statistics, attention against a NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import gradcheck

import everyo as eo
import everyo.nn.functional as F

RNG = np.random.default_rng(0)


def module_gradcheck(module, *inputs, eps=1e-6, atol=1e-6, rtol=1e-4, check_input=True):
    """Autograd gradients of a random projection of ``module(*inputs)`` against central
    differences, for the first (floating) input and every parameter, in float64."""
    module.to(dtype="float64")
    xs = [
        eo.tensor(np.asarray(x, dtype=np.float64 if np.asarray(x).dtype.kind == "f" else None))
        for x in inputs
    ]
    if check_input and xs[0].dtype.kind == "f":
        xs[0].requires_grad_(True)
    out = module(*xs)
    out = out[0] if isinstance(out, tuple) else out
    proj = np.random.default_rng(1).standard_normal(out.shape)
    module.zero_grad()
    out.backward(eo.tensor(proj, dtype="float64"))
    targets = [("param " + n, p) for n, p in module.named_parameters()]
    if check_input and xs[0].requires_grad:
        targets.insert(0, ("input", xs[0]))

    def objective():
        with eo.no_grad():
            o = module(*xs)
        o = o[0] if isinstance(o, tuple) else o
        return float((o.numpy() * proj).sum())

    for name, t in targets:
        analytic = np.zeros(t.shape) if t.grad is None else t.grad.numpy()
        flat = t.data.reshape(-1)
        numeric = np.zeros(flat.size)
        for k in range(flat.size):
            orig = float(flat[k])
            flat[k] = orig + eps
            up = objective()
            flat[k] = orig - eps
            down = objective()
            flat[k] = orig
            numeric[k] = (up - down) / (2 * eps)
        np.testing.assert_allclose(
            analytic.reshape(-1), numeric, rtol=rtol, atol=atol, err_msg=f"gradient of {name}"
        )
    return True


def randn(*shape):
    return RNG.standard_normal(shape)


def test_linear_gradients():
    assert module_gradcheck(eo.Linear(4, 3, seed=0), randn(5, 4))


def test_linear_without_bias_and_3d_input():
    layer = eo.Linear(4, 3, bias=False, seed=0)
    assert layer.bias is None and [n for n, _ in layer.named_parameters()] == ["weight"]
    assert module_gradcheck(layer, randn(2, 5, 4))


def test_linear_matches_pytorch_layout_and_init_bound():
    layer = eo.Linear(64, 8, seed=3)
    assert layer.weight.shape == (8, 64) and layer.bias.shape == (8,)
    bound = 1 / np.sqrt(64)
    w = layer.weight.numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert np.abs(layer.bias.numpy()).max() <= bound
    x = randn(2, 64).astype(np.float32)
    np.testing.assert_allclose(
        layer(eo.tensor(x)).numpy(), x @ w.T + layer.bias.numpy(), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda s: eo.Linear(5, 4, seed=s),
        lambda s: eo.Conv2d(2, 3, 3, seed=s),
        lambda s: eo.Embedding(7, 3, seed=s),
        lambda s: eo.MultiheadAttention(8, 2, seed=s),
        lambda s: eo.TransformerEncoderLayer(8, 2, 16, seed=s),
    ],
)
def test_same_seed_same_weights(make):
    a, b, c = make(11), make(11), make(12)
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(np.array_equal(sa[k].numpy(), sb[k].numpy()) for k in sa)
    assert any(not np.array_equal(sa[k].numpy(), sc[k].numpy()) for k in sa if "weight" in k)


def test_manual_seed_makes_unseeded_layers_reproducible():
    eo.manual_seed(5)
    a = eo.Linear(3, 3).weight.numpy()
    eo.manual_seed(5)
    assert np.array_equal(a, eo.Linear(3, 3).weight.numpy())


def test_conv2d_gradients_and_shape():
    conv = eo.Conv2d(2, 3, 3, stride=1, padding=1, seed=0)
    assert conv.weight.shape == (3, 2, 3, 3)
    assert conv(eo.zeros(1, 2, 5, 5)).shape == (1, 3, 5, 5)
    assert module_gradcheck(conv, randn(2, 2, 4, 4))


def test_conv2d_same_padding_and_stride():
    assert eo.Conv2d(1, 2, 5, padding="same", seed=0)(eo.zeros(1, 1, 7, 7)).shape == (1, 2, 7, 7)
    assert eo.Conv2d(1, 2, 3, stride=2, seed=0)(eo.zeros(1, 1, 7, 7)).shape == (1, 2, 3, 3)


def test_pooling_gradients():
    x = RNG.permutation(2 * 2 * 4 * 4).reshape(2, 2, 4, 4).astype(np.float64) / 7  # no ties
    assert module_gradcheck(eo.MaxPool2d(2), x)
    assert module_gradcheck(eo.AvgPool2d(2), x)
    assert eo.MaxPool2d(2)(eo.zeros(1, 1, 6, 6)).shape == (1, 1, 3, 3)


@pytest.mark.parametrize("layer", ["bn1d", "bn1d_seq", "bn2d", "ln"])
def test_norm_gradients(layer):
    if layer == "bn1d":
        m, x = eo.BatchNorm1d(3), randn(6, 3)
    elif layer == "bn1d_seq":
        m, x = eo.BatchNorm1d(3), randn(4, 3, 5)
    elif layer == "bn2d":
        m, x = eo.BatchNorm2d(2), randn(3, 2, 3, 3)
    else:
        m, x = eo.LayerNorm(5), randn(3, 5)
    with eo.no_grad():  # non-trivial affine parameters
        for p in m.parameters():
            p.data[...] = RNG.uniform(0.5, 1.5, p.shape)
    assert module_gradcheck(m, x)


def test_batchnorm_eval_gradients_use_running_stats():
    m = eo.BatchNorm1d(3)
    m.running_mean.data[...] = [0.1, -0.2, 0.3]
    m.running_var.data[...] = [1.5, 0.5, 2.0]
    m.eval()
    assert module_gradcheck(m, randn(4, 3))


def test_batchnorm_running_statistics():
    m = eo.BatchNorm2d(2, momentum=0.1)
    x = randn(8, 2, 3, 3).astype(np.float32) * 3 + 1
    m(eo.tensor(x))
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3), ddof=1)  # running variance is unbiased, as in PyTorch
    np.testing.assert_allclose(m.running_mean.numpy(), 0.1 * mean, rtol=1e-5)
    np.testing.assert_allclose(m.running_var.numpy(), 0.9 + 0.1 * var, rtol=1e-5)
    assert int(m.num_batches_tracked.item()) == 1
    m.eval()  # eval: running statistics, no update
    before = m.running_mean.numpy()
    out = m(eo.tensor(x)).numpy()
    expected = (x - m.running_mean.numpy()[None, :, None, None]) / np.sqrt(
        m.running_var.numpy()[None, :, None, None] + m.eps
    )
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    assert np.array_equal(before, m.running_mean.numpy())
    assert "running_mean" in m.state_dict() and "num_batches_tracked" in m.state_dict()


def test_batchnorm_shape_error():
    with pytest.raises(eo.EveryOShapeError, match="BatchNorm2d"):
        eo.BatchNorm2d(3)(eo.zeros(4, 3))
    with pytest.raises(eo.EveryOShapeError, match="3 channels"):
        eo.BatchNorm1d(3)(eo.zeros(4, 5))


def test_dropout_identity_in_eval_and_scaled_in_train():
    d = eo.Dropout(0.5, seed=0)
    x = eo.ones(200, 50)
    d.eval()
    assert d(x) is x
    d.train()
    y = d(x).numpy()
    assert set(np.unique(y).tolist()) == {0.0, 2.0}
    assert 0.4 < (y == 0).mean() < 0.6


def test_dropout_seed_reproducible_and_gradient():
    x = eo.ones(10, 10)
    assert np.array_equal(eo.Dropout(0.3, seed=4)(x).numpy(), eo.Dropout(0.3, seed=4)(x).numpy())
    d = eo.Dropout(0.3, seed=4)
    first, second = d(x).numpy(), d(x).numpy()
    assert not np.array_equal(first, second)  # a new mask per call
    xt = eo.ones(4, 4, requires_grad=True)
    out = eo.Dropout(0.5, seed=1)(xt)
    out.sum().backward()
    np.testing.assert_array_equal(xt.grad.numpy(), out.numpy())
    with pytest.raises(eo.EveryOConfigError):
        eo.Dropout(1.5)


def test_embedding_gradients_and_padding():
    emb = eo.Embedding(6, 3, padding_idx=0, seed=0)
    assert np.all(emb.weight.numpy()[0] == 0)
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    assert emb(eo.tensor(idx)).shape == (2, 3, 3)
    assert module_gradcheck(eo.Embedding(6, 3, seed=0), idx, check_input=False)
    # the padding row gets no gradient by design (so finite differences would disagree there)
    emb(eo.tensor(idx)).sum().backward()
    assert np.all(emb.weight.grad.numpy()[0] == 0)


@pytest.mark.parametrize("cls", [eo.ReLU, eo.GELU, eo.Sigmoid, eo.Tanh, eo.Softmax, eo.LogSoftmax])
def test_activation_layers(cls):
    x = randn(3, 4)
    x[np.abs(x) < 1e-3] = 0.5
    assert module_gradcheck(cls(), x)
    fn = {"ReLU": F.relu, "GELU": F.gelu, "Sigmoid": F.sigmoid, "Tanh": F.tanh,
          "Softmax": lambda t: F.softmax(t, dim=-1),
          "LogSoftmax": lambda t: F.log_softmax(t, dim=-1)}[cls.__name__]  # fmt: skip
    np.testing.assert_allclose(cls()(eo.tensor(x)).numpy(), fn(eo.tensor(x)).numpy())


def test_flatten_identity():
    assert eo.Flatten()(eo.zeros(2, 3, 4)).shape == (2, 12)
    assert eo.Flatten(0)(eo.zeros(2, 3)).shape == (6,)
    x = eo.zeros(2)
    assert eo.Identity(5, any=1)(x) is x
    assert module_gradcheck(eo.Flatten(), randn(2, 2, 3))


def _mha_reference(mha, q, k, v, mask=None):
    e, h = mha.embed_dim, mha.num_heads
    w, b = mha.in_proj_weight.numpy(), mha.in_proj_bias.numpy()
    qp, kp, vp = (
        q @ w[:e].T + b[:e],
        k @ w[e : 2 * e].T + b[e : 2 * e],
        v @ w[2 * e :].T + b[2 * e :],
    )

    def heads(a):
        n, length, _ = a.shape
        return a.reshape(n, length, h, e // h).transpose(0, 2, 1, 3)

    s = heads(qp) @ heads(kp).transpose(0, 1, 3, 2) / np.sqrt(e // h)
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = (p @ heads(vp)).transpose(0, 2, 1, 3).reshape(q.shape)
    return out @ mha.out_proj.weight.numpy().T + mha.out_proj.bias.numpy(), p.mean(1)


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_matches_reference(need_weights):
    mha = eo.MultiheadAttention(8, 2, batch_first=True, seed=0)
    with eo.no_grad():
        mha.in_proj_bias.data[...] = RNG.standard_normal(24) * 0.1
    q, kv = randn(2, 3, 8).astype(np.float32), randn(2, 4, 8).astype(np.float32)
    causal = np.triu(np.ones((3, 4), bool), 1)
    out, w = mha(eo.tensor(q), eo.tensor(kv), eo.tensor(kv), attn_mask=causal,
                 need_weights=need_weights)  # fmt: skip
    ref_out, ref_w = _mha_reference(mha, q, kv, kv, causal)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-4, atol=1e-5)
    if need_weights:
        np.testing.assert_allclose(w.numpy(), ref_w, rtol=1e-4, atol=1e-6)
    else:
        assert w is None


def test_multihead_attention_sequence_first_and_padding_mask():
    mha = eo.MultiheadAttention(8, 4, seed=1)
    x = randn(5, 2, 8).astype(np.float32)  # (L, N, E)
    pad = np.zeros((2, 5), bool)
    pad[1, 3:] = True
    out, w = mha(eo.tensor(x), eo.tensor(x), eo.tensor(x), key_padding_mask=pad)
    assert out.shape == (5, 2, 8) and w.shape == (2, 5, 5)
    assert np.all(w.numpy()[1, :, 3:] == 0)
    ref, _ = _mha_reference(mha, x.transpose(1, 0, 2), x.transpose(1, 0, 2),
                            x.transpose(1, 0, 2), pad[:, None, None, :])  # fmt: skip
    np.testing.assert_allclose(out.numpy(), ref.transpose(1, 0, 2), rtol=1e-4, atol=1e-5)


class _SelfAttention(eo.Module):
    def __init__(self, need_weights):
        super().__init__()
        self.mha = eo.MultiheadAttention(4, 2, batch_first=True, seed=0)
        self.need_weights = need_weights

    def forward(self, x):
        return self.mha(x, x, x, need_weights=self.need_weights)[0]


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_gradients(need_weights):
    assert module_gradcheck(_SelfAttention(need_weights), randn(2, 3, 4), atol=1e-5)


def test_transformer_encoder_layer_gradients_and_modes():
    for norm_first in (False, True):
        layer = eo.TransformerEncoderLayer(4, 2, 6, dropout=0.0, batch_first=True,
                                           norm_first=norm_first, seed=0)  # fmt: skip
        assert module_gradcheck(layer, randn(2, 3, 4), atol=1e-5)
    layer = eo.TransformerEncoderLayer(8, 2, 16, dropout=0.5, seed=0, activation="gelu")
    x = eo.tensor(randn(3, 2, 8).astype(np.float32))
    layer.eval()
    np.testing.assert_array_equal(layer(x).numpy(), layer(x).numpy())
    paths = [p for p, _ in layer.named_modules()]
    assert "self_attn.out_proj" in paths


def test_gradcheck_helper_is_reused_for_functional_linear():
    w, b = randn(3, 4), randn(3)
    assert gradcheck(F.linear, randn(2, 4), w, b)
