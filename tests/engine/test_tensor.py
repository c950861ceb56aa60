"""Tensors: construction, dtypes, properties, conversions, operators, indexing, guide examples."""

from __future__ import annotations

import numpy as np
import pytest

import everyo as eo


def test_guide_matmul_example():
    a = eo.ones(128, 256)
    b = eo.ones(256, 64)
    result = eo.matmul(a, b)
    assert result.shape == (128, 64)
    assert float(result.numpy()[0, 0]) == 256.0


@pytest.mark.parametrize(
    "data,dtype",
    [
        (1.5, "float32"),
        ([1.0, 2.0], "float32"),
        ([1, 2], "int64"),
        ([True, False], "bool"),
        (np.zeros(3, dtype=np.float64), "float64"),
        (np.zeros(3, dtype=np.float16), "float16"),
        (np.zeros(3, dtype=np.int32), "int32"),
        (np.zeros(3, dtype=np.uint8), "int64"),
    ],
)
def test_dtype_rules(data, dtype, device_name):
    assert eo.tensor(data, device=device_name).dtype == np.dtype(dtype)


def test_explicit_dtypes_and_bad_ones():
    for name in ("float16", "float32", "float64", "int32", "int64", "bool"):
        assert eo.zeros(2, dtype=name).dtype == np.dtype(name)
    assert eo.tensor([1, 2], dtype=eo.float64).dtype == np.float64
    with pytest.raises(eo.EveryODTypeError):
        eo.zeros(2, dtype="complex64")
    with pytest.raises(eo.EveryODTypeError):
        eo.tensor(np.zeros(2, dtype=np.complex64))


@pytest.mark.parametrize("ragged", [[[1, 2], [3]], [[1.0], [2.0, 3.0]], [[1, 2], 3]])
def test_ragged_input_is_a_dtype_error(ragged):
    with pytest.raises(eo.EveryODTypeError, match="ragged"):
        eo.tensor(ragged)


def test_properties(device_name):
    t = eo.zeros(2, 3, device=device_name, requires_grad=True)
    assert (t.shape, t.ndim, t.size, t.dtype) == ((2, 3), 2, 6, np.float32)
    assert str(t.device) == ("cpu" if device_name == "cpu" else "cuda:0")
    assert t.requires_grad and t.is_leaf and t.grad is None
    assert t.T.shape == (3, 2)
    y = t * 2
    assert not y.is_leaf
    assert isinstance(eo.Tensor([1.0]), eo.Tensor)


def test_conversions(device_name):
    t = eo.tensor([[1.0, 2.0], [3.0, 4.0]], device=device_name)
    assert isinstance(t.numpy(), np.ndarray)
    assert t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert t[0, 1].item() == 2.0
    assert t.to(dtype="float64").dtype == np.float64
    assert t.astype("int32").dtype == np.int32
    assert t.cpu().device == eo.device("cpu")
    assert t.to(t.device) is t
    c = t.clone()
    c[0, 0] = 9.0
    assert t[0, 0].item() == 1.0
    d = t.detach()
    assert d.data is t.data and not d.requires_grad
    with pytest.raises(ValueError, match="one element"):
        t.item()


def test_tensor_copies_and_as_tensor_shares():
    arr = np.ones(3, dtype=np.float32)
    assert eo.as_tensor(arr).data is arr
    t = eo.tensor(arr)
    arr[0] = 5
    assert t[0].item() == 1.0
    assert np.asarray(eo.tensor([1.0, 2.0])).tolist() == [1.0, 2.0]


def test_shape_methods(device_name):
    t = eo.arange(24, device=device_name).reshape(2, 3, 4)
    assert t.reshape(6, 4).shape == (6, 4)
    assert t.reshape((4, -1)).shape == (4, 6)
    assert t.transpose(0, 2).shape == (4, 3, 2)
    assert t.permute(2, 0, 1).shape == (4, 2, 3)
    assert t.flatten().shape == (24,)
    assert t.flatten(1).shape == (2, 12)
    assert t.unsqueeze(0).shape == (1, 2, 3, 4)
    assert t.unsqueeze(0).squeeze().shape == (2, 3, 4)
    assert eo.squeeze(eo.zeros(1, 3, 1), 0).shape == (3, 1)
    with pytest.raises(eo.EveryOShapeError):
        t.reshape(5, 5)


def test_operators_and_reflected(device_name):
    a = eo.tensor([1.0, 2.0, 4.0], device=device_name)
    np.testing.assert_allclose((a + 1).numpy(), [2, 3, 5])
    np.testing.assert_allclose((1 + a).numpy(), [2, 3, 5])
    np.testing.assert_allclose((1 - a).numpy(), [0, -1, -3])
    np.testing.assert_allclose((2 / a).numpy(), [2, 1, 0.5])
    np.testing.assert_allclose((2**a).numpy(), [2, 4, 16])
    np.testing.assert_allclose((a**2).numpy(), [1, 4, 16])
    np.testing.assert_allclose((-a).numpy(), [-1, -2, -4])
    np.testing.assert_allclose(abs(-a).numpy(), [1, 2, 4])
    assert (a * 2).dtype == np.float32  # Python scalars keep the tensor's dtype
    m = eo.ones(2, 3, device=device_name)
    assert (m @ eo.ones(3, device=device_name)).shape == (2,)
    if device_name == "cpu":
        assert (np.ones(3, dtype=np.float32) + a).numpy().tolist() == [2, 3, 5]


def test_comparisons_are_boolean_and_not_differentiable(device_name):
    a = eo.tensor([1.0, 2.0, 3.0], device=device_name, requires_grad=True)
    for r in (a > 1, a >= 2, a < 2, a <= 2, a == 2, a != 2):
        assert r.dtype == np.bool_ and not r.requires_grad
    assert (a > 1).tolist() == [False, True, True]
    assert (a == eo.tensor([1.0, 0.0, 3.0], device=device_name)).tolist() == [True, False, True]


def test_broadcast_errors_name_both_shapes():
    with pytest.raises(eo.EveryOShapeError, match=r"\(2, 3\).*\(4,\)"):
        eo.ones(2, 3) + eo.ones(4)
    with pytest.raises(eo.EveryOShapeError, match="matmul"):
        eo.ones(2, 3) @ eo.ones(2, 3)


def test_indexing_values(device_name):
    t = eo.arange(12, device=device_name).reshape(3, 4)
    assert t[1].tolist() == [4, 5, 6, 7]
    assert t[:, 1:3].shape == (3, 2)
    assert t[..., -1].tolist() == [3, 7, 11]
    assert t[None].shape == (1, 3, 4)
    assert t[[0, 0, 2]].shape == (3, 4)
    assert t[t > 9].tolist() == [10, 11]
    idx = eo.tensor([2, 0], device=device_name)
    assert t[idx, 1].tolist() == [9, 1]
    with pytest.raises(IndexError):
        t[5]


def test_setitem_guarded_by_grad():
    t = eo.zeros(3, requires_grad=True)
    with pytest.raises(eo.EveryOAutogradError):
        t[0] = 1.0
    with eo.no_grad():
        t[0] = 1.0
    assert t.tolist() == [1.0, 0.0, 0.0]


def test_requires_grad_only_on_floats():
    with pytest.raises(eo.EveryODTypeError, match="floating"):
        eo.tensor([1, 2], requires_grad=True)
    with pytest.raises(eo.EveryODTypeError):
        eo.zeros(2, dtype="int64", requires_grad=True)
    assert eo.zeros(2, dtype="float16", requires_grad=True).requires_grad


def test_repr_and_truth():
    assert "dtype=float32" in repr(eo.ones(2))
    assert "requires_grad=True" in repr(eo.ones(2, requires_grad=True))
    assert bool(eo.tensor(1.0))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(eo.ones(2))
    assert len(eo.ones(4, 2)) == 4
    assert [r.shape for r in eo.ones(2, 3)] == [(3,), (3,)]


def test_creation_ops(device_name):
    d = device_name
    assert eo.zeros((32, 4), device=d).shape == (32, 4)
    assert eo.full((2, 2), 1.5, device=d).tolist() == [[1.5, 1.5], [1.5, 1.5]]
    assert eo.zeros_like(eo.ones(2, dtype="int32")).dtype == np.int32
    assert eo.ones_like(eo.zeros(3)).tolist() == [1.0, 1.0, 1.0]
    assert eo.empty(2, 3, device=d).shape == (2, 3)
    assert eo.arange(5, device=d).tolist() == [0, 1, 2, 3, 4]
    assert eo.arange(0.0, 1.0, 0.5, device=d).dtype == np.float32
    assert eo.linspace(0, 1, 3, device=d).tolist() == [0.0, 0.5, 1.0]
    assert eo.eye(3, device=d).numpy().trace() == 3
    for fn in (eo.rand, eo.randn):
        a, b = fn(4, 5, seed=7, device=d), fn(4, 5, seed=7, device=d)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert a.dtype == np.float32
    u = eo.uniform(2.0, 3.0, (1000,), seed=1, device=d).numpy()
    assert 2.0 <= u.min() and u.max() < 3.0
    n = eo.normal(5.0, 0.1, (1000,), seed=1, device=d).numpy()
    assert abs(n.mean() - 5.0) < 0.05
    oh = eo.one_hot(eo.tensor([0, 2, 1], device=d), 3)
    assert oh.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]] and oh.dtype == np.float32
    assert eo.ones(2, 2, requires_grad=True, device=d).requires_grad


def test_dtype_shortcut_methods():
    t = eo.tensor([1.5, -2.0])
    assert t.float() is t
    assert t.double().dtype == np.float64 and t.half().dtype == np.float16
    assert t.long().tolist() == [1, -2] and t.int().dtype == np.int32
    assert t.bool().tolist() == [True, True]


def test_every_op_is_in_functional():
    import everyo.nn.functional as F
    from everyo.core import ops

    for name in ops.__all__:
        assert hasattr(eo, name), name
        assert hasattr(F, name), name
    for name in ("relu", "softmax", "cross_entropy", "conv2d", "cat", "silu", "leaky_relu"):
        assert callable(getattr(F, name))
