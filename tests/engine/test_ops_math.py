"""Elementwise, reduction, movement and matmul ops: values and float64 finite-difference
gradients, including broadcasting and every matmul rank combination."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import gradcheck
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import everyo as eo

RNG = np.random.default_rng(2)


def rand(*shape, positive=False):
    a = RNG.standard_normal(shape)
    return np.abs(a) + 0.5 if positive else a


BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power"]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)),
                                    ((4,), (2, 3, 4)), ((), (2, 3))])  # fmt: skip
def test_binary_gradients_with_broadcasting(name, shapes, device_name):
    a = rand(*shapes[0], positive=True)
    b = rand(*shapes[1], positive=name in ("divide", "power"))
    assert gradcheck(getattr(eo, name), a, b, device=device_name)


@settings(max_examples=15, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3))
def test_broadcast_shapes_property(shapes):
    a, b = rand(*shapes.input_shapes[0]), rand(*shapes.input_shapes[1])
    out = eo.multiply(eo.tensor(a), eo.tensor(b))
    assert out.shape == shapes.result_shape
    np.testing.assert_allclose(out.numpy(), a * b)
    assert gradcheck(lambda x, y: x * y + x, a, b)


def test_scalar_operands(device_name):
    x = rand(2, 3, positive=True)
    for fn in (lambda t: t * 3.0, lambda t: 2.0 - t, lambda t: 1.0 / t, lambda t: t**3,
               lambda t: 2.0**t, lambda t: eo.maximum(t, 1.0)):  # fmt: skip
        assert gradcheck(fn, x, device=device_name)


@pytest.mark.parametrize("name", ["negative", "exp", "log", "sqrt", "abs", "tanh", "sigmoid"])
def test_unary_gradients(name, device_name):
    x = rand(3, 4, positive=name in ("log", "sqrt"))
    assert gradcheck(getattr(eo, name), x, device=device_name)


def test_clip_and_where(device_name):
    x = rand(4, 5)
    x[np.abs(np.abs(x) - 0.5) < 1e-3] = 0.1
    assert gradcheck(lambda t: eo.clip(t, -0.5, 0.5), x, device=device_name)
    assert gradcheck(lambda t: t.clamp(min=0.0), x, device=device_name)
    cond = eo.tensor(x > 0, device=device_name)
    assert gradcheck(lambda a, b: eo.where(cond, a, b), x, rand(5), device=device_name)
    assert eo.where(cond, 1.0, 0.0).tolist() == (x > 0).astype(float).tolist()


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "var", "std", "logsumexp"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (1, True), ((0, 2), False),
                                           (-1, True)])  # fmt: skip
def test_reduction_gradients(name, axis, keepdims, device_name):
    x = rand(3, 4, 2)
    fn = lambda t: getattr(eo, name)(t, axis=axis, keepdims=keepdims)  # noqa: E731
    assert gradcheck(fn, x, device=device_name)
    ref = {"logsumexp": lambda a, axis, keepdims: np.log(np.exp(a).sum(axis, keepdims=keepdims))}
    np_fn = ref[name] if name in ref else getattr(np, name)
    np.testing.assert_allclose(fn(eo.tensor(x)).numpy(), np_fn(x, axis=axis, keepdims=keepdims),
                               rtol=1e-10)  # fmt: skip


def test_reduction_keywords_and_args():
    x = eo.tensor(np.arange(6.0).reshape(2, 3))
    assert x.sum(dim=1).tolist() == [3.0, 12.0]
    assert x.mean(dim=0, keepdim=True).shape == (1, 3)
    assert eo.argmax(x, axis=1).tolist() == [2, 2]
    assert eo.argmin(x).item() == 0 and eo.argmax(x).dtype == np.int64
    assert eo.var(x, ddof=1).item() == pytest.approx(np.arange(6.0).var(ddof=1))
    assert np.isfinite(eo.logsumexp(eo.tensor([1000.0, 1000.0])).item())
    with pytest.raises(TypeError):
        eo.sum(x, axis=0, dim=0)


def test_max_ties_share_gradient():
    x = eo.tensor([1.0, 3.0, 3.0], requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5]


MATMUL_SHAPES = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)),
                 ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
                 ((1, 2, 3), (4, 3, 2)), ((3,), (2, 3, 4)), ((2, 2, 3), (3,)),
                 ((2, 1, 2, 3), (3, 3, 2))]  # fmt: skip


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_every_rank(sa, sb, device_name):
    a, b = rand(*sa), rand(*sb)
    out = eo.matmul(eo.tensor(a, device=device_name), eo.tensor(b, device=device_name))
    np.testing.assert_allclose(out.numpy(), np.matmul(a, b), rtol=1e-12)
    assert gradcheck(eo.matmul, a, b, device=device_name)


def test_dot_and_matmul_errors():
    assert eo.dot(eo.tensor([1.0, 2.0]), eo.tensor([3.0, 4.0])).item() == 11.0
    with pytest.raises(eo.EveryOShapeError):
        eo.matmul(eo.tensor(1.0), eo.ones(2))


def test_movement_gradients(device_name):
    x = rand(2, 3, 4)
    d = device_name
    assert gradcheck(lambda t: t.reshape(4, 6), x, device=d)
    assert gradcheck(lambda t: t.transpose(0, 2), x, device=d)
    assert gradcheck(lambda t: t.permute(1, 2, 0), x, device=d)
    assert gradcheck(lambda t: eo.transpose(t), x, device=d)
    assert gradcheck(lambda t: t.flatten(1), x, device=d)
    assert gradcheck(lambda t: t.unsqueeze(1).squeeze(1), x, device=d)
    assert gradcheck(lambda t: eo.broadcast_to(t[:, :1], (2, 3, 4)), x, device=d)
    assert gradcheck(lambda t: t.T, x, device=d)


def test_concatenate_and_stack(device_name):
    a, b, c = rand(2, 3), rand(4, 3), rand(2, 3)
    assert gradcheck(lambda x, y: eo.concatenate([x, y]), a, b, device=device_name)
    assert gradcheck(lambda x, y: eo.concatenate([x, y], dim=1), a, c, device=device_name)
    assert gradcheck(lambda x, y: eo.stack([x, y], axis=-1), a, c, device=device_name)
    assert eo.stack([eo.tensor(a), eo.tensor(c)]).shape == (2, 2, 3)
    with pytest.raises(eo.EveryOShapeError, match="concatenate"):
        eo.concatenate([eo.tensor(a), eo.tensor(rand(2, 4))])


@pytest.mark.parametrize(
    "index",
    [
        (1,),
        (slice(None), slice(1, 3)),
        (Ellipsis, -1),
        (slice(None, None, -1),),
        ([0, 0, 2, 0],),  # fancy, with repeats: gradients accumulate
        ([[1, 1], [0, 2]],),
        (slice(None), [3, 3, 0]),
        ([0, 2], [1, 1]),
    ],
)
def test_getitem_gradients(index, device_name):
    x = rand(3, 4)
    idx = index if len(index) > 1 else index[0]
    assert gradcheck(lambda t: t[idx], x, device=device_name)


def test_getitem_boolean_mask_gradient(device_name):
    x = rand(3, 4)
    mask = eo.tensor(x > 0, device=device_name)
    assert gradcheck(lambda t: t[mask], x, device=device_name)


def test_fancy_repeat_accumulates():
    x = eo.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 0, 2]].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]


def test_astype_gradient_round_trip():
    x = eo.tensor([1.0, 2.0], requires_grad=True)
    y = x.astype("float64") * 3
    y.sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [3.0, 3.0]


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4))
def test_composite_expression(n, m, k):
    a, b = rand(n, m), rand(m, k)
    fn = lambda x, y: (eo.tanh(x @ y) * 2 + 1).exp().sum(axis=0) / 3  # noqa: E731
    assert gradcheck(fn, a, b)


def test_matmul_folded_paths_with_views(device_name):
    a, b = rand(3, 4, 5), rand(4, 6)
    # a transposed (non-contiguous) batch times a matrix takes the folded 2-D path
    fn = lambda x, y: eo.matmul(x.transpose(0, 2, 1), y)  # noqa: E731
    assert gradcheck(fn, a, b, device=device_name)
    assert gradcheck(lambda x, w: eo.linear(x.transpose(1, 0, 2), w), a, rand(2, 5),
                     device=device_name)  # fmt: skip
    only_w = lambda w: eo.matmul(eo.tensor(a, device=device_name), w)  # noqa: E731
    assert gradcheck(only_w, rand(5, 2), device=device_name)
