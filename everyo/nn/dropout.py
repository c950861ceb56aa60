"""``Dropout``: inverted dropout in training mode, the identity in eval mode."""

from __future__ import annotations

import numpy as np

from everyo.errors import EveryOConfigError
from everyo.nn import functional as F
from everyo.nn.module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """Zero each element with probability ``p`` while training and scale the rest by
    ``1/(1-p)``; in eval mode, return the input itself.

    ``seed`` makes the sequence of masks reproducible (one generator per layer and device);
    without it the generator of :func:`everyo.manual_seed` is used.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False, *, seed=None) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise EveryOConfigError(f"Dropout probability must lie in [0, 1], got {p}")
        self.p, self.inplace, self.seed = float(p), inplace, seed
        self._rngs: dict = {}

    def _rng(self, x):
        if self.seed is None:
            return None
        key = str(x.device)
        gen = self._rngs.get(key)
        if gen is None:
            xp = x.xp
            gen = np.random.default_rng(self.seed) if xp is np else xp.random.default_rng(self.seed)
            self._rngs[key] = gen
        return gen

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        return F.dropout(x, self.p, True, rng=self._rng(x))

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
