"""``EventBatch``: rows of a run as equal-length NumPy columns (what readers and analysis see)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KINDS = ("module", "backward", "op", "optimizer", "data", "train", "user", "gpu")


@dataclass
class ProfileEvent:
    """One recorded event, as a plain object (``Profiler.events`` returns a list of these).

    Times are nanoseconds relative to the start of the run; ``duration_ms`` is a convenience.
    """

    name: str
    kind: str
    path: str
    start_ns: int
    duration_ns: int
    depth: int
    parent: int
    thread_id: int
    row: int
    shapes: str | None = None
    metadata: dict | None = None
    flops: int | None = None
    mem_bytes: int | None = None
    device_ns: int | None = None

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.duration_ns

    @property
    def duration_ms(self) -> float:
        return self.duration_ns / 1e6


def _strings(table: list, ids: np.ndarray) -> np.ndarray:
    lookup = np.empty(len(table), dtype=object)
    lookup[:] = table
    return lookup[ids] if len(ids) else np.empty(0, dtype=object)


class EventBatch:
    """Columnar rows of one run.

    Attributes
    ----------
    start_ns, dur_ns, depth, parent, tid, row : numpy.ndarray
        Core columns (``parent`` is a row index into the run, -1 for roots and for parents
        that had not finished when the batch was read).
    kind, name, path : numpy.ndarray of str
        Decoded lazily from interned ids.
    shapes, flops, bytes, mem_bytes, device_ns, metadata
        Optional columns, ``None`` when their option was off.
    thread_names : dict
        Thread id -> thread name.
    """

    def __init__(
        self,
        cols: dict,
        keys: list,
        shapes: list,
        threads: list,
        metadata: dict,
        first_row: int,
        parent: np.ndarray,
    ):
        n = len(cols["start_ns"])
        self.start_ns = cols["start_ns"]
        self.dur_ns = cols["dur_ns"]
        self.key = cols["key"].astype(np.int64, copy=False)
        self.depth = cols["depth"]
        self.parent = parent
        self.row = np.arange(first_row, first_row + n, dtype=np.int64)
        tid_table = np.array([t for t, _ in threads] or [0], dtype=np.int64)
        self.tid_index = cols["tid"]
        self.tid = tid_table[cols["tid"]] if n else np.empty(0, np.int64)
        self.keys = keys
        self.shape_table = shapes
        self.thread_names = {t: name for t, name in threads}
        self.shape_id = cols.get("shape")
        self.flops = cols.get("flops")
        self.bytes = cols.get("bytes")
        self.mem_bytes = cols.get("mem_bytes")
        self.device_ns = cols.get("device_ns")
        self._metadata = metadata
        self._cache: dict = {}

    def __len__(self) -> int:
        return len(self.start_ns)

    def _decoded(self, field: int) -> np.ndarray:
        if field not in self._cache:
            self._cache[field] = _strings([k[field] for k in self.keys], self.key)
        return self._cache[field]

    @property
    def kind(self) -> np.ndarray:
        return self._decoded(0)

    @property
    def name(self) -> np.ndarray:
        return self._decoded(1)

    @property
    def path(self) -> np.ndarray:
        return self._decoded(2)

    @property
    def shapes(self) -> list | None:
        if self.shape_id is None:
            return None
        if "shapes" not in self._cache:
            table = self.shape_table + [""]  # id -1 (no tensors) reads as ""
            self._cache["shapes"] = _strings(table, self.shape_id).tolist()
        return self._cache["shapes"]

    @property
    def metadata(self) -> list | None:
        if not self._metadata:
            return None
        first = int(self.row[0]) if len(self) else 0
        return [self._metadata.get(first + i) for i in range(len(self))]

    def metadata_items(self):
        """``(batch offset, dict)`` for the rows that carry metadata (sparse, cheap)."""
        if not self._metadata or not len(self):
            return []
        first, last = int(self.row[0]), int(self.row[-1])
        return [(r - first, m) for r, m in sorted(self._metadata.items()) if first <= r <= last]

    @property
    def self_ns(self) -> np.ndarray:
        if "self_ns" not in self._cache:
            from everyo.profiler.analysis import self_times

            self._cache["self_ns"] = self_times(self)
        return self._cache["self_ns"]

    def event(self, i: int) -> ProfileEvent:
        """Row ``i`` of this batch as a :class:`ProfileEvent`."""
        shapes = self.shapes
        return ProfileEvent(
            name=self.keys[self.key[i]][1],
            kind=self.keys[self.key[i]][0],
            path=self.keys[self.key[i]][2],
            start_ns=int(self.start_ns[i]),
            duration_ns=int(self.dur_ns[i]),
            depth=int(self.depth[i]),
            parent=int(self.parent[i]),
            thread_id=int(self.tid[i]),
            row=int(self.row[i]),
            shapes=None if shapes is None else shapes[i],
            metadata=self._metadata.get(int(self.row[i])) if self._metadata else None,
            flops=None if self.flops is None else int(self.flops[i]),
            mem_bytes=None if self.mem_bytes is None else int(self.mem_bytes[i]),
            device_ns=None if self.device_ns is None else int(self.device_ns[i]),
        )

    def events(self) -> list[ProfileEvent]:
        return [self.event(i) for i in range(len(self))]
