"""``scaled_dot_product_attention``: ``softmax(q k^T * scale + mask) v`` as one node."""

from __future__ import annotations

import math

import numpy as np

from everyo.core import autocast as _autocast
from everyo.core.autograd import make_result
from everyo.core.backend import namespace_of
from everyo.core.ops._dispatch import dispatch
from everyo.core.ops._util import _keep_mask, as_t, check_same_device, dense, unbroadcast
from everyo.core.tensor import Tensor
from everyo.errors import EveryOShapeError
from everyo.profiler.recording.flops import ATTENTION, declare

__all__ = ["scaled_dot_product_attention"]

SCALED_DOT_PRODUCT_ATTENTION = declare("scaled_dot_product_attention", ATTENTION)


def _additive_mask(xp, mask, dtype):
    """A boolean mask (True = attend, as in PyTorch) or a float mask (added) as additive."""
    m = mask.data if isinstance(mask, Tensor) else xp.asarray(mask)
    if m.dtype == np.bool_:
        return xp.where(m, dtype.type(0), dtype.type(-np.inf))
    return m.astype(dtype, copy=False)


def _sdpa(q, k, v, attn_mask, dropout_p, is_causal, scale, seed):
    q, k, v = as_t(q), as_t(k), as_t(v)
    dev = check_same_device(q, k, v)
    if _autocast.active_dtype() is not None:
        q, k, v = _autocast.cast_inputs(q, k, v)
    qa, ka, va = q.data, k.data, v.data
    if qa.shape[-1] != ka.shape[-1] or ka.shape[-2] != va.shape[-2]:
        raise EveryOShapeError(
            f"attention: query {qa.shape}, key {ka.shape}, value {va.shape} do not fit (query "
            f"and key need the same last dim, key and value the same length)"
        )
    xp = namespace_of(qa)
    scale = 1.0 / math.sqrt(qa.shape[-1]) if scale is None else float(scale)
    kt = xp.swapaxes(ka, -1, -2)
    scores = qa @ kt
    if scores.dtype.itemsize < 4:  # float16 products, but the softmax in float32 (range)
        scores = scores.astype(np.float32)
    scores *= scale
    length, src = qa.shape[-2], ka.shape[-2]
    if is_causal:
        keep = xp.tril(xp.ones((length, src), dtype=bool))
        scores = xp.where(keep, scores, scores.dtype.type(-np.inf))
    if attn_mask is not None:
        scores = scores + _additive_mask(xp, attn_mask, scores.dtype)
    m = scores.max(axis=-1, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)  # a fully masked row gives zeros, not NaN
    e = xp.exp(scores - m)
    s = e.sum(axis=-1, keepdims=True)
    p = e / xp.where(s == 0, 1, s)
    if dropout_p > 0.0:
        drop = _keep_mask(xp, p.shape, dropout_p, p.dtype, seed, None)
        pd = p * drop
    else:
        drop, pd = None, p
    pd_v = pd.astype(va.dtype, copy=False)
    out = pd_v @ va

    def backward(g):
        g = dense(g)
        gv = unbroadcast(xp.swapaxes(pd_v, -1, -2) @ g, va.shape) if v.requires_grad else None
        gp = (g @ xp.swapaxes(va, -1, -2)).astype(p.dtype, copy=False)
        if drop is not None:
            gp = gp * drop
        gs = (p * (gp - (gp * p).sum(axis=-1, keepdims=True)) * scale).astype(qa.dtype, copy=False)
        gq = unbroadcast(gs @ ka, qa.shape) if q.requires_grad else None
        gk = unbroadcast(xp.swapaxes(gs, -1, -2) @ qa, ka.shape) if k.requires_grad else None
        return gq, gk, gv

    return make_result(out, (q, k, v), backward, SCALED_DOT_PRODUCT_ATTENTION, dev)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None, *,
                                 seed: int | None = None):  # fmt: skip
    """Attention over the last two dims: ``softmax(q @ k^T * scale + mask) @ v``.

    ``query`` is ``(..., L, E)``, ``key`` ``(..., S, E)``, ``value`` ``(..., S, Ev)``; leading dims
    broadcast. ``attn_mask`` is boolean (True = may attend, as in PyTorch) or additive float;
    ``is_causal`` masks future positions; ``scale`` defaults to ``1/sqrt(E)``. Rows with every
    position masked give zeros.
    """
    if attn_mask is not None and isinstance(attn_mask, Tensor):
        check_same_device(as_t(query), attn_mask)
    return dispatch(SCALED_DOT_PRODUCT_ATTENTION, _sdpa, query, key, value, attn_mask,
                    float(dropout_p), bool(is_causal), scale, seed)  # fmt: skip
