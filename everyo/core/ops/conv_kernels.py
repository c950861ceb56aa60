"""Array kernels of 2-D convolution (NCHW), written once for NumPy and CuPy (``xp``).

Layout: the im2col matrix is per sample, ``(N, C*kh*kw, Ho*Wo)``, copied from one strided view
of the padded input. The forward is then one batched matrix product ``W (O, C*kh*kw) @ cols``
whose result already is ``(N, O, Ho*Wo)``, i.e. NCHW: no transpose, no copy of the output. Each
sample's product is small enough that OpenBLAS keeps it on one thread at small shapes (a
multi-threaded product waits for a second core that a busy machine may not give it).

Backward: the weight gradient is one batched product summed over the batch; the input gradient
is ``W^T @ g`` scattered back over the kernel window (col2im) by ``kh*kw`` additions of whole
views. With stride 1 the additions run on rows of the padded width (``g`` widened by zeros), so
each one is a contiguous slice instead of ``N*C*Ho`` short rows. Groups split ``C`` and ``O``
into ``groups`` blocks and batch over them.
"""

from __future__ import annotations

from everyo.core.ops import scratch

__all__ = ["pad", "windows", "region", "conv_forward", "grad_weight", "grad_input"]


def pad(xp, a, ph: int, pw: int, value=0):
    """``a`` (NCHW) with ``ph`` rows and ``pw`` columns of ``value`` on each side."""
    if ph == 0 and pw == 0:
        return a
    n, c, h, w = a.shape
    out = scratch.empty(xp, (n, c, h + 2 * ph, w + 2 * pw), a.dtype)
    out.fill(value)  # one fill and one copy: cheaper than xp.pad's per-side writes
    out[:, :, ph : ph + h, pw : pw + w] = a
    return out


def windows(xp, ap, kh, kw, ho, wo, stride, dil):
    """View ``(N, C, kh, kw, Ho, Wo)`` of the padded input: element ``[.., i, j, h, w]`` is
    ``ap[.., h*sh + i*dh, w*sw + j*dw]``."""
    sn, sc, sh_, sw_ = ap.strides
    shape = ap.shape[:2] + (kh, kw, ho, wo)
    strides = (sn, sc, sh_ * dil[0], sw_ * dil[1], sh_ * stride[0], sw_ * stride[1])
    return xp.lib.stride_tricks.as_strided(ap, shape=shape, strides=strides)


def region(i, j, ho, wo, stride, dil):
    """The slice of the padded input that window offset ``(i, j)`` touches."""
    h0, w0 = i * dil[0], j * dil[1]
    return (
        slice(None),
        slice(None),
        slice(h0, h0 + stride[0] * (ho - 1) + 1, stride[0]),
        slice(w0, w0 + stride[1] * (wo - 1) + 1, stride[1]),
    )


def _grouped_weight(w, groups):
    """``(O, C/g, kh, kw)`` as ``(g, O/g, C/g*kh*kw)``."""
    o = w.shape[0]
    return w.reshape(groups, o // groups, -1)


def conv_forward(xp, ap, w, bias, ho, wo, stride, dil, groups):
    """``(out (N, O, Ho, Wo), cols)`` for the padded input ``ap``; ``cols`` is kept for the
    weight gradient."""
    n, c = ap.shape[:2]
    o, _, kh, kw = w.shape
    cols = scratch.empty(xp, (n, c, kh, kw, ho, wo), ap.dtype)
    xp.copyto(cols, windows(xp, ap, kh, kw, ho, wo, stride, dil))
    cols = cols.reshape(n, groups, c // groups * kh * kw, ho * wo)
    dtype = xp.result_type(w.dtype, ap.dtype)
    out = scratch.empty(xp, (n, groups, o // groups, ho * wo), dtype)
    xp.matmul(_grouped_weight(w, groups), cols, out=out)
    out = out.reshape(n, o, ho, wo)
    if bias is not None:
        out += bias.reshape(o, 1, 1)
    return out, cols


def grad_weight(xp, g4, cols, w_shape):
    """``sum_n g_n @ cols_n^T`` for ``g4`` ``(N, groups, O/g, Ho*Wo)``, as ``w_shape``."""
    return xp.matmul(g4, cols.swapaxes(-1, -2)).sum(axis=0).reshape(w_shape)


def grad_input(xp, g4, w, padded_shape, ho, wo, stride, dil):
    """The gradient of the padded input, ``(N, C, Hp, Wp)``, for ``g4`` as in
    :func:`grad_weight`."""
    n, c, hp, wp = padded_shape
    kh, kw = w.shape[2:]
    groups, og = g4.shape[1:3]
    wt = _grouped_weight(w, groups).swapaxes(-1, -2)  # (g, C/g*kh*kw, O/g)
    if stride == (1, 1):
        # output rows widened to Wp by zero columns: output position t = h*Wp + w then reads
        # the flat padded plane at t + offset, so each kernel offset adds one contiguous run
        gw = scratch.zeros(xp, (n, groups, og, ho, wp), g4.dtype)
        gw[..., :wo] = g4.reshape(n, groups, og, ho, wo)
        size = ho * wp
        gcols = scratch.empty(xp, (n, groups, wt.shape[1], size), g4.dtype)
        xp.matmul(wt, gw.reshape(n, groups, og, size), out=gcols)
        gcols = gcols.reshape(n, c, kh, kw, size)
        flat = scratch.zeros(xp, (n, c, hp * wp + (kw - 1) * dil[1]), g4.dtype)
        for i in range(kh):
            for j in range(kw):
                off = i * dil[0] * wp + j * dil[1]
                flat[:, :, off : off + size] += gcols[:, :, i, j]
        return flat[:, :, : hp * wp].reshape(n, c, hp, wp)
    gcols = xp.matmul(wt, g4).reshape(n, c, kh, kw, ho, wo)
    gxp = scratch.zeros(xp, padded_shape, g4.dtype)
    for i in range(kh):
        for j in range(kw):
            gxp[region(i, j, ho, wo, stride, dil)] += gcols[:, :, i, j]
    return gxp
