"""``MultiheadAttention`` and ``TransformerEncoderLayer`` (PyTorch's parameter layout)."""

from __future__ import annotations

import math

import numpy as np

from everyo.core.tensor import Tensor, as_tensor
from everyo.errors import EveryOShapeError
from everyo.nn import functional as F
from everyo.nn import init
from everyo.nn.activation import GELU, ReLU
from everyo.nn.dropout import Dropout
from everyo.nn.linear import Linear, child_seeds, empty_param
from everyo.nn.module import Module
from everyo.nn.norm import LayerNorm

__all__ = ["MultiheadAttention", "TransformerEncoderLayer"]


def _additive(mask, xp):
    """A mask as an array: booleans (True = may NOT attend) become ``-inf``/``0`` floats."""
    arr = mask.data if isinstance(mask, Tensor) else xp.asarray(mask)
    if arr.dtype == bool:
        arr = xp.where(arr, -np.inf, 0.0).astype(np.float32)
    return arr


def _blocked(mask, xp, n_batch: int, heads: int, length: int, source: int):
    """PyTorch's MHA masks (True = may NOT attend, or additive floats) merged into one additive
    float array of shape broadcastable to ``(N, H, L, S)``; None when there is no mask."""
    if mask is None:
        return None
    arr = _additive(mask, xp)
    if arr.ndim == 2:  # (L, S)
        return arr[None, None]
    if arr.ndim == 3:  # (N * H, L, S)
        return arr.reshape(n_batch, heads, length, source)
    raise EveryOShapeError(f"attn_mask must be 2-D (L, S) or 3-D (N*H, L, S), got {arr.shape}")


class MultiheadAttention(Module):
    """Multi-head attention with ``in_proj_weight`` ``(3E, E)`` and ``out_proj`` as in PyTorch.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(output, weights or None)``. Inputs are
    ``(L, N, E)``, or ``(N, L, E)`` with ``batch_first=True``. Boolean masks mark positions that
    may *not* be attended (PyTorch's convention for this module).

    >>> import everyo as eo
    >>> mha = eo.MultiheadAttention(16, 4, batch_first=True, seed=0)
    >>> out, w = mha(eo.ones(2, 5, 16), eo.ones(2, 5, 16), eo.ones(2, 5, 16))
    >>> out.shape, w.shape
    ((2, 5, 16), (2, 5, 5))
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 batch_first: bool = False, *, seed=None) -> None:  # fmt: skip
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        self.head_dim = embed_dim // num_heads
        self.dropout, self.batch_first = float(dropout), batch_first
        s_in, s_out = child_seeds(seed, 2)
        self.in_proj_weight = empty_param(3 * embed_dim, embed_dim)
        init.xavier_uniform_(self.in_proj_weight, seed=s_in)
        if bias:
            self.in_proj_bias = empty_param(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, seed=s_out)
        if bias:
            self.out_proj.bias.data[...] = 0

    def _project(self, query, key, value):
        e, w, b = self.embed_dim, self.in_proj_weight, self.in_proj_bias
        if query is key and key is value:
            qkv = F.linear(query, w, b)
            return qkv[..., :e], qkv[..., e : 2 * e], qkv[..., 2 * e :]
        parts = []
        for i, x in enumerate((query, key, value)):
            sl = slice(i * e, (i + 1) * e)
            parts.append(F.linear(x, w[sl], None if b is None else b[sl]))
        return tuple(parts)

    def _heads(self, x, n, length):
        return x.reshape(n, length, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights: bool = True,
        attn_mask=None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ):
        if not self.batch_first:  # keep identity so self-attention projects in one matmul
            same_kv, same_qk = key is value, query is key
            query = query.transpose(0, 1)
            key = query if same_qk else key.transpose(0, 1)
            value = key if same_kv else value.transpose(0, 1)
        if query.ndim != 3 or query.shape[-1] != self.embed_dim:
            raise EveryOShapeError(
                f"MultiheadAttention({self.embed_dim}) expects 3-D input with {self.embed_dim} "
                f"features last, got {tuple(query.shape)}"
            )
        n, length, source = query.shape[0], query.shape[1], key.shape[1]
        q, k, v = self._project(query, key, value)
        q, k, v = self._heads(q, n, length), self._heads(k, n, source), self._heads(v, n, source)
        xp = q.xp
        mask = _blocked(attn_mask, xp, n, self.num_heads, length, source)
        if key_padding_mask is not None:
            kpm = _additive(key_padding_mask, xp)[:, None, None, :]
            mask = kpm if mask is None else mask + kpm
        if is_causal and mask is None:
            mask = xp.triu(xp.full((length, source), -np.inf, dtype=np.float32), 1)[None, None]
        p = self.dropout if self.training else 0.0
        if need_weights:
            scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(self.head_dim))
            if mask is not None:
                scores = scores + as_tensor(mask.astype(scores.dtype, copy=False))
            weights = F.softmax(scores, dim=-1)
            out = F.dropout(weights, p, self.training) @ v
        else:
            m = None if mask is None else as_tensor(mask.astype(q.dtype, copy=False))
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=m, dropout_p=p)
            weights = None
        out = out.transpose(1, 2).reshape(n, length, self.embed_dim)
        out = self.out_proj(out)
        if not self.batch_first:
            out = out.transpose(0, 1)
        if weights is not None and average_attn_weights:
            weights = weights.mean(axis=1)
        return out, weights

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}"


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with residual, dropout and LayerNorm
    (post-norm by default, ``norm_first=True`` for pre-norm), as ``torch.nn``'s layer.

    >>> import everyo as eo
    >>> layer = eo.TransformerEncoderLayer(16, 4, dim_feedforward=32, batch_first=True, seed=0)
    >>> layer(eo.ones(2, 5, 16)).shape
    (2, 5, 16)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, *,
                 seed=None) -> None:  # fmt: skip
        super().__init__()
        seeds = child_seeds(seed, 6)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, bias, batch_first,
                                            seed=seeds[0])  # fmt: skip
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, seed=seeds[1])
        self.dropout = Dropout(dropout, seed=seeds[2])
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, seed=seeds[3])
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout, seed=seeds[4])
        self.dropout2 = Dropout(dropout, seed=seeds[5])
        if activation not in ("relu", "gelu"):
            raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
        self.activation = ReLU() if activation == "relu" else GELU()

    def _sa(self, x, mask, kpm, is_causal):
        out, _ = self.self_attn(x, x, x, key_padding_mask=kpm, attn_mask=mask,
                                need_weights=False, is_causal=is_causal)  # fmt: skip
        return self.dropout1(out)

    def _ff(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        x = src
        if self.norm_first:
            x = x + self._sa(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff(self.norm2(x))
        x = self.norm1(x + self._sa(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff(x))
