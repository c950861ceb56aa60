"""Autograd: accumulation, explicit gradients, retain_graph, freed graphs, deep chains, grad
modes (thread-local, context managers and decorators), retain_grad, fresh .grad arrays."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import everyo as eo


def test_grad_is_a_tensor_and_accumulates(device_name):
    x = eo.tensor([1.0, 2.0], requires_grad=True, device=device_name)
    (x * x).sum().backward()
    assert isinstance(x.grad, eo.Tensor) and x.grad.device == x.device
    assert x.grad.tolist() == [2.0, 4.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    x.zero_grad()
    assert x.grad is None


def test_non_scalar_needs_gradient():
    x = eo.ones(2, 3, requires_grad=True)
    y = x * 2
    with pytest.raises(eo.EveryOAutogradError, match="explicit gradient"):
        y.backward()
    y.backward(eo.ones_like(y))
    assert x.grad.tolist() == [[2.0] * 3] * 2
    with pytest.raises(eo.EveryOShapeError):
        (x * 2).backward(eo.ones(3))


def test_backward_without_grad_is_an_error():
    with pytest.raises(eo.EveryOAutogradError, match="requires_grad"):
        eo.ones(2).sum().backward()


def test_second_backward_is_a_clear_error_unless_retained():
    x = eo.ones(3, requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.e, rtol=1e-6)
    with pytest.raises(eo.EveryOAutogradError, match="second time"):
        y.backward()


def test_freed_shared_subgraph_is_an_error():
    x = eo.ones(2, requires_grad=True)
    h = x * 2
    a, b = (h * 3).sum(), (h * 4).sum()
    a.backward()
    with pytest.raises(eo.EveryOAutogradError, match="retain_graph"):
        b.backward()


def test_deep_chain_10000():
    x = eo.tensor(1.0, dtype="float64", requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    assert x.grad.item() == pytest.approx(1.0001**10_000)
    del y  # freeing a 10,000-deep graph must not hit the recursion limit either


def test_diamond_graph_accumulates():
    x = eo.tensor([2.0], requires_grad=True)
    a = x * 3
    y = (a * a + a).sum()
    y.backward()
    assert x.grad.tolist() == [2 * 3 * 6.0 + 3]


def test_no_grad_records_nothing_and_nests():
    x = eo.ones(2, requires_grad=True)
    with eo.no_grad():
        y = x * 2
        assert not eo.is_grad_enabled()
        with eo.enable_grad():
            z = x * 2
            assert eo.is_grad_enabled()
    assert not y.requires_grad and y._node is None
    assert z.requires_grad
    assert eo.is_grad_enabled()


def test_grad_modes_as_decorators():
    @eo.no_grad()
    def f(t):
        return t * 2, eo.is_grad_enabled()

    @eo.no_grad
    def g(t):
        return t * 2

    @eo.set_grad_enabled(False)
    def h():
        return eo.is_grad_enabled()

    x = eo.ones(2, requires_grad=True)
    out, mode = f(x)
    assert not out.requires_grad and mode is False
    assert not g(x).requires_grad
    assert eo.is_grad_enabled()  # the decorator does not switch the mode at definition time
    assert h() is False and eo.is_grad_enabled()


def test_set_grad_enabled_as_call_and_context():
    try:
        eo.set_grad_enabled(False)
        assert not eo.is_grad_enabled()
    finally:
        eo.set_grad_enabled(True)
    with eo.set_grad_enabled(False):
        assert not eo.is_grad_enabled()
    assert eo.is_grad_enabled()


def test_grad_mode_is_thread_local():
    seen = {}
    entered, release = threading.Event(), threading.Event()

    def other():
        with eo.no_grad():
            entered.set()
            release.wait(5)
            seen["other"] = eo.is_grad_enabled()

    t = threading.Thread(target=other)
    t.start()
    entered.wait(5)
    seen["main"] = eo.is_grad_enabled()  # the other thread is inside no_grad right now
    x = eo.ones(2, requires_grad=True)
    seen["records"] = (x * 2).requires_grad
    release.set()
    t.join()
    assert seen == {"main": True, "records": True, "other": False}


def test_decorated_function_is_thread_safe():
    @eo.no_grad()
    def work(results, i):
        results[i] = eo.is_grad_enabled()

    results = {}
    threads = [threading.Thread(target=work, args=(results, i)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(results.values()) == {False} and eo.is_grad_enabled()


def test_retain_grad_on_intermediate():
    x = eo.ones(3, requires_grad=True)
    h = x * 2
    h.retain_grad()
    (h * h).sum().backward()
    assert h.grad.tolist() == [4.0, 4.0, 4.0]
    assert x.grad.tolist() == [8.0, 8.0, 8.0]
    with pytest.raises(eo.EveryOAutogradError):
        eo.ones(2).retain_grad()


def test_grads_are_fresh_arrays():
    a = eo.ones(3, requires_grad=True)
    b = eo.ones(3, requires_grad=True)
    (a + b).sum().backward()
    assert a.grad.data is not b.grad.data
    a.grad.data *= 10  # an optimizer updating one gradient in place must not touch the other
    assert b.grad.tolist() == [1.0, 1.0, 1.0]
    g = eo.ones(3)
    c = eo.ones(3, requires_grad=True)
    c.backward(g)
    c.grad.data[0] = 5.0
    assert g.tolist() == [1.0, 1.0, 1.0]


def test_integer_and_detached_inputs_get_no_gradient():
    x = eo.ones(2, requires_grad=True)
    y = (x * eo.tensor([1, 2]) + x.detach()).sum()
    y.backward()
    assert x.grad.tolist() == [1.0, 2.0]


def test_requires_grad_toggle():
    x = eo.ones(2)
    x.requires_grad_()
    assert x.requires_grad
    y = x * 2
    with pytest.raises(eo.EveryOAutogradError):
        y.requires_grad_(False)
