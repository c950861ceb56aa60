"""The fast entries of the common ops (issue 14): the same results as the full path, and every
case the fast path must not take (op recording, autocast, graphs, odd operands) still handled."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import gradcheck

import everyo as eo
import everyo.nn.functional as F
from everyo.core import ops
from everyo.core.ops import elementwise, linalg, nn_ops, reduce
from everyo.core.tensor import Tensor
from everyo.errors import EveryOShapeError
from everyo.profiler.recording import hooks

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5)).astype(np.float32)
Y = RNG.standard_normal((4, 5)).astype(np.float32) + 3.0

CASES = [  # (entry, the full implementation, operands)
    (elementwise.add, elementwise._add, (X, Y)),
    (elementwise.subtract, elementwise._subtract, (X, Y)),
    (elementwise.multiply, elementwise._multiply, (X, 2.5)),
    (elementwise.divide, elementwise._divide, (X, Y)),
    (elementwise.power, elementwise._power, (np.abs(X), 3)),
    (elementwise.less, None, (X, Y)),
    (linalg.matmul, linalg._matmul_op, (X, Y.T)),
    (nn_ops.relu, nn_ops._relu, (X,)),
    (elementwise.exp, elementwise._exp, (X,)),
    (elementwise.negative, elementwise._negative, (X,)),
]


def _t(v):
    return eo.tensor(v) if isinstance(v, np.ndarray) else v


@pytest.mark.parametrize("entry, full, operands", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_fast_entry_equals_full_path(entry, full, operands):
    fast = entry(*map(_t, operands))
    assert isinstance(fast, Tensor) and not fast.requires_grad and fast._node is None
    if full is not None:
        slow = full(*map(_t, operands))
        assert fast.dtype == slow.dtype and fast.shape == slow.shape
        np.testing.assert_array_equal(fast.numpy(), slow.numpy())


def test_reductions_and_zero_d_results_are_arrays():
    t = eo.tensor(X)
    s = t.sum()
    assert isinstance(s.data, np.ndarray) and s.shape == () and s.item() == pytest.approx(X.sum())
    assert t.sum(dim=1, keepdim=True).shape == (4, 1) and t.mean(axis=[0, 1]).shape == ()
    np.testing.assert_allclose(reduce.max(t, 0).numpy(), X.max(0))
    z = eo.tensor(2.0) + eo.tensor(3.0)  # 0-d + 0-d gives a NumPy scalar: wrapped again
    assert isinstance(z.data, np.ndarray) and z.item() == 5.0
    assert isinstance(eo.relu(eo.tensor(-1.0)).data, np.ndarray)
    with pytest.raises(TypeError, match="not both"):
        t.sum(axis=0, dim=0)


def test_reflected_operators():
    t = eo.tensor(X)
    np.testing.assert_allclose((2 - t).numpy(), 2 - X)
    np.testing.assert_allclose((1 / eo.tensor(Y)).numpy(), 1 / Y, rtol=1e-6)
    np.testing.assert_allclose((2.0**t).numpy(), 2.0**X, rtol=1e-6)
    np.testing.assert_allclose((X @ eo.tensor(Y.T)).numpy(), X @ Y.T, rtol=1e-5)  # ndarray @ t


def test_errors_come_from_the_full_path():
    with pytest.raises(EveryOShapeError, match="do not broadcast"):
        eo.ones(2, 3) + eo.ones(4, 5)
    with pytest.raises(EveryOShapeError, match="inner dims"):
        eo.ones(2, 3) @ eo.ones(4, 5)
    with pytest.raises(EveryOShapeError, match="at least 1 dimension"):
        eo.tensor(2.0) @ eo.tensor(3.0)


class Recording:
    record_ops = True

    def __init__(self):
        self.ops = []

    def op_call(self, name, fn, args, kwargs):
        self.ops.append(name)
        return fn(*args, **kwargs)

    def scope(self):
        return None


def test_record_ops_sees_every_fast_op():
    a, b = eo.tensor(X), eo.tensor(Y)
    rec = Recording()
    hooks.set_active(rec)
    try:
        a + b, a @ b.T, eo.relu(a), a.sum(), 2 * a, a.mean(dim=0), -a, a < b, a.exp()
    finally:
        hooks.set_active(None)
    assert rec.ops == ["add", "transpose", "matmul", "relu", "sum", "multiply", "mean",
                       "negative", "less", "exp"]  # fmt: skip


def test_a_profiler_not_recording_ops_keeps_the_fast_path_and_graph_scopes():
    class ModuleLevel(Recording):
        record_ops = False

        def scope(self):
            return ("Linear", "0")

    rec = ModuleLevel()
    hooks.set_active(rec)
    try:
        plain = eo.tensor(X) + eo.tensor(Y)
        w = eo.tensor(X, requires_grad=True)
        tracked = w * 2
    finally:
        hooks.set_active(None)
    assert rec.ops == [] and plain._node is None
    assert tracked._node.name == "multiply" and tracked._node.scope == ("Linear", "0")


def test_autocast_still_applies_to_matmul():
    a, b = eo.tensor(X), eo.tensor(Y.T)
    with eo.autocast("float16"):
        out = a @ b
        assert (a + a).dtype == np.float32  # elementwise ops are not autocast
    assert out.dtype == np.float16
    assert (a @ b).dtype == np.float32  # the block closed: the fast path again


def test_graph_and_no_grad():
    w = eo.tensor(X, requires_grad=True)
    y = w * eo.tensor(Y) + 1.0
    assert y.requires_grad and y._node.name == "add"
    with eo.no_grad():
        z = w * eo.tensor(Y) + 1.0
        s = w.sum()
    assert not z.requires_grad and z._node is None and s._node is None
    np.testing.assert_array_equal(z.numpy(), y.numpy())


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: (a + b) * (a - b) / (b * b + 1.0),
        lambda a, b: 2.0 - a**2 + 1.0 / (b * b + 1.0) + 3.0 * b,
        lambda a, b: F.relu(a @ b.T).sum() + (-a).exp().mean(),
        lambda a, b: (a < b) * a + a.sum(dim=1, keepdim=True),
    ],
)
def test_gradients_through_the_entries_match_finite_differences(fn):
    a = RNG.standard_normal((3, 4))
    b = RNG.standard_normal((3, 4))
    assert gradcheck(fn, a, b)


def test_tensor_declares_exactly_the_bound_methods():
    declared = set(Tensor.__annotations__)
    bound = set(ops.TENSOR_METHODS)
    assert declared == bound
    for name, fn in ops.TENSOR_METHODS.items():
        assert getattr(Tensor, name) is fn, name
    assert Tensor.__add__ is eo.add and Tensor.__matmul__ is eo.matmul  # no wrapper in between
