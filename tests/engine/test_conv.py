"""Convolution and pooling kernels: values and gradients against a direct reference, finite
differences and PyTorch (when installed), in float32 and float64, with strides, padding, dilation
and groups; the buffers they reuse between steps."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from gradcheck import gradcheck

import everyo as eo
from everyo.core.ops import scratch

RNG = np.random.default_rng(35)

# (stride, padding, dilation, groups) of the NCHW conv2d, in/out channels 4 and 6
CONFIGS = [
    (1, 0, 1, 1),
    (1, 1, 1, 2),
    (2, 1, 1, 1),
    (1, 2, 2, 1),
    ((2, 1), (0, 1), (1, 2), 2),
    (3, 2, 1, 2),
]


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def _pair(v):
    return (v, v) if isinstance(v, int) else v


def conv_reference(x, w, b, stride, pad, dil, groups):
    """Direct convolution: one window at a time, group by group (float64)."""
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(pad), _pair(dil)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    og = o // groups
    out = np.zeros((n, o, ho, wo))
    for gi in range(groups):
        xs = xp[:, gi * cg : (gi + 1) * cg]
        ws = w[gi * og : (gi + 1) * og].astype(np.float64)
        for i in range(ho):
            for j in range(wo):
                patch = xs[:, :, i * sh : i * sh + dh * (kh - 1) + 1 : dh,
                           j * sw : j * sw + dw * (kw - 1) + 1 : dw]  # fmt: skip
                out[:, gi * og : (gi + 1) * og, i, j] = np.einsum("nckl,ockl->no", patch, ws)
    return out if b is None else out + b.reshape(1, o, 1, 1)


@pytest.mark.parametrize("stride,padding,dilation,groups", CONFIGS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_conv2d_values_match_the_direct_reference(stride, padding, dilation, groups, dtype):
    x, w, b = rand(2, 4, 9, 8, dtype=dtype), rand(6, 4 // groups, 3, 2, dtype=dtype), rand(6)
    b = b.astype(dtype)
    out = eo.conv2d(eo.tensor(x), eo.tensor(w), eo.tensor(b), stride, padding, dilation, groups)
    assert out.dtype == dtype  # no float64 upcast of float32 data
    tol = 1e-10 if dtype == np.float64 else 1e-5
    ref = conv_reference(x, w, b, stride, padding, dilation, groups)
    np.testing.assert_allclose(out.numpy(), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("stride,padding,dilation,groups", CONFIGS)
def test_conv2d_gradients_match_finite_differences(stride, padding, dilation, groups, device_name):
    x, w, b = rand(2, 4, 7, 6), rand(6, 4 // groups, 3, 2), rand(6)
    fn = lambda a, k, c: eo.conv2d(a, k, c, stride, padding, dilation, groups)  # noqa: E731
    assert gradcheck(fn, x, w, b, device=device_name)


def test_depthwise_conv_gradients(device_name):
    x, w = rand(2, 3, 6, 6), rand(3, 1, 3, 3)
    assert gradcheck(lambda a, k: eo.conv2d(a, k, None, 1, 1, 1, 3), x, w, device=device_name)


def test_float32_gradients_stay_float32_and_match_float64():
    x, w, b = rand(2, 4, 8, 8), rand(6, 2, 3, 3), rand(6)
    grads = {}
    for dtype in (np.float32, np.float64):
        ts = [eo.tensor(a.astype(dtype), requires_grad=True) for a in (x, w, b)]
        out = eo.conv2d(*ts, 1, 1, 1, 2)
        (out * out).sum().backward()
        grads[dtype] = [t.grad.numpy() for t in ts]
        assert all(g.dtype == dtype for g in grads[dtype])
    for g32, g64 in zip(grads[np.float32], grads[np.float64]):
        np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-3)


def test_conv2d_rejects_bad_groups_and_geometry():
    x = eo.tensor(rand(1, 4, 5, 5))
    with pytest.raises(eo.EveryOShapeError, match="groups"):
        eo.conv2d(x, eo.tensor(rand(6, 2, 3, 3)), groups=3)
    with pytest.raises(eo.EveryOShapeError, match="expects"):
        eo.conv2d(x, eo.tensor(rand(6, 4, 3, 3)), groups=2)
    with pytest.raises(eo.EveryOShapeError, match="groups must be an int"):
        eo.conv2d(x, eo.tensor(rand(6, 2, 3, 3)), groups=2.0)
    with pytest.raises(eo.EveryOShapeError, match="stride"):
        eo.conv2d(x, eo.tensor(rand(6, 4, 3, 3)), stride=0)
    with pytest.raises(eo.EveryOShapeError, match="padding"):
        eo.conv2d(x, eo.tensor(rand(6, 4, 3, 3)), padding=-1)
    with pytest.raises(eo.EveryOShapeError, match="groups"):
        eo.Conv2d(4, 6, 3, groups=4)


def test_conv2d_layer_takes_groups():
    conv = eo.Conv2d(4, 6, 3, padding=1, groups=2, seed=0)
    assert conv.weight.shape == (6, 2, 3, 3) and "groups=2" in repr(conv)
    x = rand(2, 4, 5, 5)
    ref = conv_reference(x, conv.weight.numpy(), conv.bias.numpy(), 1, 1, 1, 2)
    np.testing.assert_allclose(conv(eo.tensor(x)).numpy(), ref, rtol=1e-5, atol=1e-5)


def test_a_graph_keeps_its_buffers_while_later_steps_run():
    """Buffers are reused between steps: a second forward must not overwrite what the first
    one's backward needs, and a retained graph gives the same gradients twice."""
    conv = eo.Conv2d(3, 4, 3, padding=1, seed=0)
    xs = [eo.tensor(rand(8, 3, 16, 16).astype(np.float32), requires_grad=True) for _ in range(2)]
    first = eo.max_pool2d(conv(xs[0]), 2).sum()
    eo.max_pool2d(conv(xs[1]), 2).sum().backward()  # same shapes: would take the same buffers
    first.backward(retain_graph=True)
    g1 = xs[0].grad.numpy().copy()
    xs[0].grad = None
    first.backward()
    np.testing.assert_array_equal(xs[0].grad.numpy(), g1)
    ref = eo.tensor(xs[0].numpy(), requires_grad=True)
    eo.max_pool2d(conv(ref), 2).sum().backward()
    np.testing.assert_allclose(g1, ref.grad.numpy(), rtol=1e-6)


def test_scratch_reuses_a_buffer_only_once_nothing_else_refers_to_it():
    shape = (scratch.MIN_BYTES // 8 + 1,)
    a = scratch.empty(np, shape, np.float64)
    view = a[1:]
    del a
    b = scratch.empty(np, shape, np.float64)
    assert not np.shares_memory(b, view)  # the view keeps the first buffer in use
    base = view.base
    del view, base
    c = scratch.zeros(np, shape, np.float64)
    assert not np.shares_memory(c, b) and not c.any()
    address = c.__array_interface__["data"][0]
    del c
    d = scratch.empty(np, shape, np.float64)
    assert d.__array_interface__["data"][0] == address  # free again: reused
    other = []
    t = threading.Thread(target=lambda: other.append(scratch.empty(np, shape, np.float64)))
    t.start()
    t.join()
    assert not np.shares_memory(other[0], d)  # another thread has its own pool
    scratch.clear()
    assert d.shape == shape  # arrays still in use stay valid


def test_a_full_pool_drops_free_buffers_of_the_least_recently_used_shapes(monkeypatch):
    scratch.clear()
    size = scratch.MIN_BYTES // 8
    monkeypatch.setattr(scratch, "MAX_BYTES", 2 * size * 8 + 64)

    def pooled():
        return {k[0][0] - size: len(v) for k, v in scratch._pool.buffers.items()}

    held = scratch.empty(np, (size,), np.float64)  # in use: never dropped
    scratch.empty(np, (size + 1,), np.float64)  # free as soon as made
    assert pooled() == {0: 1, 1: 1}
    scratch.empty(np, (size,), np.float64)  # the held shape again: the other shape makes room
    assert pooled() == {0: 2}
    scratch.empty(np, (size + 2,), np.float64)  # the free one of the held shape makes room
    assert pooled() == {0: 1, 2: 1}
    assert scratch._pool.buffers[((size,), np.dtype(np.float64))][0] is held
    assert scratch._pool.nbytes == 8 * (2 * size + 2)
    scratch.clear()


def test_small_arrays_are_not_pooled():
    a = scratch.empty(np, (4,), np.float32)
    del a
    assert all(k[0] != (4,) for k in scratch._pool.buffers)


@pytest.mark.parametrize("kernel,stride,padding", [(2, None, 0), (2, 2, 1), (3, 2, 1), (2, 3, 0)])
def test_max_pool_tied_windows_send_the_gradient_to_the_first_maximum(kernel, stride, padding):
    # ReLU outputs: many windows are all zeros, so every cell of them ties
    x = np.maximum(rand(2, 3, 7, 6), 0.5) - 0.5
    t = eo.tensor(x, requires_grad=True)
    eo.max_pool2d(t, kernel, stride, padding).sum().backward()
    k, s = kernel, stride or kernel
    want = np.zeros_like(x)
    xp = np.pad(
        x, ((0, 0), (0, 0), (padding, padding), (padding, padding)), constant_values=-np.inf
    )
    ho = (7 + 2 * padding - k) // s + 1
    wo = (6 + 2 * padding - k) // s + 1
    for i in range(ho):
        for j in range(wo):
            win = xp[:, :, i * s : i * s + k, j * s : j * s + k].reshape(2, 3, -1)
            first = win.argmax(axis=2)  # numpy's argmax: the first maximum
            for n in range(2):
                for c in range(3):
                    r, q = divmod(int(first[n, c]), k)
                    want[n, c, i * s + r - padding, j * s + q - padding] += 1
    np.testing.assert_array_equal(t.grad.numpy(), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_and_pools_match_torch(dtype):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-9)
    for stride, padding, dilation, groups in CONFIGS:
        x, w, b = rand(3, 4, 9, 8, dtype=dtype), rand(6, 4 // groups, 3, 2, dtype=dtype), rand(6)
        b = b.astype(dtype)
        ours = [eo.tensor(a, requires_grad=True) for a in (x, w, b)]
        theirs = [torch.from_numpy(a).requires_grad_() for a in (x, w, b)]
        out = eo.conv2d(*ours, stride, padding, dilation, groups)
        ref = F.conv2d(*theirs, stride=stride, padding=padding, dilation=dilation, groups=groups)
        np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), **tol)
        g = rand(*out.shape, dtype=dtype)
        out.backward(eo.tensor(g))
        ref.backward(torch.from_numpy(g))
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), **tol)
    x = np.maximum(rand(2, 3, 9, 8, dtype=dtype), 0)  # ties in the zero windows
    for k, s, p in [(2, 2, 0), (3, 2, 1), (2, 1, 1)]:
        for ours_fn, theirs_fn in [(eo.max_pool2d, F.max_pool2d), (eo.avg_pool2d, F.avg_pool2d)]:
            a, t = eo.tensor(x, requires_grad=True), torch.from_numpy(x).requires_grad_()
            out, ref = ours_fn(a, k, s, p), theirs_fn(t, k, s, p)
            np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), **tol)
            g = rand(*out.shape, dtype=dtype)
            out.backward(eo.tensor(g))
            ref.backward(torch.from_numpy(g))
            np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), **tol)


def test_nhwc_conv2d_matches_torch():
    torch = pytest.importorskip("torch")
    conv = eo.Conv2D(4, 6, 3, stride=2, padding=1, seed=0)
    x = rand(2, 9, 8, 4, dtype=np.float32)
    a = eo.tensor(x, requires_grad=True)
    out = conv(a)
    t = torch.from_numpy(x.transpose(0, 3, 1, 2).copy()).requires_grad_()
    tw = torch.from_numpy(conv.weight.numpy().transpose(3, 2, 0, 1).copy()).requires_grad_()
    ref = torch.nn.functional.conv2d(t, tw, torch.from_numpy(conv.bias.numpy()), 2, 1)
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy().transpose(0, 2, 3, 1), atol=1e-5)
    g = rand(*out.shape, dtype=np.float32)
    out.backward(eo.tensor(g))
    ref.backward(torch.from_numpy(g.transpose(0, 3, 1, 2).copy()))
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy().transpose(0, 2, 3, 1), atol=1e-5)
    np.testing.assert_allclose(
        conv.weight.grad.numpy(), tw.grad.numpy().transpose(2, 3, 1, 0), rtol=1e-4, atol=1e-4
    )


class _OtherNamespace:
    """NumPy under another name: the kernels' path for any array module but NumPy (CuPy's),
    where nothing is pooled."""

    def __getattr__(self, name):
        return getattr(np, name)


def test_kernels_run_on_an_array_namespace_other_than_numpy():
    from everyo.core.ops import conv_kernels as kernels

    xp = _OtherNamespace()
    x, w, b = rand(2, 4, 7, 6), rand(6, 2, 3, 3), rand(6)
    scratch.clear()
    for stride in ((1, 1), (2, 1)):
        ap = kernels.pad(xp, x, 1, 1)
        ho, wo = (7 - 1) // stride[0] + 1, (6 - 1) // stride[1] + 1
        out, cols = kernels.conv_forward(xp, ap, w, b, ho, wo, stride, (1, 1), 2)
        np.testing.assert_allclose(out, conv_reference(x, w, b, stride, 1, 1, 2), rtol=1e-10)
        g4 = rand(2, 2, 3, ho * wo)
        gw = kernels.grad_weight(xp, g4, cols, w.shape)
        gx = kernels.grad_input(xp, g4, w, ap.shape, ho, wo, stride, (1, 1))
        ts = [eo.tensor(a, requires_grad=True) for a in (x, w, b)]
        eo.conv2d(*ts, stride, 1, 1, 2).backward(eo.tensor(g4.reshape(out.shape)))
        np.testing.assert_allclose(gx[:, :, 1:-1, 1:-1], ts[0].grad.numpy(), rtol=1e-10)
        np.testing.assert_allclose(gw, ts[1].grad.numpy(), rtol=1e-10)
    assert not scratch._pool.buffers  # nothing pooled: CuPy has its own memory pool
