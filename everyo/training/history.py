"""``History``: one record per epoch of loss, metrics and the throughput figures of the guide's
"Training Throughput → Record" list (samples/s, time per epoch, mean batch time, validation
time, peak memory)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from everyo.fileio import atomic_open, dumps

__all__ = ["History"]


class _Names(list):
    """The key names: a list (reference EveryO's ``history.keys`` property) that can also be
    called (everyo's ``history.keys()``)."""

    def __call__(self) -> list[str]:
        return list(self)


class _Record(dict):
    """One epoch's record: a dict (everyo's ``history.last`` property) that can also be called
    (reference EveryO's ``history.last()``)."""

    def __call__(self) -> _Record:
        return self


class History:
    """Per-epoch records from :meth:`Trainer.fit`.

    ``history.epochs`` is a list of dicts; ``history["loss"]`` the list of one key across
    epochs (None where absent); ``history.last`` the latest record. Reference EveryO's
    spellings ``history.keys`` (without a call) and ``history.last()`` work too.
    Keys: ``epoch``, ``loss``, each metric, ``val_loss`` and ``val_<metric>`` (with a validation
    loader), ``lr``, ``samples``, ``samples_per_s``, ``epoch_time_s``, ``mean_batch_time_ms``,
    ``val_time_s``, ``peak_host_mib`` and, on CUDA, ``peak_device_mib``.
    """

    def __init__(self, records=None) -> None:
        self.epochs: list[dict] = [_Record(r) for r in records or ()]

    def append(self, record: dict | None = None, /, **values) -> dict:
        """Add one epoch's record, given as a dict or as keywords (reference EveryO's
        ``append(epoch=1, loss=0.5)``); returns the stored record."""
        row = _Record({**(record or {}), **values})
        self.epochs.append(row)
        return row

    def __len__(self) -> int:
        return len(self.epochs)

    def __iter__(self) -> Iterator[dict]:
        return iter(self.epochs)

    def __getitem__(self, key):
        if isinstance(key, (int, slice)):
            return self.epochs[key]
        if not any(key in e for e in self.epochs):
            raise KeyError(f"no {key!r} in the history; keys: {self.keys()}")
        return [e.get(key) for e in self.epochs]

    @property
    def keys(self) -> _Names:
        """The keys in first-seen order (``history.keys`` or ``history.keys()``)."""
        seen: dict[str, None] = {}
        for e in self.epochs:
            seen.update(dict.fromkeys(e))
        return _Names(seen)

    @property
    def last(self) -> _Record:
        if not self.epochs:
            raise IndexError("the history is empty: fit() has not finished an epoch")
        return self.epochs[-1]

    def get(self, key: str, default=None):
        """``history[key]``, or ``default`` when no epoch recorded ``key``."""
        return self[key] if key in self else default

    def __contains__(self, key) -> bool:
        return any(key in e for e in self.epochs)

    def best(self, key: str = "val_loss", mode: str = "min") -> dict:
        """The record with the lowest (``mode="min"``) or highest ``key``."""
        rows = [e for e in self.epochs if e.get(key) is not None]
        if not rows:
            raise KeyError(f"no {key!r} in the history; keys: {self.keys()}")
        pick = min if mode == "min" else max
        return pick(rows, key=lambda e: e[key])

    def to_dict(self) -> dict[str, list]:
        """``{key: [value per epoch]}`` (None where an epoch lacks the key)."""
        return {k: self[k] for k in self.keys()}

    def to_json(self, path) -> Path:
        """Write the records as a JSON list (indent 2, atomically); parent folders are created.

        A NaN or infinite value (a diverged loss) is written as the string ``"NaN"``,
        ``"Infinity"`` or ``"-Infinity"``: JSON has no such numbers.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path) as f:
            f.write(dumps(self.epochs, indent=2, default=float))
        return path

    def to_csv(self, path) -> Path:
        """Write one header row (keys in first-seen order) and one row per epoch, blank cells
        for missing keys; parent folders are created. Returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path) as fh:
            writer = csv.DictWriter(fh, fieldnames=self.keys(), restval="")
            writer.writeheader()
            writer.writerows(self.epochs)
        return path

    def to_dataframe(self):
        """The records as a pandas DataFrame (pandas is imported only here)."""
        import pandas as pd

        return pd.DataFrame(self.epochs)

    def __repr__(self) -> str:
        if not self.epochs:
            return "History(0 epochs)"
        last = ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in self.last.items()
            if k in ("epoch", "loss", "val_loss", "accuracy", "val_accuracy", "samples_per_s")
        )
        return f"History({len(self)} epochs; last: {last})"
