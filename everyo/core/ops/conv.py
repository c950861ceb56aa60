"""2-D convolution (im2col + one large matrix product) and max/average pooling, NCHW.

Weights use PyTorch's layout ``(out_channels, in_channels, kh, kw)``. The window views are built
with ``as_strided`` (no copy) and the only large copy is the im2col matrix the product needs.
"""

from __future__ import annotations

from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.ops._dispatch import dispatch
from everyo.core.ops._util import as_t, weighted_inputs
from everyo.errors import EveryOShapeError
from everyo.profiler.flops import CONV, REDUCTION, declare

__all__ = ["conv2d", "max_pool2d", "avg_pool2d"]

AVG_POOL2D = declare("avg_pool2d", REDUCTION)
CONV2D = declare("conv2d", CONV)
MAX_POOL2D = declare("max_pool2d", REDUCTION)


def _pair(v, name) -> tuple[int, int]:
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise EveryOShapeError(f"{name} must be an int or a pair, got {v!r}")
        return int(v[0]), int(v[1])
    return int(v), int(v)


def _out_size(size, k, s, p, d, op) -> int:
    n = (size + 2 * p - d * (k - 1) - 1) // s + 1
    if n <= 0:
        raise EveryOShapeError(
            f"{op}: input size {size} (padding {p}) is smaller than the kernel extent "
            f"{d * (k - 1) + 1}"
        )
    return n


def _pad(xp, a, ph, pw, value=0):
    if ph == 0 and pw == 0:
        return a
    return xp.pad(a, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=value)


def _windows(xp, ap, kh, kw, ho, wo, stride, dil):
    """View ``(N, C, kh, kw, Ho, Wo)`` of the padded input: element ``[.., i, j, h, w]`` is
    ``ap[.., h*sh + i*dh, w*sw + j*dw]``."""
    sn, sc, sh_, sw_ = ap.strides
    shape = ap.shape[:2] + (kh, kw, ho, wo)
    strides = (sn, sc, sh_ * dil[0], sw_ * dil[1], sh_ * stride[0], sw_ * stride[1])
    return xp.lib.stride_tricks.as_strided(ap, shape=shape, strides=strides)


def _region(i, j, ho, wo, stride, dil):
    """The slice of the padded input that window offset ``(i, j)`` touches."""
    h0, w0 = i * dil[0], j * dil[1]
    return (
        slice(None),
        slice(None),
        slice(h0, h0 + stride[0] * (ho - 1) + 1, stride[0]),
        slice(w0, w0 + stride[1] * (wo - 1) + 1, stride[1]),
    )


def _conv2d(x, weight, bias, stride, padding, dilation):
    parents, dev = weighted_inputs(x, weight, bias)
    a, w = parents[0].data, parents[1].data
    if a.ndim != 4 or w.ndim != 4:
        raise EveryOShapeError(f"conv2d needs NCHW input and (out, in, kh, kw) weight, got "
                               f"{a.shape} and {w.shape}")  # fmt: skip
    if a.shape[1] != w.shape[1]:
        raise EveryOShapeError(
            f"conv2d: input has {a.shape[1]} channels (shape {a.shape}) but the weight "
            f"{w.shape} expects {w.shape[1]}"
        )
    xp = namespace_of(a)
    n, c, h, wd = a.shape
    o, _, kh, kw = w.shape
    ho = _out_size(h, kh, stride[0], padding[0], dilation[0], CONV2D)
    wo = _out_size(wd, kw, stride[1], padding[1], dilation[1], CONV2D)
    ap = _pad(xp, a, *padding)
    # im2col as (C*kh*kw, N*Ho*Wo): one large matrix product (NumPy's batched matmul with a
    # broadcast operand skips BLAS and is ~25x slower)
    win = _windows(xp, ap, kh, kw, ho, wo, stride, dilation)  # (N, C, kh, kw, Ho, Wo) view
    cols = win.transpose(1, 2, 3, 0, 4, 5).reshape(c * kh * kw, n * ho * wo)
    w2 = w.reshape(o, -1)
    out2 = w2 @ cols  # (O, N*Ho*Wo)
    if bias is not None:
        out2 += parents[2].data.reshape(o, 1)
    out = xp.ascontiguousarray(out2.reshape(o, n, ho, wo).transpose(1, 0, 2, 3))
    xt, wt = parents[0], parents[1]

    def backward(g):
        # channel-major and contiguous, BLAS-ready (also when g is a zero-stride broadcast)
        g2 = xp.ascontiguousarray(g.transpose(1, 0, 2, 3)).reshape(o, n * ho * wo)
        gx = gw = gb = None
        if wt.requires_grad:
            gw = (g2 @ cols.T).reshape(w.shape)
        if bias is not None and parents[2].requires_grad:
            gb = g2.sum(axis=1)
        if xt.requires_grad:
            gcols = (w2.T @ g2).reshape(c, kh, kw, n, ho, wo)
            gxp = xp.zeros((c, n) + ap.shape[2:], dtype=gcols.dtype)  # channel-major, as gcols
            for i in range(kh):
                for j in range(kw):
                    gxp[_region(i, j, ho, wo, stride, dilation)] += gcols[:, i, j]
            ph, pw = padding
            gx = gxp[:, :, ph : ph + h, pw : pw + wd].transpose(1, 0, 2, 3)
        return (gx, gw) if bias is None else (gx, gw, gb)

    return make_result(out, parents, backward, CONV2D, dev)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1):  # noqa: A002
    """2-D convolution of an ``(N, C, H, W)`` input with an ``(O, C, kh, kw)`` weight.

    ``stride``, ``padding`` (zeros) and ``dilation`` are ints or ``(h, w)`` pairs. Under
    :func:`everyo.autocast` it computes in the autocast dtype.
    """
    return dispatch(CONV2D, _conv2d, input, weight, bias, _pair(stride, "stride"),
                    _pair(padding, "padding"), _pair(dilation, "dilation"))  # fmt: skip


def _pool_geometry(a, kernel_size, stride, padding, op):
    if a.ndim != 4:
        raise EveryOShapeError(f"{op} needs an NCHW input, got shape {a.shape}")
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None else _pair(stride, "stride")
    p = _pair(padding, "padding")
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise EveryOShapeError(f"{op}: padding {p} must be at most half the kernel {k}")
    ho = _out_size(a.shape[2], k[0], s[0], p[0], 1, op)
    wo = _out_size(a.shape[3], k[1], s[1], p[1], 1, op)
    return k, s, p, ho, wo


def _max_pool2d(x, kernel_size, stride, padding):
    x = as_t(x)
    a = x.data
    xp = namespace_of(a)
    (kh, kw), s, p, ho, wo = _pool_geometry(a, kernel_size, stride, padding, MAX_POOL2D)
    ap = _pad(xp, a, p[0], p[1], value=-xp.inf)
    # a running max over the kh*kw window offsets: no (.., kh*kw) copy, first maximum wins
    best = ap[_region(0, 0, ho, wo, s, (1, 1))].copy()
    arg = xp.zeros(best.shape, dtype=xp.int8 if kh * kw < 128 else xp.int32)
    for k in range(1, kh * kw):
        cand = ap[_region(k // kw, k % kw, ho, wo, s, (1, 1))]
        upd = cand > best
        xp.copyto(best, cand, where=upd)
        xp.copyto(arg, k, where=upd)

    def backward(g):
        gxp = xp.zeros(ap.shape, dtype=g.dtype)
        for k in range(kh * kw):
            gxp[_region(k // kw, k % kw, ho, wo, s, (1, 1))] += g * (arg == k)
        return (gxp[:, :, p[0] : p[0] + a.shape[2], p[1] : p[1] + a.shape[3]],)

    return make_result(best, (x,), backward, MAX_POOL2D, x._device)


def max_pool2d(input, kernel_size, stride=None, padding=0):  # noqa: A002
    """Maximum over ``kernel_size`` windows (``stride`` defaults to the kernel size; padding
    counts as ``-inf``). The gradient goes to the first maximum of each window."""
    return dispatch(MAX_POOL2D, _max_pool2d, input, kernel_size, stride, padding)


def _avg_pool2d(x, kernel_size, stride, padding, count_include_pad):
    x = as_t(x)
    a = x.data
    xp = namespace_of(a)
    (kh, kw), s, p, ho, wo = _pool_geometry(a, kernel_size, stride, padding, AVG_POOL2D)
    ap = _pad(xp, a, p[0], p[1])
    total = xp.zeros(a.shape[:2] + (ho, wo), dtype=a.dtype)
    for k in range(kh * kw):
        total += ap[_region(k // kw, k % kw, ho, wo, s, (1, 1))]
    if count_include_pad or p == (0, 0):
        scale = 1.0 / (kh * kw)
    else:  # divide by the number of real (unpadded) elements of each window
        ones = _pad(xp, xp.ones((1, 1) + a.shape[2:], dtype=a.dtype), p[0], p[1])
        counts = sum(ones[_region(k // kw, k % kw, ho, wo, s, (1, 1))] for k in range(kh * kw))
        scale = 1.0 / counts
    out = total * scale

    def backward(g):
        gs = g * scale
        gxp = xp.zeros(ap.shape, dtype=g.dtype)
        for k in range(kh * kw):
            gxp[_region(k // kw, k % kw, ho, wo, s, (1, 1))] += gs
        return (gxp[:, :, p[0] : p[0] + a.shape[2], p[1] : p[1] + a.shape[3]],)

    return make_result(out.astype(a.dtype, copy=False), (x,), backward, AVG_POOL2D, x._device)


def avg_pool2d(input, kernel_size, stride=None, padding=0, count_include_pad: bool = True):  # noqa: A002
    """Mean over ``kernel_size`` windows (``stride`` defaults to the kernel size); with
    ``count_include_pad=False`` padded zeros do not count in the divisor."""
    return dispatch(AVG_POOL2D, _avg_pool2d, input, kernel_size, stride, padding,
                    count_include_pad)  # fmt: skip
