"""Datasets: ``Dataset`` (the protocol), ``ArrayDataset``, ``Subset``, ``random_split``, and
``default_collate`` (samples → batch of Tensors)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from everyo.core import backend
from everyo.core.device import device_of_array
from everyo.core.tensor import Tensor, as_tensor
from everyo.data.checks import check_seed
from everyo.errors import EveryODTypeError, EveryOShapeError

__all__ = ["Dataset", "ArrayDataset", "Subset", "random_split", "default_collate"]


class Dataset:
    """A map-style dataset: ``len(ds)`` samples, ``ds[i]`` returns sample ``i``.

    Any object with ``__len__`` and ``__getitem__`` works with :class:`DataLoader`; subclassing
    this one is optional.
    """

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")

    def __getitem__(self, index: int):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")


def _as_array(x, name: str):
    """A NumPy or CuPy array from an array, a Tensor or nested lists (no copy when possible);
    ragged rows are an :class:`EveryODTypeError` naming the argument ``name`` and the rows."""
    if isinstance(x, Tensor):
        return x.data
    if isinstance(x, np.ndarray) or backend.is_cupy_array(x):
        return x
    try:
        return as_tensor(x).data
    except EveryODTypeError:
        ragged = _first_ragged_row(x)
        if ragged is None:
            raise
        i, n, n0 = ragged
        raise EveryODTypeError(
            f"ArrayDataset {name}: row {i} has {n} values but row 0 has {n0}; every row needs "
            f"the same length: pad the rows to one length, or keep variable-length samples in "
            f"a Dataset of your own and pass collate_fn= to the DataLoader"
        ) from None


def _first_ragged_row(rows) -> tuple[int, int, int] | None:
    """``(i, len(rows[i]), len(rows[0]))`` for the first row whose length differs, if any."""
    try:
        lengths = [len(r) for r in rows]
    except TypeError:  # scalars mixed with rows: a missing length counts as 0 values
        lengths = [len(r) if hasattr(r, "__len__") else 0 for r in rows]
    for i, n in enumerate(lengths):
        if n != lengths[0]:
            return i, n, lengths[0]
    return None


class ArrayDataset(Dataset):
    """Samples are rows of ``features`` (and ``targets``): the :class:`DataLoader` fast path.

    Parameters
    ----------
    features : array-like, shape (N, ...)
        NumPy/CuPy array, Tensor or nested lists; kept without a copy when already an array.
    targets : array-like, shape (N, ...), optional
        Aligned with ``features``; a sample is then ``(x, y)``.

    >>> import numpy as np, everyo as eo
    >>> ds = eo.ArrayDataset(np.zeros((10, 3), np.float32), np.arange(10))
    >>> len(ds), int(ds[2][1])
    (10, 2)
    """

    def __init__(self, features, targets=None) -> None:
        self.features = _as_array(features, "features")
        self.targets = None if targets is None else _as_array(targets, "targets")
        if self.features.ndim == 0:
            raise EveryOShapeError("ArrayDataset features need a leading sample dimension")
        for name, arr in (("features", self.features), ("targets", self.targets)):
            if arr is not None and arr.dtype.hasobject:
                raise EveryOShapeError(
                    f"ArrayDataset {name} hold Python objects (dtype object), not numbers; "
                    f"convert them to a numeric array first, or write a Dataset subclass"
                )
        if self.targets is not None and len(self.targets) != len(self.features):
            raise EveryOShapeError(
                f"ArrayDataset: {len(self.features)} feature rows but {len(self.targets)} "
                f"targets; keep feature and target arrays aligned"
            )

    def __len__(self) -> int:
        return int(self.features.shape[0])

    @property
    def feature_shape(self) -> tuple:
        """The shape of one sample's features."""
        return tuple(self.features.shape[1:])

    def __getitem__(self, index):
        if self.targets is None:
            return self.features[index]
        return self.features[index], self.targets[index]

    def batch(self, indices) -> Any:
        """Rows ``indices`` as arrays (one vectorised gather per array), same structure as a
        sample."""
        xp = backend.namespace_of(self.features)
        # host index arrays move to the device of device-resident data; slices stay slices
        idx = xp.asarray(indices) if xp is not np and not isinstance(indices, slice) else indices
        if self.targets is None:
            return self.features[idx]
        return self.features[idx], self.targets[idx]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = np.asarray(indices, dtype=np.int64)
        n = len(dataset)
        if self.indices.size and (self.indices.min() < -n or self.indices.max() >= n):
            raise IndexError(f"Subset indices out of range for a dataset of {n} samples")

    def __len__(self) -> int:
        return int(self.indices.size)

    def __getitem__(self, index):
        return self.dataset[int(self.indices[index])]


def random_split(dataset, lengths: Sequence | None = None, *, seed: int | None = None,
                 fractions: Sequence | None = None) -> list[Subset]:  # fmt: skip
    """Split ``dataset`` into non-overlapping random :class:`Subset` s.

    ``lengths`` are counts summing to ``len(dataset)``, or fractions summing to 1 (remainders go
    to the first splits, as in PyTorch). ``fractions=`` is reference EveryO's keyword for them.
    """
    if fractions is not None:
        lengths = fractions
    if lengths is None:
        raise TypeError("random_split needs lengths: counts, or fractions summing to 1")
    check_seed(seed, "random_split")
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(x, float) for x in lengths) and abs(sum(lengths) - 1) < 1e-6:
        counts = [int(np.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n or any(x < 0 for x in lengths):
        raise ValueError(
            f"random_split lengths {lengths} must be non-negative and sum to {n} (the dataset "
            f"size), or be fractions summing to 1"
        )
    perm = np.random.default_rng(seed).permutation(n)
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[start : start + length]))
        start += length
    return out


def _stack(items: list):
    try:
        first = items[0]
        if isinstance(first, Tensor):
            xp = first.xp
            return Tensor._make(xp.stack([t.data for t in items]), first.device)
        if backend.is_cupy_array(first):
            xp = backend.namespace_of(first)
            return Tensor._make(xp.stack(items), device_of_array(first))
        arr = np.stack([np.asarray(x) for x in items])
        return as_tensor(arr)
    except ValueError:
        _raise_if_shapes_differ(items)
        raise


def _raise_if_shapes_differ(items: list) -> None:
    """The clear error for samples of different shapes (the failing path of :func:`_stack`)."""
    shapes = [tuple(np.shape(x.data if isinstance(x, Tensor) else x)) for x in items]
    for i, shape in enumerate(shapes):
        if shape != shapes[0]:
            raise EveryOShapeError(
                f"default_collate: sample {i} of the batch has shape {shape} but sample 0 has "
                f"{shapes[0]}; samples are stacked into one array, so they need one shape: pad "
                f"or crop them in __getitem__, or pass collate_fn= to the DataLoader to batch "
                f"samples of different sizes (e.g. padding each batch)"
            ) from None


def default_collate(samples: list):
    """Stack a list of samples into a batch with the same structure, leaves as Tensors.

    Arrays/Tensors/numbers are stacked along a new first axis; tuples and lists are collated
    per position, dicts per key.
    """
    if not samples:
        raise ValueError("default_collate got no samples")
    first = samples[0]
    if isinstance(first, (Tensor, np.ndarray, numbers.Number, np.generic)):
        return _stack(samples)
    if backend.is_cupy_array(first):
        return _stack(samples)
    if isinstance(first, dict):
        return {k: default_collate([s[k] for s in samples]) for k in first}
    if isinstance(first, (tuple, list)):
        for i, s in enumerate(samples):
            if len(s) != len(first):
                raise EveryOShapeError(
                    f"default_collate: sample {i} has {len(s)} fields but sample 0 has "
                    f"{len(first)}; a tuple or list sample is batched field by field, so every "
                    f"sample needs the same number of fields: return variable-length data as "
                    f"one array per sample, or pass collate_fn= to the DataLoader"
                )
        return tuple(default_collate(list(col)) for col in zip(*samples))
    raise TypeError(
        f"default_collate cannot batch samples of type {type(first).__name__}; pass "
        f"collate_fn= to the DataLoader"
    )


def to_batch(batch, dev) -> Any:
    """The array leaves of ``batch`` (nested tuples, lists, dicts) as Tensors on ``dev`` (no copy
    when already there, ``dev=None`` keeps them where they are); other leaves pass through."""
    if isinstance(batch, (tuple, list)):
        return type(batch)(to_batch(b, dev) for b in batch)
    if isinstance(batch, dict):
        return {k: to_batch(v, dev) for k, v in batch.items()}
    if isinstance(batch, Tensor):
        return batch if dev is None else batch.to(dev)
    if hasattr(batch, "__array__") or hasattr(batch, "shape"):
        return as_tensor(batch, device=dev)
    return batch
