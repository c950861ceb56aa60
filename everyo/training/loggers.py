"""Logging callbacks for :meth:`Trainer.fit` (reference EveryO's): ``ProgressLogger`` prints one
line per epoch, ``CSVLogger`` keeps the history as a CSV file.

>>> import io, numpy as np, everyo as eo
>>> X, y = np.ones((8, 2), np.float32), np.zeros((8, 1), np.float32)
>>> model = eo.Sequential(eo.Linear(2, 1, seed=0))
>>> trainer = eo.Trainer(model, eo.SGD(model.parameters(), lr=0.1), eo.MSELoss())
>>> out = io.StringIO()
>>> _ = trainer.fit(eo.DataLoader(eo.ArrayDataset(X, y), 4), epochs=2, progress=False,
...                 callbacks=[eo.ProgressLogger(stream=out)])
>>> out.getvalue().splitlines()[0].startswith("epoch 1/2 | loss=")
True
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from everyo.training.callbacks import Callback

__all__ = ["ProgressLogger", "CSVLogger"]

# per-epoch figures that the Trainer records beside the loss and metrics; the progress line
# leaves them out (they are in the history, and in the CSV of CSVLogger)
_QUIET = {
    "epoch", "time", "epoch_time_s", "lr", "samples", "samples_per_s", "mean_batch_time_ms",
    "val_time_s", "peak_host_mib", "peak_device_mib",
}  # fmt: skip


def _cell(key: str, value) -> str:
    return f"{key}={value:.4f}" if isinstance(value, float) else f"{key}={value}"


class ProgressLogger(Callback):
    """Print one line per epoch: ``epoch e/N | loss=0.1234 | accuracy=0.9500 | 0.12s``.

    Parameters
    ----------
    every : int
        Print every ``every`` epochs (at least 1), and always the first and the last.
    stream : bool or file
        True prints to stdout, False prints nothing, a file object receives the lines.

    At the end of training it prints the total duration.
    """

    def __init__(self, every: int = 1, *, stream=True) -> None:
        self.every = max(1, int(every))
        self.stream = stream
        self._start = None

    def _write(self, line: str) -> None:
        if self.stream is False or self.stream is None:
            return
        out = sys.stdout if self.stream is True else self.stream
        print(line, file=out)

    def on_train_begin(self, trainer) -> None:
        self._start = time.perf_counter()

    def on_epoch_end(self, trainer, epoch: int, logs: dict) -> None:
        total = getattr(trainer, "total_epochs", None)
        last = total is not None and epoch >= total
        if not (epoch == 1 or last or epoch % self.every == 0):
            return
        counter = f"epoch {epoch}/{total}" if total else f"epoch {epoch}"
        cells = [_cell(k, v) for k, v in logs.items() if k not in _QUIET and v is not None]
        seconds = logs.get("time", logs.get("epoch_time_s"))
        tail = [f"{seconds:.2f}s"] if isinstance(seconds, (int, float)) else []
        self._write(" | ".join([counter, *cells, *tail]))

    def on_train_end(self, trainer) -> None:
        if self._start is not None:
            self._write(f"training finished in {time.perf_counter() - self._start:.2f}s")


class CSVLogger(Callback):
    """Rewrite ``path`` from ``trainer.history.to_csv`` at every epoch end, so the file always
    holds every epoch so far (columns in the history's first-seen key order)."""

    def __init__(self, path) -> None:
        self.path = Path(path)

    def on_epoch_end(self, trainer, epoch: int, logs: dict) -> None:
        trainer.history.to_csv(self.path)
