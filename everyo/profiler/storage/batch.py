"""``EventBatch``: rows of a run as equal-length NumPy columns (what readers and analysis see)."""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass, field, fields

import numpy as np


@dataclass(frozen=True)
class ProfileEvent:
    """One recorded event, as a plain object (``Profiler.events`` returns a list of these).

    The first six fields are the reference EveryO's, in its order; everyo's own follow.

    Attributes
    ----------
    name : str
        Module class name, op name, or the name given to ``record_function``.
    duration_ns, start_ns : int
        Nanoseconds; ``start_ns`` counts from the start of the run.
    process_id : int
        The recording process (``os.getpid()``).
    thread_id : int
        The OS thread id of the recording thread (``threading.get_native_id()``).
    metadata : dict
        Always a dict, empty when the event has none: the keyword arguments of
        ``record_function``, plus ``"input_shapes"`` (a list of ``[int, ...]``, one per
        positional input with a shape) for module and op events when ``record_shapes`` is on.
    kind, path, depth, parent, row
        Event kind (``"module"``, ``"op"``, ``"user"``, ...), module path, nesting depth, row of
        the enclosing event (-1 for roots) and this event's row in the run.
    shapes : str or None
        The shape text (``"[(32, 4)] -> (32, 16)"``) with ``record_shapes``.
    flops, mem_bytes, device_ns : int or None
        With ``record_ops`` / ``profile_memory`` / on a GPU.
    """

    name: str
    duration_ns: int
    start_ns: int
    process_id: int
    thread_id: int
    metadata: dict = field(default_factory=dict)
    kind: str = "user"
    path: str = ""
    depth: int = 0
    parent: int = -1
    row: int = -1
    shapes: str | None = None
    flops: int | None = None
    mem_bytes: int | None = None
    device_ns: int | None = None

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.duration_ns

    @property
    def duration_ms(self) -> float:
        return self.duration_ns / 1e6


_FIELDS = tuple(f.name for f in fields(ProfileEvent))


def input_shapes(text: str) -> list[list[int]] | None:
    """The positional inputs' shapes of a shape text, as the reference's ``input_shapes``.

    ``"[(32, 4), mask=(32, 1)] -> (32, 16)"`` gives ``[[32, 4]]`` (``"[(32,) int64]"``
    ``[[32]]``: a dtype after a shape is not part of it): keyword inputs and inputs
    that are tuples or lists of arrays (no ``.shape`` of their own) are left out, as the
    reference leaves them out. ``None`` for an empty text (no shapes recorded).
    """
    if not text:
        return None
    inputs = text.split(" -> ", 1)[0]
    if not (inputs.startswith("[") and inputs.endswith("]")):
        return None
    shapes, depth, start = [], 0, 1
    for i, ch in enumerate(inputs):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch in ",]" and depth == 0 and i > start:
            item = inputs[start:i].strip()
            start = i + 1
            if item.startswith("(") and item.count("(") == 1:  # a plain shape, not nested
                item = item[: item.rindex(")") + 1]  # (less a dtype after it: "(3,) int64")
                shapes.append([int(d) for d in item[1:-1].split(",") if d.strip()])
    return shapes


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
        that had not finished when the batch was read). ``tid`` is the OS thread id
        (``threading.get_native_id()``), as in the exports.
    thread : numpy.ndarray
        The thread index: each row's index into the run's thread table (the store's column).
    kind, name, path : numpy.ndarray of str
        Decoded lazily from interned ids.
    shapes, flops, bytes, mem_bytes, device_ns, metadata
        Optional columns, ``None`` when their option was off.
    thread_names : dict
        Thread id -> thread name.
    process_id : int
        The process that recorded the rows (``os.getpid()`` for a live run, the file's for a
        loaded one).
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
        process_id: int | None = None,
    ):
        n = len(cols["start_ns"])
        self.start_ns = cols["start_ns"]
        self.dur_ns = cols["dur_ns"]
        self.key = cols["key"].astype(np.int64, copy=False)
        self.depth = cols["depth"]
        self.parent = parent
        self.row = np.arange(first_row, first_row + n, dtype=np.int64)
        tid_table = np.array([t for t, _ in threads] or [0], dtype=np.int64)
        self.thread = cols["thread"]
        self.tid = tid_table[cols["thread"]] if n else np.empty(0, np.int64)
        self.keys = keys
        self.shape_table = shapes
        self.thread_names = {t: name for t, name in threads}
        self.shape_id = cols.get("shape")
        self.flops = cols.get("flops")
        self.bytes = cols.get("bytes")
        self.mem_bytes = cols.get("mem_bytes")
        self.device_ns = cols.get("device_ns")
        self._metadata = metadata
        self.process_id = os.getpid() if process_id is None else int(process_id)
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

    def parent_index(self) -> tuple[np.ndarray, np.ndarray]:
        """Each row's parent as an index into this batch, and whether that parent is in it."""
        idx = self.parent - (self.row[0] if len(self) else 0)
        return idx, (self.parent >= 0) & (idx >= 0) & (idx < len(self))

    @property
    def self_ns(self) -> np.ndarray:
        """Self time of each row: its duration minus its children's in this batch (int64 ns;
        the summary's rule, :func:`everyo.profiler.analysis.aggregates.children_ns`)."""
        if "self_ns" not in self._cache:
            from everyo.profiler.analysis.aggregates import (
                children_ns,  # (loads the compiled loops)
            )

            idx, ok = self.parent_index()
            self._cache["self_ns"] = self.dur_ns - children_ns(self.dur_ns, np.where(ok, idx, -1))
        return self._cache["self_ns"]

    def _input_shapes(self) -> list | None:
        """``input_shapes`` of each interned shape text (parsed once per distinct text)."""
        if "input_shapes" not in self._cache:
            self._cache["input_shapes"] = [input_shapes(t) for t in self.shape_table]
        return self._cache["input_shapes"]

    def event(self, i: int) -> ProfileEvent:
        """Row ``i`` of this batch as a :class:`ProfileEvent`."""
        return self._events(i, i + 1)[0]

    def metadata_of(self, i: int) -> dict:
        """``ProfileEvent.metadata`` of row ``i`` of this batch (a new dict)."""
        meta = self._metadata.get(int(self.row[i])) if self._metadata else None
        meta = dict(meta) if meta else {}
        if self.shape_id is not None:
            sid = int(self.shape_id[i])
            parsed = self._input_shapes()[sid] if sid >= 0 else None
            if parsed is not None:
                meta.setdefault("input_shapes", [list(s) for s in parsed])
            elif sid < 0 and self.keys[self.key[i]][0] == "module":
                meta.setdefault("input_shapes", [])  # called without array inputs
        return meta

    def _events(self, lo: int, hi: int) -> list[ProfileEvent]:
        """Rows ``lo:hi`` as events; columns become Python lists once, not once per row.

        The cyclic garbage collector is paused meanwhile: the events hold no reference cycles,
        and the collections that hundreds of thousands of new dicts would trigger cost more than
        building them (about half the time for 200,000 events).
        """
        paused = gc.isenabled()
        gc.disable()
        try:
            return self._build_events(lo, hi)
        finally:
            if paused:
                gc.enable()

    def _build_events(self, lo: int, hi: int) -> list[ProfileEvent]:
        part = slice(lo, max(lo, min(hi, len(self))))
        n = part.stop - part.start
        parsed = self._input_shapes() if self.shape_id is not None else []
        texts = self.shape_table
        pid, user, shapes_on = self.process_id, self._metadata, self.shape_id is not None

        def column(values):
            return [None] * n if values is None else values[part].tolist()

        out = []
        new, names = object.__new__, _FIELDS
        for row, key, sid, start, dur, depth, parent, tid, flops, mem, dev in zip(
            self.row[part].tolist(),
            self.key[part].tolist(),
            [-1] * n if self.shape_id is None else self.shape_id[part].tolist(),
            *(column(c) for c in (self.start_ns, self.dur_ns, self.depth, self.parent, self.tid)),
            *(column(c) for c in (self.flops, self.mem_bytes, self.device_ns)),
        ):
            meta = user.get(row) if user else None
            meta = dict(meta) if meta else {}  # a copy: editing it must not edit the run
            kind, name, path = self.keys[key]
            if sid >= 0 and parsed[sid] is not None:
                meta.setdefault("input_shapes", [list(s) for s in parsed[sid]])
            elif kind == "module" and shapes_on:
                meta.setdefault("input_shapes", [])  # called without array inputs
            shapes = (texts[sid] if sid >= 0 else "") if shapes_on else None
            # a frozen dataclass filled without its __init__ (which costs twice as much)
            event = new(ProfileEvent)
            event.__dict__.update(
                zip(
                    names,
                    (name, dur, start, pid, tid, meta, kind, path, depth, parent, row, shapes)
                    + (flops, mem, dev),
                )
            )
            out.append(event)
        return out

    def events(self) -> list[ProfileEvent]:
        """Every row as a :class:`ProfileEvent`, in row (completion) order."""
        return self._events(0, len(self))
