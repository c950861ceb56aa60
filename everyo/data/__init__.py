"""Data loading: datasets (``ArrayDataset``, ``Subset``, ``random_split``, ``TransformDataset``,
``load_csv_dataset``), ``DataLoader``, and NumPy preprocessing and splits (scalers,
``one_hot_encode``, ``train_test_split``, ``stratified_split``)."""

from everyo.data.csv_dataset import load_csv_dataset
from everyo.data.dataloader import DataLoader
from everyo.data.dataset import ArrayDataset, Dataset, Subset, default_collate, random_split
from everyo.data.preprocessing import MinMaxScaler, StandardScaler, one_hot_encode, standardize
from everyo.data.split import stratified_split, train_test_split
from everyo.data.transforms import TransformDataset

__all__ = [
    "Dataset", "ArrayDataset", "Subset", "random_split", "default_collate", "DataLoader",
    "TransformDataset", "load_csv_dataset", "StandardScaler", "MinMaxScaler", "standardize",
    "one_hot_encode", "train_test_split", "stratified_split",
]  # fmt: skip
