"""``Embedding``: a lookup table of ``num_embeddings`` vectors."""

from __future__ import annotations

from everyo.nn import functional as F
from everyo.nn import init
from everyo.nn.linear import empty_param
from everyo.nn.module import Module

__all__ = ["Embedding"]


class Embedding(Module):
    """Rows of ``weight`` (``(num_embeddings, embedding_dim)``, N(0, 1) init as in PyTorch)
    picked by integer indices; the ``padding_idx`` row starts at zero and gets no gradient."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 *, seed=None) -> None:  # fmt: skip
        super().__init__()
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        if padding_idx is not None and not 0 <= padding_idx < num_embeddings:
            raise ValueError(f"padding_idx {padding_idx} out of range [0, {num_embeddings})")
        self.padding_idx = padding_idx
        self.weight = empty_param(num_embeddings, embedding_dim)
        init.normal_(self.weight, seed=seed)
        if padding_idx is not None:
            self.weight.data[padding_idx] = 0

    def forward(self, indices):
        return F.embedding(indices, self.weight, padding_idx=self.padding_idx)

    def extra_repr(self) -> str:
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"
