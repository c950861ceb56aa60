"""2-D convolution and max/average pooling, NCHW: the ops (checks, graph nodes, gradients).

Weights use PyTorch's layout ``(out_channels, in_channels / groups, kh, kw)``. The array work
is in :mod:`everyo.core.ops.conv_kernels` (im2col from one strided view, batched matrix
products); pools run over strided views of the window offsets, no copy of the windows. Large
arrays come from :mod:`everyo.core.ops.scratch`, reused between steps.
"""

from __future__ import annotations

import numbers

from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.ops import conv_kernels as kernels
from everyo.core.ops import scratch
from everyo.core.ops._dispatch import dispatch
from everyo.core.ops._util import as_t, weighted_inputs
from everyo.errors import EveryOShapeError
from everyo.profiler.recording.flops import CONV, REDUCTION, declare

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


def _conv_geometry(a, w, stride, padding, dilation, groups):
    """``(Ho, Wo)``, after checking the shapes against each other."""
    if a.ndim != 4 or w.ndim != 4:
        raise EveryOShapeError(f"conv2d needs NCHW input and (out, in/groups, kh, kw) weight, "
                               f"got {a.shape} and {w.shape}")  # fmt: skip
    if groups < 1 or a.shape[1] % groups or w.shape[0] % groups:
        raise EveryOShapeError(
            f"conv2d: groups={groups} must be >= 1 and divide both the input channels "
            f"({a.shape[1]}) and the output channels ({w.shape[0]})"
        )
    if a.shape[1] != w.shape[1] * groups:
        raise EveryOShapeError(
            f"conv2d: input has {a.shape[1]} channels (shape {a.shape}) but the weight "
            f"{w.shape} with groups={groups} expects {w.shape[1] * groups}"
        )
    for name, v in (("stride", stride), ("dilation", dilation)):
        if min(v) < 1:
            raise EveryOShapeError(f"conv2d: {name} must be >= 1, got {v}")
    if min(padding) < 0:
        raise EveryOShapeError(f"conv2d: padding must be >= 0, got {padding}")
    kh, kw = w.shape[2:]
    ho = _out_size(a.shape[2], kh, stride[0], padding[0], dilation[0], CONV2D)
    wo = _out_size(a.shape[3], kw, stride[1], padding[1], dilation[1], CONV2D)
    return ho, wo


def _conv2d(x, weight, bias, stride, padding, dilation, groups):
    parents, dev = weighted_inputs(x, weight, bias)
    a, w = parents[0].data, parents[1].data
    ho, wo = _conv_geometry(a, w, stride, padding, dilation, groups)
    xp = namespace_of(a)
    ap = kernels.pad(xp, a, *padding)
    b = None if bias is None else parents[2].data
    out, cols = kernels.conv_forward(xp, ap, w, b, ho, wo, stride, dilation, groups)
    xt, wt = parents[0], parents[1]
    n, o = out.shape[:2]
    (ph, pw), (h, wd), padded = padding, a.shape[2:], ap.shape
    del ap  # not kept by the graph: only its shape is

    def backward(g):
        # contiguous, BLAS-ready (also when g is a zero-stride broadcast)
        g4 = xp.ascontiguousarray(g).reshape(n, groups, o // groups, ho * wo)
        gx = gw = gb = None
        if wt.requires_grad:
            gw = kernels.grad_weight(xp, g4, cols, w.shape)
        if b is not None and parents[2].requires_grad:
            gb = g4.sum(axis=(0, 3)).reshape(o)
        if xt.requires_grad:
            gxp = kernels.grad_input(xp, g4, w, padded, ho, wo, stride, dilation)
            gx = gxp[:, :, ph : ph + h, pw : pw + wd]
        return (gx, gw) if b is None else (gx, gw, gb)

    return make_result(out, parents, backward, CONV2D, dev)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):  # noqa: A002
    """2-D convolution of an ``(N, C, H, W)`` input with an ``(O, C/groups, kh, kw)`` weight.

    ``stride``, ``padding`` (zeros) and ``dilation`` are ints or ``(h, w)`` pairs; ``groups``
    splits the channels into that many independent convolutions (``groups=C`` is depthwise).
    Under :func:`everyo.autocast` it computes in the autocast dtype.
    """
    return dispatch(CONV2D, _conv2d, input, weight, bias, _pair(stride, "stride"),
                    _pair(padding, "padding"), _pair(dilation, "dilation"),
                    _count(groups, "groups"))  # fmt: skip


def _count(v, name) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise EveryOShapeError(f"{name} must be an int, got {v!r}")
    return int(v)


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
    ap = kernels.pad(xp, a, p[0], p[1], value=-xp.inf)
    views = [ap[kernels.region(k // kw, k % kw, ho, wo, s, (1, 1))] for k in range(kh * kw)]
    best = scratch.empty(xp, views[0].shape, a.dtype)
    xp.copyto(best, views[0])
    for v in views[1:]:  # a running maximum over the window offsets: no (.., kh*kw) copy
        xp.maximum(best, v, out=best)
    disjoint = s[0] >= kh and s[1] >= kw
    shape = ap.shape
    tiled = s == (kh, kw) and shape[2:] == (ho * kh, wo * kw)  # every cell in one window

    def backward(g):
        # the first offset equal to its window's maximum wins; later equal ones are masked
        gxp = (scratch.empty if tiled else scratch.zeros)(xp, shape, g.dtype)
        free = None
        for k, v in enumerate(views):
            hit = v == best
            if free is None:
                free = ~hit
            else:
                hit &= free
                if k + 1 < len(views):
                    free ^= hit
            dst = gxp[kernels.region(k // kw, k % kw, ho, wo, s, (1, 1))]
            if disjoint:  # each input cell is in one window at most: write, do not add
                xp.multiply(g, hit, out=dst)
            else:
                dst += g * hit
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
    ap = kernels.pad(xp, a, p[0], p[1])
    regions = [kernels.region(k // kw, k % kw, ho, wo, s, (1, 1)) for k in range(kh * kw)]
    total = ap[regions[0]].copy()
    for r in regions[1:]:
        total += ap[r]
    if count_include_pad or p == (0, 0):
        scale = 1.0 / (kh * kw)
    else:  # divide by the number of real (unpadded) elements of each window
        ones = kernels.pad(xp, xp.ones((1, 1) + a.shape[2:], dtype=a.dtype), p[0], p[1])
        scale = 1.0 / sum(ones[r] for r in regions)
    out = total * scale
    disjoint = s[0] >= kh and s[1] >= kw

    def backward(g):
        gs = g * scale
        gxp = xp.zeros(ap.shape, dtype=gs.dtype)
        for r in regions:
            if disjoint:  # each input cell is in one window at most: write, do not add
                gxp[r] = gs
            else:
                gxp[r] += gs
        return (gxp[:, :, p[0] : p[0] + a.shape[2], p[1] : p[1] + a.shape[3]],)

    return make_result(out.astype(a.dtype, copy=False), (x,), backward, AVG_POOL2D, x._device)


def avg_pool2d(input, kernel_size, stride=None, padding=0, count_include_pad: bool = True):  # noqa: A002
    """Mean over ``kernel_size`` windows (``stride`` defaults to the kernel size); with
    ``count_include_pad=False`` padded zeros do not count in the divisor."""
    return dispatch(AVG_POOL2D, _avg_pool2d, input, kernel_size, stride, padding,
                    count_include_pad)  # fmt: skip
