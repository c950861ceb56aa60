"""``Linear`` (PyTorch's ``(out, in)`` weight layout and default init), ``Identity``,
``Flatten``."""

from __future__ import annotations

import numpy as np

from everyo.core import dtype as _dt
from everyo.core.ops.nn_ops import _linear
from everyo.nn import functional as F
from everyo.nn import init
from everyo.nn.module import Module
from everyo.nn.parameter import Parameter
from everyo.profiler.recording import hooks as _hooks

__all__ = ["Linear", "Identity", "Flatten", "child_seeds"]


def child_seeds(seed, n: int) -> list:
    """``n`` independent seeds derived from ``seed`` (all None when ``seed`` is None), so a
    composite layer built with one seed is reproducible while its parts differ."""
    if seed is None:
        return [None] * n
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(n)]


def empty_param(*shape: int) -> Parameter:
    return Parameter(np.zeros(shape, dtype=_dt.DEFAULT_FLOAT))


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape ``(out_features, in_features)``.

    Initialised like PyTorch: weight and bias uniform in ``±1/sqrt(in_features)``. The same
    ``seed`` gives identical weights; without one, :func:`everyo.manual_seed`'s generator is used.

    >>> import everyo as eo
    >>> layer = eo.Linear(4, 16, seed=0)
    >>> layer.weight.shape, layer(eo.zeros(32, 4)).shape
    ((16, 4), (32, 16))
    >>> bool((eo.Linear(4, 16, seed=0).weight == layer.weight).all())
    True
    """

    def __init__(self, in_features: int, out_features: int, *, bias: bool = True, seed=None):
        super().__init__()
        if in_features < 1 or out_features < 1:
            raise ValueError(
                f"Linear needs positive sizes, got in_features={in_features}, "
                f"out_features={out_features}"
            )
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.weight = empty_param(out_features, in_features)
        if bias:
            self.bias = empty_param(out_features)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters(seed)

    def reset_parameters(self, seed=None) -> None:
        """Re-draw the weights (PyTorch's ``kaiming_uniform_(a=sqrt(5))`` and bias bound)."""
        init.layer_default_(self.weight, self.bias, seed=seed)

    def forward(self, x):
        p = _hooks.active
        if p is None or not p.record_ops:  # F.linear's own test, one frame less per call
            return _linear(x, self.weight, self.bias)
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Identity(Module):
    """Returns its input unchanged (a placeholder layer)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, x):
        return x


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` (default: everything after the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return F.flatten(x, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
