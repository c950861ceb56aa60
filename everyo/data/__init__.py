"""Data loading: datasets (``ArrayDataset``, ``Subset``, ``random_split``) and ``DataLoader``."""

from everyo.data.dataloader import DataLoader
from everyo.data.dataset import ArrayDataset, Dataset, Subset, default_collate, random_split

__all__ = ["Dataset", "ArrayDataset", "Subset", "random_split", "default_collate", "DataLoader"]
