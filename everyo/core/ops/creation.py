"""Creation ops: ``zeros``, ``ones``, ``full``, ``arange``, ``linspace``, ``eye``, random
tensors (``seed=`` reproducible), ``one_hot``. Shapes are ``zeros(32, 4)`` or ``zeros((32, 4))``."""

from __future__ import annotations

import numpy as np

from everyo.core import dtype as _dt
from everyo.core.device import device as _resolve
from everyo.core.ops._dispatch import dispatch
from everyo.core.tensor import Tensor, as_tensor
from everyo.errors import EveryOShapeError
from everyo.profiler.recording.flops import NO_FLOPS, declare

__all__ = [
    "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "arange",
    "linspace", "eye", "rand", "randn", "uniform", "normal", "randint", "one_hot", "manual_seed",
]  # fmt: skip

ARANGE = declare("arange", NO_FLOPS)
EMPTY = declare("empty", NO_FLOPS)
EYE = declare("eye", NO_FLOPS)
FULL = declare("full", NO_FLOPS)
FULL_LIKE = declare("full_like", NO_FLOPS)
LINSPACE = declare("linspace", NO_FLOPS)
NORMAL = declare("normal", NO_FLOPS)
ONE_HOT = declare("one_hot", NO_FLOPS)
ONES = declare("ones", NO_FLOPS)
ONES_LIKE = declare("ones_like", NO_FLOPS)
RANDINT = declare("randint", NO_FLOPS)
UNIFORM = declare("uniform", NO_FLOPS)
ZEROS = declare("zeros", NO_FLOPS)
ZEROS_LIKE = declare("zeros_like", NO_FLOPS)

_rng: list = []  # the global generator, made on first use: numpy.random costs import time


def global_rng() -> np.random.Generator:
    """The generator random ops use when called without ``seed=``."""
    if not _rng:
        _rng.append(np.random.default_rng())
    return _rng[0]


def manual_seed(seed: int) -> None:
    """Seed the generator used by random ops called without ``seed=``."""
    _rng[:] = [np.random.default_rng(seed)]


def _shape(args) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    shape = tuple(int(s) for s in args)
    if any(s < 0 for s in shape):
        raise EveryOShapeError(f"negative dimension in shape {shape}")
    return shape


def _finish(arr, dev, requires_grad) -> Tensor:
    t = Tensor._make(arr, dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _filled(name, shape, value, dtype, device, requires_grad):
    dev = _resolve(device)
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.DEFAULT_FLOAT
    return dispatch(name, lambda: _finish(dev.xp.full(shape, value, dtype=dt), dev, requires_grad))


def zeros(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype`` says otherwise)."""
    return _filled(ZEROS, _shape(shape), 0, dtype, device, requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ones."""
    return _filled(ONES, _shape(shape), 1, dtype, device, requires_grad)


def empty(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    """An uninitialised tensor (zeros here: NumPy's ``empty`` gains little and hides bugs)."""
    return _filled(EMPTY, _shape(shape), 0, dtype, device, requires_grad)


def full(shape, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of ``fill_value``."""
    shape = _shape((shape,) if isinstance(shape, int) else (shape,))
    return _filled(FULL, shape, fill_value, dtype, device, requires_grad)


def _like(x, value, dtype, device, requires_grad, name):
    x = as_tensor(x)
    return _filled(name, x.shape, value, dtype or x.dtype, device or x.device, requires_grad)


def zeros_like(x, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(x, 0, dtype, device, requires_grad, ZEROS_LIKE)


def ones_like(x, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(x, 1, dtype, device, requires_grad, ONES_LIKE)


def full_like(x, fill_value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _like(x, fill_value, dtype, device, requires_grad, FULL_LIKE)


def arange(start, stop=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Evenly spaced values in ``[start, stop)`` (int64 for integer arguments)."""
    if stop is None:
        start, stop = 0, start
    dev = _resolve(device)
    ints = all(isinstance(v, (int, np.integer)) for v in (start, stop, step))
    dt = _dt.to_dtype(dtype) if dtype is not None else (_dt.int64 if ints else _dt.float32)
    return dispatch(
        ARANGE,
        lambda: _finish(dev.xp.arange(start, stop, step, dtype=dt), dev, requires_grad),
    )


def linspace(start, stop, num=50, *, dtype=None, device=None, requires_grad=False):
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive."""
    dev = _resolve(device)
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.float32
    return dispatch(
        LINSPACE,
        lambda: _finish(dev.xp.linspace(start, stop, num, dtype=dt), dev, requires_grad),
    )


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The identity matrix (``n`` x ``m``)."""
    dev = _resolve(device)
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.float32
    return dispatch(EYE, lambda: _finish(dev.xp.eye(n, m, dtype=dt), dev, requires_grad))


def _random(name, draw, shape, dtype, device, seed, requires_grad):
    dev = _resolve(device)
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.float32
    rng = global_rng() if seed is None else np.random.default_rng(seed)

    def make():
        # drawn on the host so a seed gives the same numbers on every device
        arr = np.asarray(draw(rng, shape)).astype(dt, copy=False)
        return _finish(arr if dev.type == "cpu" else dev.xp.asarray(arr), dev, requires_grad)

    return dispatch(name, make)


def rand(*shape, dtype=None, device=None, seed=None, requires_grad=False):
    """Uniform samples in ``[0, 1)``."""
    return uniform(0.0, 1.0, _shape(shape), dtype=dtype, device=device, seed=seed,
                   requires_grad=requires_grad)  # fmt: skip


def randn(*shape, dtype=None, device=None, seed=None, requires_grad=False):
    """Standard normal samples."""
    return normal(0.0, 1.0, _shape(shape), dtype=dtype, device=device, seed=seed,
                  requires_grad=requires_grad)  # fmt: skip


def uniform(low=0.0, high=1.0, size=(), *, dtype=None, device=None, seed=None,
            requires_grad=False):  # fmt: skip
    """Uniform samples in ``[low, high)``."""
    shape = _shape((size,) if isinstance(size, int) else (size,))
    return _random(UNIFORM, lambda r, s: r.uniform(low, high, s), shape, dtype, device,
                   seed, requires_grad)  # fmt: skip


def normal(mean=0.0, std=1.0, size=(), *, dtype=None, device=None, seed=None,
           requires_grad=False):  # fmt: skip
    """Normal samples with ``mean`` and ``std``."""
    shape = _shape((size,) if isinstance(size, int) else (size,))
    return _random(NORMAL, lambda r, s: r.normal(mean, std, s), shape, dtype, device,
                   seed, requires_grad)  # fmt: skip


def randint(low, high=None, size=(), *, device=None, seed=None):
    """Random int64 integers in ``[low, high)``."""
    if high is None:
        low, high = 0, low
    shape = _shape((size,) if isinstance(size, int) else (size,))
    return _random(RANDINT, lambda r, s: r.integers(low, high, s), shape, "int64", device,
                   seed, False)  # fmt: skip


def one_hot(indices, num_classes: int = -1, *, dtype=None):
    """Integer class indices to one-hot rows (float32 by default)."""
    idx = as_tensor(indices)
    if idx.dtype.kind not in "iu":
        raise EveryOShapeError(f"one_hot needs integer indices, got {idx.dtype}")
    xp = idx.xp
    n = int(idx.data.max()) + 1 if num_classes < 0 else num_classes
    if idx.size and (int(idx.data.min()) < 0 or int(idx.data.max()) >= n):
        raise EveryOShapeError(f"one_hot: indices must lie in [0, {n})")
    dt = _dt.to_dtype(dtype) if dtype is not None else _dt.float32

    def make():
        out = (idx.data[..., None] == xp.arange(n)).astype(dt)
        return Tensor._make(out, idx.device)

    return dispatch(ONE_HOT, make)
