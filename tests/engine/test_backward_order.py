"""The backward pass's one-pass order (nodes by decreasing creation number) and its fast paths:
leaf gradients handed over without a copy, cross-entropy's training-loop entry. Each case is
checked against finite differences or against the general path it short-cuts."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import gradcheck

import everyo as eo
from everyo.core.ops import nll


def test_diamond_and_reuse_match_finite_differences():
    # b feeds three consumers made in different orders; w is used twice
    def fn(a, w):
        b = a * w
        c = (b * b).sum()
        d = (b.exp() * w).sum()
        e = (b - a).sum()
        return c + e * d + (a @ a.T).sum()

    rng = np.random.default_rng(0)
    assert gradcheck(fn, rng.standard_normal((3, 3)), rng.standard_normal((3, 3)))


def test_deep_chain_and_late_branch():
    x = eo.tensor([0.5, -1.0], requires_grad=True)
    y = x
    for _ in range(5000):  # no recursion, no quadratic walk
        y = y * 1.0
    side = x * 3.0  # made after the chain, consumed with it: its gradient still arrives
    (y + side).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_parameter_used_twice_gets_one_summed_grad():
    w = eo.nn.Parameter(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    x = eo.tensor(np.eye(2, dtype=np.float32))
    out = eo.linear(x, w) + eo.linear(x * 2.0, w)
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full((2, 2), 3.0, np.float32))


def test_accumulates_into_an_existing_grad_and_never_aliases():
    w = eo.tensor([1.0, 2.0], requires_grad=True)
    (w * 2.0).sum().backward()
    first = w.grad
    (w * 3.0).sum().backward()
    assert w.grad.tolist() == [5.0, 5.0] and first.tolist() == [2.0, 2.0]
    # add's backward hands the same array to both parents: each .grad must be its own
    a = eo.tensor([1.0], requires_grad=True)
    b = eo.tensor([1.0], requires_grad=True)
    (a + b).sum().backward()
    a.grad.data += 10
    assert b.grad.tolist() == [1.0]


def test_leaf_grad_keeps_the_leaf_dtype():
    w = eo.tensor(np.array([1.0, 2.0], np.float64), requires_grad=True)
    x = eo.tensor(np.array([1.0, 1.0], np.float32))
    (w * x).sum().backward()
    assert w.grad.dtype == np.float64 and w.grad.tolist() == [1.0, 1.0]


def test_root_gradient_is_copied_not_aliased():
    w = eo.tensor([1.0, 2.0], requires_grad=True)
    g = np.array([1.0, 1.0], np.float32)
    w.backward(g)  # a leaf as the root
    w.grad.data += 1
    assert g.tolist() == [1.0, 1.0]
    y = w * 1.0
    y.retain_grad()
    y.backward(g)
    y.grad.data += 1
    assert g.tolist() == [1.0, 1.0] and y.grad.tolist() == [2.0, 2.0]


def test_retain_graph_and_second_backward_error():
    w = eo.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    assert w.grad.tolist() == [4.0, 8.0]
    with pytest.raises(eo.EveryOAutogradError, match="second time"):
        loss.backward()


def test_scalar_root_gradient_dtypes():
    for dt in (np.float16, np.float32, np.float64):
        w = eo.tensor(np.array([3.0], dt), requires_grad=True)
        (w * w).sum().backward()
        assert w.grad.dtype == dt and w.grad.tolist() == [6.0]
    w = eo.tensor(np.array([[3.0]], np.float32), requires_grad=True)
    (w * w).backward()  # one element, not 0-d
    assert w.grad.tolist() == [[6.0]]


def _general(x, t, **kw):
    """Cross-entropy through the dispatch point and _nll_core (the path the entry skips)."""
    return nll._nll_core(nll.CROSS_ENTROPY, x, t, kw.get("weight"), kw.get("ignore_index", -100),
                         kw.get("reduction", "mean"), 0.0, True)  # fmt: skip


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.int8, np.uint64])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_entry_matches_general_path(dtype, reduction):
    rng = np.random.default_rng(1)
    z = rng.standard_normal((6, 4)).astype(np.float32)
    labels = np.array([0, 3, 1, 2, 3, 0], dtype)
    x1, x2 = (eo.tensor(z, requires_grad=True) for _ in range(2))
    fast = eo.cross_entropy(x1, eo.tensor(labels), reduction=reduction)
    slow = _general(x2, eo.tensor(labels), reduction=reduction)
    assert fast.dtype == slow.dtype and fast.item() == slow.item()
    fast.backward()
    slow.backward()
    np.testing.assert_array_equal(x1.grad.numpy(), x2.grad.numpy())


def test_cross_entropy_entry_on_transposed_and_strided_logits():
    rng = np.random.default_rng(3)
    z = rng.standard_normal((5, 7)).astype(np.float32)
    labels = eo.tensor([4, 0, 1, 2, 3])
    for view in (z.T.copy().T, z[:, ::1], np.asfortranarray(z)):  # F-ordered and C-ordered
        x1, x2 = eo.tensor(z, requires_grad=True), eo.as_tensor(view).requires_grad_()
        a, b = eo.cross_entropy(x1, labels), eo.cross_entropy(x2, labels)
        assert a.item() == b.item()
        a.backward()
        b.backward()
        np.testing.assert_array_equal(x1.grad.numpy(), x2.grad.numpy())
    wide = rng.standard_normal((5, 14)).astype(np.float32)
    x1 = eo.tensor(wide[:, ::2].copy(), requires_grad=True)
    x2 = eo.as_tensor(wide[:, ::2]).requires_grad_()  # a strided view, no copy
    assert eo.cross_entropy(x1, labels).item() == eo.cross_entropy(x2, labels).item()


@pytest.mark.parametrize("labels", [[0, -1, 2], [0, 3, 1], [-100, 1, 2], [0, 2**40, 1]])
def test_cross_entropy_bad_labels_still_raise(labels):
    x = eo.tensor(np.zeros((3, 3), np.float32), requires_grad=True)
    with pytest.raises(IndexError, match=r"lie in \[0, 3\)"):
        eo.cross_entropy(x, eo.tensor(np.array(labels, np.int64)), ignore_index=-7)


def test_cross_entropy_ignored_labels_take_the_general_path():
    z = np.log(np.array([[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]], np.float32))
    x = eo.tensor(z, requires_grad=True)
    # -100 (the default ignore_index) among the labels: counted for nothing
    loss = eo.cross_entropy(x, eo.tensor([0, -100, 1]))
    assert loss.item() == pytest.approx(-(np.log(0.5) + np.log(0.8)) / 2, rel=1e-6)
    loss.backward()  # an ignored row gets no gradient (it got its softmax before)
    np.testing.assert_allclose(x.grad.numpy(), [[-0.25, 0.25], [0, 0], [0.1, -0.1]], atol=1e-6)
    x.grad = None
    # an ignore_index that is a class: rows with that label count for nothing
    loss = eo.cross_entropy(x, eo.tensor([0, 1, 1]), ignore_index=1)
    assert loss.item() == pytest.approx(-np.log(0.5), rel=1e-6)
    loss.backward()
    assert x.grad.numpy()[1:].tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_cross_entropy_gradient_matches_finite_differences():
    labels = eo.tensor([2, 0, 1, 2])
    rng = np.random.default_rng(2)
    ignored = eo.tensor([2, -100, 1, 2])
    assert gradcheck(lambda z: eo.cross_entropy(z, ignored), rng.standard_normal((4, 3)))
    assert gradcheck(lambda z: eo.cross_entropy(z, labels, ignore_index=0),
                     rng.standard_normal((4, 3)))  # fmt: skip
    assert gradcheck(lambda z: eo.cross_entropy(z, labels), rng.standard_normal((4, 3)))
    assert gradcheck(lambda z: eo.cross_entropy(z, labels, reduction="sum") * 3.0,
                     rng.standard_normal((4, 3)))  # fmt: skip


def test_cross_entropy_entry_defers_to_recording_profiler():
    from everyo.profiler import profile

    x = eo.tensor(np.zeros((2, 3), np.float32), requires_grad=True)
    with profile(record_ops=True) as prof:
        eo.cross_entropy(x, eo.tensor([0, 2]))
    assert "cross_entropy" in {r["name"] for r in prof.summary()}


def test_shared_seed_gradient_never_becomes_a_grad():
    # a 0-d loss starts from a shared read-only one: what reaches .grad is a writeable copy
    w = eo.tensor(3.0, requires_grad=True)
    w.backward()  # a 0-d leaf as the root
    w.grad.data += 1
    loss = (w * 2.0).sum()
    loss.retain_grad()
    loss.backward()
    loss.grad.data += 1
    assert loss.grad.item() == 2.0 and w.grad.item() == 4.0
    y = w * 1.0
    y.retain_grad()
    y.backward()  # identity-like chain: the gradient may be handed down unchanged
    y.grad.data *= 5
    assert w.grad.item() == 5.0
    (w * 1.0).backward()
    assert w.grad.item() == 6.0
