"""``DataLoader``: batches of Tensors from a dataset, with a vectorised fast path for
``ArrayDataset`` and optional background prefetching.

With a profiler active, each batch fetch is recorded as a ``"data"`` region named
``"DataLoader.next"`` with the batch size.
"""

from __future__ import annotations

import math
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from everyo.core.device import device as _resolve
from everyo.data.checks import add_note, check_prefetch, check_seed, describe_indices
from everyo.data.dataset import ArrayDataset, Subset, default_collate, to_batch
from everyo.profiler.recording import hooks as _hooks

__all__ = ["DataLoader"]


def _array_source(dataset) -> tuple[ArrayDataset, np.ndarray | None] | None:
    """``(array dataset, base indices or None)`` when ``dataset`` is an ArrayDataset or a
    (nested) Subset of one: those are batched by indexing arrays, without per-sample calls."""
    if type(dataset) is ArrayDataset:
        return dataset, None
    if type(dataset) is Subset:
        inner = _array_source(dataset.dataset)
        if inner is not None:
            src, base = inner
            return src, (dataset.indices if base is None else base[dataset.indices])
    return None


class DataLoader:
    """Iterate over a dataset in batches of Tensors.

    Parameters
    ----------
    dataset : Dataset or any object with ``__len__`` and ``__getitem__``
        An :class:`ArrayDataset` (or a ``Subset`` of one) takes the fast path: each batch is one
        vectorised gather per array instead of ``batch_size`` item calls plus a collate.
    batch_size : int
        Samples per batch (>= 1). ``len(loader)`` is ``ceil(N / batch_size)``, or
        ``floor(N / batch_size)`` with ``drop_last``.
    shuffle : bool
        Draw a new permutation each epoch (each ``iter(loader)``).
    drop_last : bool
        Drop the final partial batch.
    seed : int, optional
        Seed of the shuffling generator (a whole number >= 0): the same seed gives the same
        sequence of epochs.
    collate_fn : callable, optional
        Turns a list of samples into a batch (default :func:`default_collate`); using one
        turns the fast path off.
    device : str or Device, optional
        Put every batch on this device.
    prefetch : int
        Prepare up to this many batches ahead on a background thread (0: none).

    An error raised by ``dataset[i]`` propagates with its own type and a note naming ``i``;
    an error while batching the samples gets a note naming the batch's indices.

    >>> import numpy as np, everyo as eo
    >>> loader = eo.DataLoader(eo.ArrayDataset(np.zeros((20, 3), np.float32)), batch_size=6)
    >>> len(loader), [len(b) for b in loader]
    (4, [6, 6, 6, 2])
    """

    def __init__(
        self,
        dataset,
        batch_size: int = 32,
        *,
        shuffle: bool = False,
        drop_last: bool = False,
        seed: int | None = None,
        collate_fn: Callable[[list], Any] | None = None,
        device=None,
        prefetch: int = 0,
    ) -> None:
        if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
            raise TypeError(
                f"DataLoader needs a dataset with __len__ and __getitem__, got "
                f"{type(dataset).__name__}; wrap arrays as eo.ArrayDataset(features, targets)"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
            raise TypeError(f"batch_size must be an int, got {batch_size!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        check_seed(seed, "DataLoader")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.seed = seed
        self.collate_fn = collate_fn
        self.device = None if device is None else _resolve(device)
        self.prefetch = check_prefetch(prefetch)
        self._rng = np.random.default_rng(seed)
        self._source = None if collate_fn is not None else _array_source(dataset)

    @property
    def fast_path(self) -> bool:
        """Whether batches are gathered by vectorised indexing (no per-sample calls)."""
        return self._source is not None

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    @property
    def num_samples(self) -> int:
        """The number of samples in the dataset (reference EveryO's attribute)."""
        return len(self.dataset)

    def _batch_sizes(self) -> list[int]:
        n, b = len(self.dataset), self.batch_size
        return [min(b, n - i * b) for i in range(len(self))]

    def _index_batches(self) -> Iterator:
        """Per batch: a slice (in order) or an index array (shuffled). Drawn eagerly so the
        shuffle happens at ``iter()`` time, in the consumer's thread."""
        n, b = len(self.dataset), self.batch_size
        stops = range(b, b * len(self) + 1, b) if len(self) else range(0)
        if self.shuffle:
            order = self._rng.permutation(n)
            return iter([order[s - b : min(s, n)] for s in stops])
        return iter([slice(s - b, min(s, n)) for s in stops])

    def _fetch(self, idx) -> Any:
        """One batch for the positions ``idx`` (a slice or an index array)."""
        if self._source is not None:
            src, base = self._source
            if base is not None:
                idx = base[idx]
            return to_batch(src.batch(idx), self.device)
        positions = range(len(self.dataset))[idx] if isinstance(idx, slice) else idx.tolist()
        dataset, samples, i = self.dataset, [], None
        try:
            for i in positions:
                samples.append(dataset[i])
        except Exception as exc:  # the user's own error, with the index it happened at
            add_note(
                exc, f"DataLoader: {type(dataset).__name__}[{i}] raised this (sample index {i})"
            )
            raise
        collate = self.collate_fn or default_collate
        try:
            batch = collate(samples)
        except Exception as exc:
            add_note(
                exc,
                f"DataLoader: batching the samples at indices {describe_indices(positions)} "
                f"of {type(dataset).__name__} with {getattr(collate, '__name__', collate)}",
            )
            raise
        return to_batch(batch, self.device)

    def __iter__(self) -> Iterator:
        batches = self._index_batches()
        if self.prefetch:
            return _PrefetchIterator(self, batches, self._batch_sizes())
        return self._iterate(batches)

    def _iterate(self, batches) -> Iterator:
        for idx in batches:
            p = _hooks.active
            if p is None:
                yield self._fetch(idx)
            else:
                n = (idx.stop - idx.start) if isinstance(idx, slice) else len(idx)
                with p.region("DataLoader.next", "data", batch_size=int(n)):
                    batch = self._fetch(idx)
                yield batch

    def __repr__(self) -> str:
        return (
            f"DataLoader({type(self.dataset).__name__} of {len(self.dataset)}, "
            f"batch_size={self.batch_size}, shuffle={self.shuffle}, drop_last={self.drop_last}, "
            f"batches={len(self)}, fast_path={self.fast_path})"
        )


_END, _BATCH, _ERROR = 0, 1, 2


def _produce(loader: DataLoader, batches, out: queue.Queue, stop: threading.Event) -> None:
    """Worker thread body. It holds no reference to the iterator, so dropping the iterator
    runs its ``__del__``, which sets ``stop`` and ends this thread."""

    def put(item) -> bool:
        while not stop.is_set():
            try:
                out.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    try:
        for idx in batches:
            if stop.is_set() or not put((_BATCH, loader._fetch(idx))):
                return
        put((_END, None))
    except BaseException as exc:  # re-raised in the consumer's thread
        put((_ERROR, exc))


class _PrefetchIterator:
    """Batches prepared up to ``loader.prefetch`` ahead on a daemon thread (bounded queue)."""

    def __init__(self, loader: DataLoader, batches, sizes: list[int]) -> None:
        self._queue: queue.Queue = queue.Queue(maxsize=loader.prefetch)
        self._stop = threading.Event()
        self._sizes = iter(sizes)
        self._done = False
        self._thread = threading.Thread(
            target=_produce,
            args=(loader, batches, self._queue, self._stop),
            name="everyo-dataloader-prefetch",
            daemon=True,
        )
        self._thread.start()

    def __iter__(self) -> _PrefetchIterator:
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        n = next(self._sizes, None)  # None: only the end marker is left, not a batch
        p = _hooks.active
        if p is None or n is None:
            kind, item = self._queue.get()
        else:
            with p.region("DataLoader.next", "data", batch_size=n):
                kind, item = self._queue.get()
        if kind == _BATCH:
            return item
        self.close()
        if kind == _ERROR:
            raise item
        raise StopIteration

    def close(self) -> None:
        """Stop the worker thread and drop the prepared batches."""
        self._done = True
        self._stop.set()
        try:
            while True:
                self._queue.get_nowait()
        except queue.Empty:
            pass
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)

    @property
    def alive(self) -> bool:
        """Whether the worker thread is still running."""
        return self._thread.is_alive()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to clean
            pass
