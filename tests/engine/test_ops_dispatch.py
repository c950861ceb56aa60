"""Every op goes through the single dispatch point, under the names the profiler keys on, and
autograd reports nodes and backward calls through the hook protocol."""

from __future__ import annotations

import contextlib

import pytest

import everyo as eo
import everyo.nn.functional as F
from everyo.profiler.recording import hooks


class FakeProfiler:
    record_ops = True

    def __init__(self):
        self.ops, self.nodes, self.backwards = [], [], 0

    def op_call(self, name, fn, args, kwargs):
        self.ops.append(name)
        return fn(*args, **kwargs)

    def scope(self):
        return "model.layer"

    def backward_call(self, run, *args):
        self.backwards += 1
        return run(*args)

    def backward_node(self, scope, name, fn):
        self.nodes.append((scope, name))
        return fn()


@contextlib.contextmanager
def profiling():
    prof = FakeProfiler()
    hooks.set_active(prof)
    try:
        yield prof
    finally:
        hooks.set_active(None)


def test_ops_reach_the_profiler_under_their_names():
    x = eo.randn(2, 3, 4, 4, seed=0, requires_grad=True)
    w = eo.randn(5, 3, 3, 3, seed=1, requires_grad=True)
    lw = eo.randn(2, 5 * 4 * 4, seed=2, requires_grad=True)
    with profiling() as prof:
        h = F.relu(F.conv2d(x, w, padding=1))
        logits = F.linear(h.flatten(1), lw)
        loss = F.cross_entropy(F.softmax(logits, dim=-1) @ eo.ones(2, 2), eo.tensor([0, 1]))
        loss.backward()
    for name in ("conv2d", "relu", "reshape", "linear", "softmax", "matmul", "cross_entropy"):
        assert name in prof.ops
    assert prof.backwards == 1
    names = [n for _, n in prof.nodes]
    assert {"conv2d", "linear", "cross_entropy", "softmax", "matmul"} <= set(names)
    assert all(scope == "model.layer" for scope, _ in prof.nodes)


def test_node_names_match_ops():
    x = eo.ones(2, 2, requires_grad=True)
    assert eo.scaled_dot_product_attention(x, x, x)._node.name == "scaled_dot_product_attention"
    assert F.layer_norm(x, 2)._node.name == "layer_norm"
    assert (x @ x)._node.name == "matmul"


@pytest.mark.parametrize("name", ["silu", "leaky_relu", "softplus"])
def test_functional_extras(name):
    import numpy as np
    from gradcheck import gradcheck

    x = np.array([[-2.0, -0.3, 0.4], [1.5, 3.0, -25.0]])
    assert gradcheck(getattr(F, name), x)
    assert F.relu(eo.tensor([-1.0, 2.0]), inplace=True).tolist() == [0.0, 2.0]
    assert F.cat([eo.ones(1), eo.zeros(2)]).tolist() == [1.0, 0.0, 0.0]


def test_nodes_sharing_an_implementation_keep_their_op_names():
    x = eo.ones(2, 3, requires_grad=True)
    assert eo.permute(x, 1, 0)._node.name == "permute"
    assert eo.transpose(x, 0, 1)._node.name == "transpose"
    v = eo.ones(3, requires_grad=True)
    assert eo.dot(v, v)._node.name == "dot"
