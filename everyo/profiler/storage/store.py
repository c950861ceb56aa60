"""The columnar event store: one row per completed event, in chunked NumPy arrays.

Writers (the profiled threads) hand over whole buffers of finished events with
:meth:`EventStore.append`; readers copy rows ``[cursor, n)`` with :meth:`EventStore.read`. Rows
below ``n`` never change once published (``n`` is bumped after the copy), so a reader holds the
lock only long enough to read ``n`` and the chunk list.

Core columns (24 bytes per event)::

    start_ns   int64   start, relative to the run start
    dur_ns     int64   duration
    key        int32   interned (kind, name, path)
    thread     int16   thread index: row of the thread table (``threads``), not a thread id;
                       int32 from the 32,768th thread on (the column is widened in place)
    depth      int16   nesting depth on its thread

Rows are in completion order, per thread a post-order of the call tree, which is what makes a
parent column unnecessary (``Run`` derives parents from ``thread`` and ``depth``).

Optional columns exist only when their option is on: ``shape`` (int32 interned shape string),
``flops``/``bytes`` (int64, ``record_ops``), ``mem_bytes`` (int64, ``profile_memory``),
``device_ns`` (int64, CUDA timing). Metadata dicts are sparse: a ``{row: dict}`` map.
"""

from __future__ import annotations

import mmap
import sys
import threading

import numpy as np

from everyo.errors import EveryOProfilerError

CORE_COLUMNS = (
    ("start_ns", np.int64),
    ("dur_ns", np.int64),
    ("key", np.int32),
    ("thread", np.int16),
    ("depth", np.int16),
)
OPTIONAL_COLUMNS = {
    "shape": np.int32,
    "flops": np.int64,
    "bytes": np.int64,
    "mem_bytes": np.int64,
    "device_ns": np.int64,
}
MAX_KEYS = 1 << 24  # key ids, depth and shape ids share one int while buffered (packing.pack)
MAX_SHAPES = (1 << 22) - 1
_FIRST_CHUNK = 4096
_MAX_CHUNK = 1 << 18
_MAPPED_BYTES = 256 * 1024  # columns from this size up get a memory mapping of their own
_META_ENTRY_BYTES = 64  # the store's {row: dict} slot and its int key
# an interned key or shape: its tuple (keys), its list slot, its dict entry with hash-table slack
_TABLE_ENTRY_BYTES = 120


def table_entry_bytes(*texts: str) -> int:
    """Bytes one interned key or shape holds: its strings, its tuple and the two tables' entries
    (the kind of a key is one of a few shared strings, counted anyway: the bound errs high)."""
    return _TABLE_ENTRY_BYTES + sum(sys.getsizeof(t) for t in texts)


def metadata_bytes(meta: dict) -> int:
    """Bytes one event's metadata dict holds: the dict, its values and the store's entry.

    Keys are usually shared strings (the same few names on every event) and are not counted;
    values are counted shallowly.
    """
    return _META_ENTRY_BYTES + sys.getsizeof(meta) + sum(sys.getsizeof(v) for v in meta.values())


def _column(capacity: int, dtype) -> np.ndarray:
    """An uninitialised column. A large one is a private anonymous mapping of its own, which the
    OS gets back the moment the run is freed: from the C heap, freed columns of evicted runs stay
    in the process (the allocator keeps them for reuse), so its size would outgrow the budget."""
    nbytes = capacity * np.dtype(dtype).itemsize
    if nbytes < _MAPPED_BYTES:
        return np.empty(capacity, dtype)
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype)


def _post_ordered(start: np.ndarray, end: np.ndarray, depth: np.ndarray) -> bool:
    """The rows are already in post-order (by end, deeper first, then start): the order
    ``from_columns`` sorts them into, found without sorting (the sort's index arrays were a
    third of the peak memory of a load)."""
    if len(start) < 2:
        return True
    if (end[:-1] > end[1:]).any():
        return False
    tie = np.flatnonzero(end[:-1] == end[1:])
    if (depth[tie] < depth[tie + 1]).any():
        return False
    tie = tie[depth[tie] == depth[tie + 1]]
    return not (start[tie] > start[tie + 1]).any()


class _Chunk:
    __slots__ = ("cols", "capacity", "base")

    def __init__(self, dtypes: dict, capacity: int, base: int):
        self.cols = {name: _column(capacity, dtype) for name, dtype in dtypes.items()}
        self.capacity = capacity
        self.base = base  # its first row


class EventStore:
    """Append-only columnar storage of completed events.

    Parameters
    ----------
    optional : iterable of str
        Names of the optional columns to allocate (see the module docstring).
    """

    def __init__(self, optional=()):
        unknown = set(optional) - set(OPTIONAL_COLUMNS)
        if unknown:
            raise ValueError(f"unknown optional columns {sorted(unknown)}")
        self.dtypes = dict(CORE_COLUMNS)
        for name in OPTIONAL_COLUMNS:
            if name in optional:
                self.dtypes[name] = OPTIONAL_COLUMNS[name]
        self.columns = tuple(self.dtypes)
        self.keys: list[tuple[str, str, str]] = []  # key id -> (kind, name, path)
        self._key_ids: dict[tuple[str, str, str], int] = {}
        self.shapes: list[str] = []  # shape id -> "[(32, 4)] -> (32, 16)"
        self._shape_ids: dict[str, int] = {}
        self.threads: list[tuple[int, str]] = []  # thread index -> (thread id, thread name)
        self.on_new_thread = None  # called after add_thread (the stack sampler sets it)
        self._thread_events: list[int] = []  # thread index -> rows appended for that thread
        self._unpublished: list | tuple = ()  # metadata rows of an append not yet published
        self.metadata: dict[int, dict] = {}
        self.metadata_nbytes = 0  # what the metadata dicts hold (see metadata_bytes)
        self.tables_nbytes = 0  # what the interned keys and shapes hold (see table_entry_bytes)
        self._chunks: list[_Chunk] = []
        self._n = 0
        self._lock = threading.Lock()

    # -- interning (cheap, called once per distinct value) ---------------------------------
    def intern_key(self, kind: str, name: str, path: str = "") -> int:
        """Return the id of ``(kind, name, path)``, adding it on first use."""
        k = (kind, name, path)
        kid = self._key_ids.get(k)
        if kid is None:
            with self._lock:
                kid = self._key_ids.get(k)
                if kid is None:
                    kid = len(self.keys)
                    if kid >= MAX_KEYS:
                        raise EveryOProfilerError(
                            f"more than {MAX_KEYS:,} distinct event names in one run: name "
                            "regions with a few fixed names and put varying values in metadata"
                        )
                    self.keys.append(k)
                    self._key_ids[k] = kid
                    self.tables_nbytes += table_entry_bytes(kind, name, path)
        return kid

    def intern_shape(self, text: str) -> int:
        with self._lock:
            sid = self._shape_ids.get(text)
            if sid is None:
                if len(self.shapes) >= MAX_SHAPES:
                    raise EveryOProfilerError(
                        f"more than {MAX_SHAPES:,} distinct shapes in one run: profile with "
                        "record_shapes=False"
                    )
                sid = self._shape_ids[text] = len(self.shapes)
                self.shapes.append(text)
                self.tables_nbytes += table_entry_bytes(text)
            return sid

    def add_thread(self, ident: int, name: str) -> int:
        """A new row of the thread table; its index. From the 32,768th thread on, the thread
        column holds int32 (its rows so far are widened in place)."""
        with self._lock:
            index = len(self.threads)
            if index > np.iinfo(self.dtypes["thread"]).max:
                self._widen("thread", np.int32)
            self.threads.append((ident, name))
            self._thread_events.append(0)
        if self.on_new_thread is not None:  # (the stack sampler: a thread to sample now)
            self.on_new_thread()
        return index

    def thread_events(self, index: int) -> int:
        """How many rows have been appended for thread ``index`` (``append(thread=index)``)."""
        counts = self._thread_events
        return counts[index] if 0 <= index < len(counts) else 0

    def _widen(self, name: str, dtype) -> None:
        # (under the lock) readers copy whole columns, so a chunk's column is swapped whole
        for chunk in self._chunks:
            wide = _column(chunk.capacity, dtype)
            wide[:] = chunk.cols[name]
            chunk.cols[name] = wide
        self.dtypes = {**self.dtypes, name: dtype}

    # -- writing ---------------------------------------------------------------------------
    def append(
        self, columns: dict, metadata: dict | None = None, *, thread: int | None = None
    ) -> int:
        """Append rows given as equal-length arrays per column; return the first new row.

        ``metadata`` maps offsets within this batch to dicts. ``thread``: the rows are that
        thread's next events (counted by :meth:`thread_events` as they are published).
        """
        k = len(columns["start_ns"])
        if k == 0:
            return self._n
        counts = self._thread_events
        with self._lock:
            # rows go into the chunks from row _n on; nothing but _n (and the thread's count)
            # says they exist, so an append interrupted before its last lines leaves the store
            # as it was (the next one writes over those rows)
            first = self._n
            for row in self._unpublished:  # metadata an interrupted append left behind
                self.metadata.pop(row, None)
            done = 0
            while done < k:
                chunk = self._chunk_for(first + done)
                at = first + done - chunk.base
                take = min(k - done, chunk.capacity - at)
                for name, col in chunk.cols.items():
                    src = columns.get(name)
                    col[at : at + take] = -1 if src is None else src[done : done + take]
                done += take
            held = 0
            if metadata:
                self._unpublished = [first + off for off in metadata]
                for off, meta in metadata.items():
                    self.metadata[first + off] = meta
                    held += metadata_bytes(meta)
            # publish last, in statements without a call (no signal lands between them)
            if thread is not None:
                counts[thread] += k
            self.metadata_nbytes += held
            self._unpublished = ()
            self._n = first + k  # readers only look below _n
            return first

    def _chunk_for(self, row: int) -> _Chunk:
        """The chunk that holds ``row`` (the next row to write), made when none does."""
        for chunk in reversed(self._chunks):  # (the last, or the one before it when an
            if chunk.base <= row:  # interrupted append made a chunk it did not publish into)
                if row < chunk.base + chunk.capacity:
                    return chunk
                break
        last = self._chunks[-1] if self._chunks else None
        base = last.base + last.capacity if last is not None else 0
        cap = min(_FIRST_CHUNK << len(self._chunks), _MAX_CHUNK)
        chunk = _Chunk(self.dtypes, cap, base)
        self._chunks.append(chunk)
        return chunk

    def add_column(self, name: str) -> None:
        """Add optional column ``name`` to a store already holding rows (-1 for them)."""
        if name not in OPTIONAL_COLUMNS:
            raise ValueError(f"unknown optional column {name!r}")
        with self._lock:
            if name in self.dtypes:
                return
            dtype = OPTIONAL_COLUMNS[name]
            for chunk in self._chunks:
                chunk.cols[name] = np.full(chunk.capacity, -1, dtype)
            self.dtypes = {**self.dtypes, name: dtype}
            self.columns = tuple(self.dtypes)

    def set_values(self, column: str, rows: np.ndarray, values: np.ndarray) -> None:
        """Fill an optional column after the fact (device times resolved at stop)."""
        with self._lock:
            for chunk in self._chunks:
                sel = (rows >= chunk.base) & (rows < min(chunk.base + chunk.capacity, self._n))
                chunk.cols[column][rows[sel] - chunk.base] = values[sel]

    # -- reading ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def read(self, start: int = 0, stop: int | None = None, columns=None) -> dict:
        """Copy rows ``[start, stop)`` of every column, or of ``columns`` (stop defaults to the
        rows published now)."""
        with self._lock:
            n = self._n
            chunks = list(self._chunks)
            dtypes = self.dtypes
        stop = n if stop is None else min(stop, n)
        start = max(0, min(start, stop))
        out = {}
        for name, dtype in dtypes.items():
            if columns is not None and name not in columns:
                continue
            parts = []
            base = 0
            for chunk in chunks:
                lo, hi = max(start, base), min(stop, base + chunk.capacity)
                if lo < hi:
                    parts.append(chunk.cols[name][lo - base : hi - base])
                base += chunk.capacity
            out[name] = np.concatenate(parts) if parts else np.empty(0, dtype)
        return out

    @property
    def nbytes(self) -> int:
        """Bytes held by the published rows: their columns, their metadata dicts and the interned
        keys and shapes they name (column capacity not yet used is not counted)."""
        return self._n * self.row_bytes + self.metadata_nbytes + self.tables_nbytes

    @property
    def allocated_bytes(self) -> int:
        return sum(col.nbytes for c in self._chunks for col in c.cols.values())

    @property
    def row_bytes(self) -> int:
        return sum(np.dtype(d).itemsize for d in self.dtypes.values())

    @property
    def core_row_bytes(self) -> int:
        return sum(np.dtype(d).itemsize for _, d in CORE_COLUMNS)

    @classmethod
    def from_columns(
        cls, columns: dict, keys, shapes=(), threads=(), metadata=None, *, adopt: bool = False
    ):
        """Build a store from whole columns (loading a file, synthetic runs).

        Rows may come in any order: they are put in post-order (by end time, deeper first),
        the order the profiler writes and parents are derived from. ``metadata`` maps input row
        indices to dicts. ``adopt``: the columns are the caller's to give (a reader's own):
        those already in post-order and of the store's types become the store's columns as
        they are, not copied (a load's peak memory held them twice).
        """
        start = np.asarray(columns["start_ns"], np.int64)
        end = start + np.asarray(columns["dur_ns"], np.int64)
        depth = np.asarray(columns["depth"])
        if not _post_ordered(start, end, depth):  # (a file's rows usually are: no sort)
            order = np.lexsort((start, -depth.astype(np.int64), end))
            columns = {k: np.asarray(v)[order] for k, v in columns.items()}
            new_row = np.empty(len(order), np.int64)
            new_row[order] = np.arange(len(order))
            metadata = {int(new_row[r]): m for r, m in (metadata or {}).items()}
        del start, end, depth
        store = cls(optional=[c for c in OPTIONAL_COLUMNS if c in columns])
        for kind, name, path in keys:
            store.intern_key(kind, name, path)
        for text in shapes:
            store.intern_shape(text)
        store.threads = list(threads)
        store._thread_events = [0] * len(store.threads)
        if len(store.threads) > np.iinfo(np.int16).max + 1:
            store._widen("thread", np.int32)
        if not (adopt and store._adopt(columns, metadata)):
            store.append(columns, metadata)
        return store

    def _adopt(self, columns: dict, metadata) -> bool:
        """Take ``columns`` as this empty store's one chunk, when each is a writable contiguous
        array of its column's type, all of one length; False (nothing done) otherwise."""
        n = len(columns["start_ns"])
        for name, dtype in self.dtypes.items():
            col = columns.get(name)
            if not (
                isinstance(col, np.ndarray)
                and col.dtype == dtype
                and col.ndim == 1
                and len(col) == n
                and col.flags.c_contiguous
                and col.flags.writeable
            ):
                return False
        if n == 0 or self._n:
            return False
        chunk = _Chunk({}, 0, 0)
        chunk.cols = {name: columns[name] for name in self.dtypes}
        chunk.capacity = n
        with self._lock:
            self._chunks.append(chunk)
            for row, meta in (metadata or {}).items():
                self.metadata[row] = meta
                self.metadata_nbytes += metadata_bytes(meta)
            self._n = n
        return True
