"""``everyo.nn.functional`` (``F``): every op of the engine under PyTorch's functional names.

>>> import everyo as eo
>>> import everyo.nn.functional as F
>>> F.softmax(eo.tensor([[1.0, 1.0]]), dim=-1).tolist()
[[0.5, 0.5]]

Reductions and softmax accept ``axis=`` or ``dim=``. The ops are the same functions as
``eo.<name>``; the few wrappers below only accept PyTorch's extra keywords.
"""

from __future__ import annotations

from everyo.core import ops as _ops
from everyo.core.ops import *  # noqa: F403
from everyo.core.ops import concatenate, nn_ops

__all__ = list(_ops.__all__) + ["cat", "relu_", "softplus", "silu", "leaky_relu"]


def relu(input, inplace: bool = False):  # noqa: A002 - PyTorch's names
    """``max(x, 0)``. ``inplace`` is accepted for PyTorch compatibility; the result is a new
    tensor either way (autograd needs the input)."""
    return nn_ops.relu(input)


def relu_(input):  # noqa: A002
    """Same as :func:`relu` (out of place)."""
    return nn_ops.relu(input)


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False, *,  # noqa: A002
            seed=None, rng=None):  # fmt: skip
    """Inverted dropout, see :func:`everyo.dropout` (``inplace`` accepted, not used)."""
    return nn_ops.dropout(input, p, training, seed=seed, rng=rng)


def cat(tensors, dim: int = 0):
    """Concatenate along ``dim`` (PyTorch's name for :func:`everyo.concatenate`)."""
    return concatenate(tensors, dim)


def softplus(input, beta: float = 1.0, threshold: float = 20.0):  # noqa: A002
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold`` as in PyTorch."""
    from everyo.core.ops import elementwise as e

    bx = e.multiply(input, beta)
    soft = e.divide(e.add(e.log(e.add(e.exp(e.negative(e.abs(bx))), 1.0)),
                          e.maximum(bx, 0.0)), beta)  # fmt: skip
    return e.where(bx.data > threshold, input, soft)


def silu(input, inplace: bool = False):  # noqa: A002
    """``x * sigmoid(x)``."""
    from everyo.core.ops import elementwise as e

    return e.multiply(input, nn_ops.sigmoid(input))


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):  # noqa: A002
    """``x`` where positive, ``negative_slope * x`` elsewhere."""
    from everyo.core.ops import elementwise as e
    from everyo.core.ops._util import as_t

    x = as_t(input)
    return e.where(x.data > 0, x, e.multiply(x, negative_slope))
