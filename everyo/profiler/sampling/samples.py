"""``SampleStore``: a run's sampled Python stacks, columnar and interned.

One row per sample of one thread::

    t_ns     int64   when the stack was read, relative to the run start (the events' clock)
    tid      int64   OS thread id (``threading.get_native_id()``: the events' ``tid``)
    stack    int32   interned stack id (see below)
    wall_ns  int64   wall time the sample stands for (since that thread's previous sample)
    cpu_ns   int64   CPU time the thread used over the same span

Frames are interned as ``(file, line, function)``; a stack is a node of a trie,
``stacks[id] = (parent stack id or -1, frame id)``, outermost frame at the root, so a
sample costs one int of the sample row and a deep loop's stacks share their common part.
"""

from __future__ import annotations

import threading

import numpy as np

COLUMNS = (
    ("t_ns", np.int64),
    ("tid", np.int64),
    ("stack", np.int32),
    ("wall_ns", np.int64),
    ("cpu_ns", np.int64),
)
_ROW_BYTES = sum(np.dtype(d).itemsize for _, d in COLUMNS)
_FRAME_BYTES = 200  # a (file, line, function) tuple and its dict entry; strings are shared
_STACK_BYTES = 120  # a (parent, frame) tuple and its dict entry


class SampleStore:
    """Append-only sample rows plus the interned frames and stacks they point to."""

    def __init__(self):
        self.frames: list[tuple[str, int, str]] = []
        self.stacks: list[tuple[int, int]] = []
        self._frame_ids: dict = {}
        self._held: list = []  # the code objects whose ids key _frame_ids
        self._stack_ids: dict[tuple[int, int], int] = {}
        self._parts: list[dict] = []
        self._n = 0
        self._lock = threading.Lock()
        # the bytes the running sampler holds beside this store (its stack look-up tables),
        # counted by the memory budget while it runs (issue 44: they were not)
        self.sampler_bytes = None

    # -- interning (the sampler thread only) ----------------------------------------------
    def frame_id(self, key, file: str, line: int, function: str, hold=None) -> int:
        """The id of a frame; ``key`` is any hashable that identifies it. The sampler passes
        ``(id(code object), line)`` and the code object as ``hold``, kept as long as the store
        so that its id is never another code object's (a code object's own hash reads its
        constants and names each time: several microseconds for a large function)."""
        fid = self._frame_ids.get(key)
        if fid is None:
            fid = self._frame_ids[key] = len(self.frames)
            self.frames.append((file, int(line), function))
            if hold is not None:
                self._held.append(hold)
        return fid

    def stack_id(self, parent: int, frame: int) -> int:
        """The id of the stack ``parent`` + ``frame`` (``parent`` -1: an outermost frame)."""
        k = (parent, frame)
        sid = self._stack_ids.get(k)
        if sid is None:
            sid = self._stack_ids[k] = len(self.stacks)
            self.stacks.append(k)
        return sid

    # -- rows -----------------------------------------------------------------------------
    def append(self, columns: dict) -> None:
        """Append rows given as equal-length sequences per column (names of ``COLUMNS``)."""
        part = {name: np.asarray(columns[name], dtype) for name, dtype in COLUMNS}
        k = len(part["t_ns"])
        if k == 0:
            return
        with self._lock:
            self._parts.append(part)
            self._n += k
            if len(self._parts) > 64:  # keep reads cheap: merge the small parts
                self._parts = [_concat(self._parts)]

    def __len__(self) -> int:
        return self._n

    def read(self) -> dict:
        """Every row so far, one array per column (a copy)."""
        with self._lock:
            parts = list(self._parts)
        return _concat(parts)

    def read_since(self, start: int) -> tuple[dict, int]:
        """Rows from row ``start`` on (a copy) and the row count to pass next time: a live
        reader pays for the new rows, not for all of them."""
        with self._lock:
            parts, n = list(self._parts), self._n
        out, seen = [], 0
        for part in parts:
            k = len(part["t_ns"])
            if seen + k > start:
                lo = max(0, start - seen)
                out.append({name: part[name][lo:] for name, _ in COLUMNS})
            seen += k
        return _concat(out), max(n, start)

    @property
    def nbytes(self) -> int:
        """Rows plus interned frames and stacks, and the running sampler's look-up tables
        (what the memory budget counts)."""
        extra = self.sampler_bytes
        return (
            self._n * _ROW_BYTES
            + len(self.frames) * _FRAME_BYTES
            + len(self.stacks) * _STACK_BYTES
            + (extra() if extra is not None else 0)
        )

    def frames_of(self, stack: int) -> list[int]:
        """Frame ids of ``stack``, outermost first."""
        out = []
        while stack >= 0:
            stack, frame = self.stacks[stack]
            out.append(frame)
        out.reverse()
        return out

    # -- files ----------------------------------------------------------------------------
    def to_json(self) -> dict:
        cols = self.read()
        return {
            "frames": [list(f) for f in self.frames],
            "stacks": [list(s) for s in self.stacks],
            "columns": {name: cols[name].tolist() for name, _ in COLUMNS},
        }

    @classmethod
    def from_json(cls, data: dict) -> SampleStore:
        """The store :meth:`to_json` wrote; a damaged part is a ``ValueError`` saying which
        (``load`` reports it with the file's name)."""
        store = cls()
        try:
            store.frames = [(str(f), int(ln), str(fn)) for f, ln, fn in data["frames"]]
            store.stacks = [(int(p), int(fr)) for p, fr in data["stacks"]]
            cols = data["columns"]
            store.append(_checked_columns({name: cols[name] for name, _ in COLUMNS}))
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"the samples are damaged ({exc!r})") from None
        nf, ns = len(store.frames), len(store.stacks)
        if any(not (-1 <= p < i) or not (0 <= fr < nf) for i, (p, fr) in enumerate(store.stacks)):
            raise ValueError("a sample stack points to a frame or stack that is missing")
        stack = store.read()["stack"]
        if len(stack) and (stack.min() < 0 or stack.max() >= ns):
            raise ValueError("a sample points to a stack that is missing")
        store._frame_ids = {i: i for i in range(nf)}  # (a loaded store is not added to)
        store._stack_ids = {s: i for i, s in enumerate(store.stacks)}
        return store


_SPAN_LIMIT = 2**50  # ns a sample may stand for, or its time (13 days: a run's length or less)


def _checked_columns(cols: dict) -> dict:
    """A loaded file's sample columns: whole numbers, all of one length, times and spans from
    0 to ``_SPAN_LIMIT`` (issue 44: unequal lengths loaded and ``hot_lines()`` raised a bare
    IndexError; a ``wall_ns`` of 1e30 a bare OverflowError; negative or 2**62 spans loaded)."""
    out = {}
    for name, dtype in COLUMNS:
        values = np.asarray(cols[name])
        if values.ndim != 1 or (len(values) and values.dtype.kind not in "iu"):
            raise ValueError(f"column {name!r} is not a list of whole numbers")
        out[name] = values.astype(dtype) if len(values) else np.empty(0, dtype)
        if len(values) and name in ("t_ns", "wall_ns", "cpu_ns"):
            lo = -_SPAN_LIMIT if name == "t_ns" else 0  # (a time before the run's origin)
            if values.min() < lo or values.max() > _SPAN_LIMIT:
                raise ValueError(
                    f"column {name!r} holds {int(values.min())} to {int(values.max())}: from "
                    f"{lo} to {_SPAN_LIMIT} ns is expected"
                )
    lengths = {name: len(v) for name, v in out.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"the columns differ in length ({lengths})")
    return out


def _concat(parts: list[dict]) -> dict:
    if not parts:
        return {name: np.empty(0, dtype) for name, dtype in COLUMNS}
    return {name: np.concatenate([p[name] for p in parts]) for name, _ in COLUMNS}
