"""Training: ``Trainer``, ``History``, callbacks and metrics."""

from everyo.training.callbacks import (
    Callback,
    EarlyStopping,
    LearningRateScheduler,
    ModelCheckpoint,
)
from everyo.training.history import History
from everyo.training.loggers import CSVLogger, ProgressLogger
from everyo.training.metrics import accuracy, confusion_matrix
from everyo.training.trainer import Trainer

__all__ = [
    "Trainer", "History", "Callback", "EarlyStopping", "ModelCheckpoint",
    "LearningRateScheduler", "ProgressLogger", "CSVLogger", "accuracy", "confusion_matrix",
]  # fmt: skip
