"""``TransformDataset``: a dataset whose samples pass through functions when read.

>>> import numpy as np, everyo as eo
>>> base = eo.ArrayDataset(np.arange(6.0).reshape(3, 2), np.array([0, 1, 2]))
>>> ds = eo.TransformDataset(base, transform=lambda x: x * 10, target_transform=lambda y: y + 1)
>>> x, y = ds[1]
>>> x.tolist(), int(y), len(ds)
([20.0, 30.0], 2, 3)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from everyo.data.dataset import Dataset

__all__ = ["TransformDataset"]


class TransformDataset(Dataset):
    """Wrap ``dataset`` and apply ``transform`` / ``target_transform`` lazily in
    ``__getitem__`` (reference EveryO's, as torchvision's ``transform=`` arguments).

    A tuple sample ``(x, y, ...)`` becomes ``(transform(x), target_transform(y), ...)``; any other
    sample becomes ``transform(sample)``. A missing function leaves its part unchanged. The
    :class:`DataLoader` collates these samples (the array fast path does not apply).
    """

    def __init__(self, dataset, transform: Callable | None = None,
                 target_transform: Callable | None = None) -> None:  # fmt: skip
        self.dataset, self.transform, self.target_transform = dataset, transform, target_transform

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index) -> Any:
        sample = self.dataset[index]
        if isinstance(sample, tuple):
            x, *rest = sample
            if self.transform is not None:
                x = self.transform(x)
            if rest and self.target_transform is not None:
                rest[0] = self.target_transform(rest[0])
            return (x, *rest)
        return sample if self.transform is None else self.transform(sample)
