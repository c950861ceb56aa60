"""The recorder: what runs on every module call, region, op and autograd node while profiling.

A :class:`Recorder` is the object installed as ``hooks.active`` while a :class:`Profiler` runs.
It receives everything it writes to explicitly: the store, the clock, the origin of the run's
times and the recording options. Each thread keeps its own :class:`ThreadState` (nesting depth,
module-path map, a flat buffer of finished events). Finishing an event is one extend of its
thread's buffer; buffers go into the store in bulk (every ``FLUSH_EVENTS`` events or
``FLUSH_NS`` of time, and at stop), so live readers see events within about 50 ms.

No parent ids are recorded: events finish in post-order on their thread, so an event's parent is
the next event of that thread one level up (see ``Run``). The only rule that keeps this true is
that an event whose descendant was recorded is recorded too (``ThreadState.keep_below``, and an
event is appended before its thread's state is restored to its parent's).

The module-call path (``module_call``) is the hottest: it comes from the compiled
``everyo.profiler._crecorder`` where that extension was built (with regions and backward groups),
else from the pure-Python ``_PyModuleCall`` below, which does exactly the same
(``IMPLEMENTATION`` says which one runs; ``EVERYO_PURE_PYTHON=1`` forces the Python one). The
compiled part calls back only the methods in ``C_CALLBACKS``; ARCHITECTURE.md's "Recording"
section has the rules (identity, interrupts, nothing lost) both paths keep.
"""

from __future__ import annotations

import sys
import threading
import weakref

import numpy as np

from everyo.profiler import hooks, regions
from everyo.profiler.gpu import CudaTimer
from everyo.profiler.packing import (
    BUFFER_FIELDS,
    DEPTH_BITS,
    KEY_BITS,
    SHAPE_SHIFT,
    pack,
)
from everyo.profiler.regions import RegionHooks
from everyo.profiler.shapes import format_shapes, shape_key

C_CALLBACKS = (
    "_new_state",  # a thread's first event: its ThreadState
    "_root_call",  # an outermost module whose keymap is not made yet (or CUDA may start)
    "_unlisted",  # a module missing from the keymap
    "_shape_id",  # a shape not in the single-input cache
    "_failed",  # a call that raised, while not recording everything
    "_emit",  # a module event while not recording everything (warmup, schedule, stopped)
    "_emit_region",  # a region or backward group while not recording everything
    "_flush",  # a thread's buffer is full or old
    "_region_key",  # a (kind, name) seen for the first time
    "_region_too_deep",  # the depth limit's error
    "_bw_key",  # a backward group's key seen for the first time
)
"""The recorder's Python methods the compiled part calls by name: with
``regions.close_out_of_order`` and ``regions.close_abandoned`` (bound at import), the whole of
what C asks of Python. Everything on the common path (record, append, cache hits) stays in C;
``tests/profiler/test_recording_contract.py`` checks the C source against this list."""

FLUSH_EVENTS = 2048
FLUSH_NS = 50_000_000
_PLAIN, _SHAPES = 1, 2  # Recorder._mode while recording everything, without / with shapes


def _entry(key: int, name: str, path: str) -> tuple:
    """A module's record for one outermost module: (key, scope token, [last shapes]).

    The last item holds one tuple ``((input shape, output shape, depth), packed int)`` of the
    module's last single-input call, replaced whole (so threads never see half of one).
    """
    return key, (name, path), [(None, 0)]


def check_call_args(args, kwargs) -> tuple:
    """``module_call``'s ``(args, kwargs)`` as the compiled recorder takes them: a tuple, and
    ``None`` or a mapping (made a dict, ``{}`` for ``None``); anything else is a
    ``TypeError``, on both paths."""
    if not isinstance(args, tuple):
        raise TypeError(f"module_call: args must be a tuple, not {type(args).__name__}")
    if kwargs is None:
        return args, {}
    if type(kwargs) is dict:
        return args, kwargs
    if not hasattr(kwargs, "keys"):
        raise TypeError(
            f"module_call: kwargs must be a mapping or None, not {type(kwargs).__name__}"
        )
    return args, {k: kwargs[k] for k in kwargs.keys()}


def _single_shapes(a, out, depth: int):
    """What the single-input shape cache compares: ``(input shape, output shape, depth)`` when
    both shapes are tuples, else ``None`` (not cached: a list of tensors, no shape, or a
    ``.shape`` that raised)."""
    try:
        shapes = (getattr(a, "shape", None), getattr(out, "shape", None), depth)
    except Exception:  # noqa: BLE001 - a user's property failing: no shape, never an error
        return None
    return shapes if type(shapes[0]) is tuple and type(shapes[1]) is tuple else None


class _PyThreadState:
    """One thread's recording state (the compiled ``ThreadState`` has the same fields)."""

    __slots__ = (
        "buf",
        "meta",
        "depth",
        "scope",
        "keymap",
        "root",
        "index",
        "flush_at",
        "backward",
        "keep_below",
        "flushed",
        "blocks",
        "open",
    )

    def __init__(self, index: int, flush_at: int):
        self.buf: list[int] = []  # finished events, BUFFER_FIELDS (+ extras) each
        self.meta: list[tuple[int, dict]] = []  # (event index on this thread, metadata)
        self.depth = 0  # open events on this thread
        self.scope = None  # (class name, path) of the innermost running module
        self.keymap = None  # id(module) -> (key, token) for the outermost module running
        self.root = None
        self.index = index  # this thread's row in the store's thread table
        self.flush_at = flush_at
        self.backward = None  # the backward pass running on this thread (regions._Backward)
        self.keep_below = 0  # events shallower than this must be kept (a descendant was)
        self.flushed = 0  # events of this thread already in the store
        self.blocks: list[tuple[int, int, int]] = []  # (thread's event index, store row, count)
        self.open: list = []  # the open regions (regions._Region), innermost last


class _PyModuleCall:
    """The pure-Python module-call path (the compiled ``_crecorder.ModuleCall`` mirrors it)."""

    _thread_state = _PyThreadState  # the class of per-thread records module_call expects

    def _init_thread_storage(self) -> None:
        self._tls = threading.local()

    def _state(self):
        """This thread's record, made on its first event."""
        try:
            return self._tls.s
        except AttributeError:
            return self._new_state()

    def _peek_state(self):
        """This thread's record, or ``None`` before its first event."""
        return getattr(self._tls, "s", None)

    def scope(self):
        """The token autograd nodes store: (class name, path) of the innermost module, or None
        (hook protocol; called for every graph node made while profiling)."""
        try:
            return self._tls.s.scope
        except AttributeError:
            return None

    def _remember_state(self, t) -> None:
        self._tls.s = t

    def _release_thread_storage(self) -> None:
        """(The compiled recorder gives its thread-specific key back at stop.)"""

    def module_call(self, module, forward, args, kwargs):
        """Run ``forward(*args, **kwargs)`` as one module event (hook protocol)."""
        if type(args) is not tuple or type(kwargs) is not dict:
            args, kwargs = check_call_args(args, kwargs)
        try:
            t = self._tls.s
        except AttributeError:
            t = self._new_state()
        keymap = t.keymap
        if keymap is None:
            return self._root_call(t, module, forward, args, kwargs)
        entry = keymap.get(id(module)) or self._unlisted(t, module)
        one = len(args) == 1 and not kwargs  # the common case: a direct call is cheaper
        clock = self._clock
        depth, prev = t.depth, t.scope
        if depth >= self._max_depth:  # the store keeps depth as int16: never wrap silently
            self._region_too_deep(depth)
        # The thread's state changes only in statements without a call (no signal lands inside
        # one) and inside the try, so an interrupt anywhere leaves it as it was before the call.
        start = None
        try:
            t.depth, t.scope = depth + 1, entry[1]
            start = clock()
            out = forward(args[0]) if one else forward(*args, **kwargs)
            end = clock()
        except BaseException:
            t.depth, t.scope = depth, prev
            if start is not None:
                self._failed(t, entry[0], depth, start, prev)
            raise
        t.depth, t.scope = depth, prev
        if t.open and t.open[-1].depth > depth:
            regions.close_abandoned(self, t, depth + 1)
        mode = self._mode  # recording everything (no warmup, no schedule): append, maybe flush
        if mode == _SHAPES:
            # one input: compare the shapes with those of the module's last call (cheaper than
            # hashing them, and a training loop repeats them call after call); only tuple shapes
            a, T = args[0] if one else None, self._tensor
            if not one:
                cur = None
            elif type(a) is T and type(out) is T:  # a Tensor's shape is a property
                cur = (a.data.shape, out.data.shape, depth)
            else:
                cur = _single_shapes(a, out, depth)
            last = entry[2][0]
            if cur is not None and last[0] == cur:
                packed = last[1]
            else:
                packed = pack(entry[0], depth, self._shape_id(args, kwargs, out))
                if cur is not None:
                    entry[2][0] = (cur, packed)
            buf = t.buf
            buf += (start, end, packed)
            if len(buf) >= self._flush_len or end > t.flush_at:
                self._flush(t, end)
        elif mode:
            buf = t.buf
            buf += (start, end, entry[0] | depth << KEY_BITS)
            if len(buf) >= self._flush_len or end > t.flush_at:
                self._flush(t, end)
        else:
            try:
                tail = (self._shape_id(args, kwargs, out),) if self.record_shapes else ()
                self._emit(t, (start, end - start, entry[0], depth), tail, None, end)
            except BaseException:  # (an interrupt in the policy): kept if events inside it were
                if depth < t.keep_below:  # (this path's buffer holds three fields an event)
                    t.buf += (start, end, entry[0] | depth << KEY_BITS)
                    t.keep_below = depth
                raise
        return out


class _RecorderBody(RegionHooks):
    """Implements the hook protocol of :mod:`everyo.profiler.hooks` for one run.

    ``Recorder`` is this plus the fastest module-call path available (``CRecorder`` where the
    extension was built, else ``PythonRecorder``); both record the same events.

    Parameters
    ----------
    store : EventStore
        Where finished events go (its optional columns match the options below).
    clock : callable
        Integer nanoseconds; the events' times are ``clock() - origin_ns``.
    origin_ns : int
        The run's time origin on ``clock`` (``set_origin`` moves it before events exist).
    record_shapes, record_ops : bool
        Shape ids for module and op events; op events with FLOPs and bytes.
    warmup : int
        First recorded events to skip.
    schedule : Schedule or None
        Step windows: ``set_recording`` follows it; every event then goes through ``_emit``.
    gpu : CudaTimer or None
        CUDA event timing from the start (else it starts at the first module call on a CUDA
        tensor when CuPy may be present).
    memory : MemoryTracker or None
        ``profile_memory``'s tracker.
    on_flush : callable or None
        Called after each flush of a thread's events into the store (the budget check).
    """

    def __init__(
        self,
        store,
        *,
        clock,
        origin_ns: int,
        record_shapes: bool = True,
        record_ops: bool = False,
        warmup: int = 0,
        schedule=None,
        gpu=None,
        memory=None,
        on_flush=None,
    ):
        self._init_thread_storage()
        self.store = store
        self._clock = clock
        self.origin_ns = origin_ns
        self.record_shapes = record_shapes
        self.record_ops = record_ops
        self.schedule = schedule
        self.gpu = gpu
        self.memory = memory
        self.on_flush = on_flush
        self.skipped = 0  # events dropped by warmup
        extra = ("shape",) if record_shapes else ()
        extra += ("flops", "bytes") if record_ops else ()
        extra += ("mem_bytes",) if memory is not None else ()
        self._fields = BUFFER_FIELDS + tuple(f for f in extra if f != "shape")
        self._width = len(self._fields)
        self._flush_len = FLUSH_EVENTS * self._width
        self._pad = (-1,) * len(extra)  # the tail of an event without tensors
        if gpu is not None or memory is not None or record_ops:
            self._use_general_path()
        self._cuda_possible = gpu is None and CudaTimer.possible()
        self._threads: list = []
        self._by_thread: dict = {}  # threading.get_ident() -> that thread's record
        self._threads_lock = threading.Lock()
        self._flush_lock = threading.RLock()
        self._roots: dict[int, dict] = {}  # id(outermost module) -> its keymap, while it lives
        self._watched: dict[int, weakref.ref] = {}  # id(module) -> ref whose callback forgets it
        self._pinned: list = []  # keymapped objects without weak references: kept alive
        self._generation = 0  # bumped when a module dies: compiled look-up caches start over
        self._max_depth = regions.MAX_DEPTH  # (read here: tests lower it)
        self._region_keys: dict[tuple[str, str], int] = {}
        self._bw_keys: dict = {}
        self._shape_ids: dict = {}
        self._stopped = False
        self._skip = warmup
        # the inlined path applies: recording, no warmup events left to skip, and no schedule
        # (with a schedule, every event goes through _emit, which keeps ancestors of kept events)
        self._recording = self._fast = False
        self._mode = 0
        self._tensor = hooks.tensor_type  # (None without the engine: shapes by `.shape`)

    @property
    def cuda_timing(self) -> bool:
        return self.gpu is not None

    def set_origin(self, origin_ns: int) -> None:
        """Move the time origin (only meaningful before events are recorded)."""
        self.origin_ns = origin_ns

    def set_recording(self, recording: bool) -> None:
        """Record events from now on (or stop, keeping the ancestors of kept events)."""
        self._recording = recording
        on = recording and self._skip == 0 and self.schedule is None
        self._fast = on and self._width == len(BUFFER_FIELDS)
        # module_call's inlined path: 0 (use _emit), _PLAIN or _SHAPES
        self._mode = 0 if not on else _SHAPES if self.record_shapes else _PLAIN

    def stop(self) -> None:
        """Stop recording and move every thread's buffered events into the store.

        Events still open (a module call or region the stopping code runs inside, another
        thread's) are kept when they close and reach the store then, so that the events recorded
        inside them keep their parent; later events are not recorded. Open regions whose code
        has gone (an interrupt skipped their exit) are closed now. Safe to call again after it
        raised (an interrupt, a ``MemoryError``): each call does what is left.
        """
        if not self._stopped:
            with self._threads_lock:
                states = list(self._by_thread.items())
            frames = sys._current_frames()
            for ident, t in states:
                regions.close_abandoned_on(self, t, frames.get(ident))
            for _, t in states:
                t.keep_below = t.depth
            self.set_recording(False)
            self._stopped = True
        self.flush(all_threads=True)
        self._release_thread_storage()

    # -- per-thread state ----------------------------------------------------------------------
    # _state() (this thread's record, made on first use) and _peek_state() (or None) come from
    # _PyModuleCall (a threading.local) or the compiled ModuleCall (a thread-specific key)

    def _new_state(self):
        """Make this thread's record (its first event) and remember it for this thread.

        After stop the compiled recorder's thread key is given back: a late event on a thread
        that recorded before finds its record here instead of adding a thread to the store.
        (Only then: a running thread's identifier may be one a finished thread had.)"""
        ident = threading.get_ident()
        t = self._by_thread.get(ident) if self._stopped else None
        if t is None:
            cur = threading.current_thread()
            index = self.store.add_thread(threading.get_native_id(), cur.name)
            t = self._thread_state(index, self._clock() + FLUSH_NS)
            with self._threads_lock:
                self._threads.append(t)  # (this list keeps the records alive)
                self._by_thread[ident] = t
        self._remember_state(t)
        return t

    # -- recording -----------------------------------------------------------------------------
    def _emit(self, t, core: tuple, tail: tuple, meta, end: int) -> None:
        """Keep one finished event (subject to warmup and the schedule)."""
        depth = core[3]
        if not self._recording:
            if depth >= t.keep_below:
                return
        elif self._skip:
            self._skip -= 1
            self.skipped += 1
            self.set_recording(True)  # the inlined path resumes once warmup is over
            return
        buf = t.buf
        if self.record_shapes:
            packed = pack(core[2], depth, tail[0])
            tail = tail[1:]
        else:
            packed = pack(core[2], depth)
        index = t.flushed + len(buf) // self._width  # the event's index among the thread's
        # one extend (a flush from another thread never splits a record) and the rule that keeps
        # its ancestors, with no call between them; then its metadata (an interrupt between
        # them loses the metadata, never gives it to another event)
        buf += (core[0], core[0] + core[1], packed) + tail
        t.keep_below = depth
        if meta:
            t.meta.append((index, meta))
        if len(buf) >= self._flush_len or end > t.flush_at or self._stopped:
            self._flush(t, end)  # (after stop: an event open at stop reaches the run now)

    def _emit_region(self, t, start: int, end: int, key: int, depth: int, meta):
        """Keep one finished event without tensors (a region, a backward group)."""
        if self._fast:  # recording everything, nothing beyond the three buffered fields
            buf = t.buf
            index = t.flushed + len(buf) // 3
            buf += (start, end, key | depth << KEY_BITS)
            if meta:
                t.meta.append((index, meta))
            if len(buf) >= self._flush_len or end > t.flush_at:
                self._flush(t, end)
        else:
            self._emit(t, (start, end - start, key, depth), self._pad, meta, end)

    def flush(self, all_threads: bool = False) -> None:
        """Move buffered events into the store: the calling thread's (what a live reader or a
        test on that thread needs), or with ``all_threads`` every thread's (at stop)."""
        now = self._clock()
        if not all_threads:
            self._flush(self._state(), now)
            return
        with self._threads_lock:
            states = list(self._threads)
        for t in states:
            self._flush(t, now)

    def _flush(self, t, now: int) -> None:
        """Move thread state ``t``'s buffered events into the store.

        Events leave the buffer only once the store holds them: a flush that raises (an
        interrupt, a ``MemoryError``) leaves them buffered for the next one, and one interrupted
        after the store took them drops them from the buffer at the next (the store counts each
        thread's events). One flush at a time, so that stop's flush of every thread and a
        thread's own never hand the store the same events twice.
        """
        t.flush_at = now + FLUSH_NS
        with self._flush_lock:
            self._settle(t)
            buf, w, done = t.buf, self._width, t.flushed
            n = len(buf) // w
            if n == 0:
                return
            values = buf[: n * w]  # a copy (bytes from the compiled EventBuffer)
            if type(values) is list:
                rows = np.fromiter(values, np.int64, n * w).reshape(n, w)
            else:
                rows = np.frombuffer(values, np.int64, n * w).reshape(n, w)
            meta = {i - done: m for i, m in list(t.meta) if i < done + n}
            first = self.store.append(self._columns(rows, t.index), meta or None, thread=t.index)
            self._settle(t)
            t.blocks.append((done, first, n))
        if self.on_flush is not None and not self._stopped:
            self.on_flush()

    def _settle(self, t) -> None:
        """Drop from ``t``'s buffer the events the store already holds."""
        flushed = self.store.thread_events(t.index)
        k = (flushed - t.flushed) * self._width
        if k <= 0:
            return
        m = 0
        for i, _ in t.meta:
            if i >= flushed:
                break
            m += 1
        buf = t.buf
        # together: no call between them (a signal lands only after a call or a backward jump)
        del t.meta[:m]
        t.flushed = flushed
        del buf[:k]

    def _columns(self, rows: np.ndarray, thread: int) -> dict:
        """The store's columns of buffered events (one row each)."""
        cols = {name: rows[:, i] for i, name in enumerate(self._fields)}
        packed = cols.pop("packed")
        cols["key"] = packed & ((1 << KEY_BITS) - 1)
        cols["depth"] = (packed >> KEY_BITS) & ((1 << DEPTH_BITS) - 1)
        if self.record_shapes:
            cols["shape"] = (packed >> SHAPE_SHIFT) - 1
        cols["dur_ns"] = cols.pop("end_ns") - cols["start_ns"]
        cols["start_ns"] = cols["start_ns"] - self.origin_ns
        cols["thread"] = np.full(len(rows), thread, np.int64)
        return cols

    # -- module calls (module_call itself: _PyModuleCall or the compiled one) -------------------
    def _root_call(self, t, module, forward, args, kwargs):
        # the outermost module: its named_modules() give the paths of everything inside
        if self._cuda_possible and self.gpu is None and CudaTimer.wanted(args):
            self._start_cuda_timing()
        try:
            t.keymap = self._keymap_for(module)
            t.root = module
            return self.module_call(module, forward, args, kwargs)
        finally:
            t.keymap = t.root = None

    def _start_cuda_timing(self) -> None:
        """The first module call on CUDA tensors: from now on, module events get device times
        (a CPU-only run never pays for the general path just because CuPy is installed)."""
        gpu = CudaTimer.create()
        if gpu is None:
            self._cuda_possible = False
            return
        self.store.add_column("device_ns")
        self.gpu = gpu
        self._use_general_path()

    def _use_general_path(self) -> None:
        """Every module call through ``_module_call_full`` from now on (no per-call check)."""
        self.module_call = self._module_call_full
        self._general = True  # the compiled Module.__call__ then calls module_call by name

    def _failed(self, t, key: int, depth: int, start: int, prev) -> None:
        """Record a call that raised (its caller restored the thread first, as this does)."""
        t.depth, t.scope = depth, prev
        if t.open and t.open[-1].depth > depth:  # regions its exception unwound
            regions.close_abandoned(self, t, depth + 1)
        end = self._clock()
        self._emit(t, (start, end - start, key, depth), self._pad, None, end)

    def _module_call_full(self, module, forward, args, kwargs):
        """module_call with CUDA timing, memory or op columns on (the general, slower path)."""
        args, kwargs = check_call_args(args, kwargs)
        t = self._state()
        if t.keymap is None:
            return self._root_call(t, module, forward, args, kwargs)
        entry = t.keymap.get(id(module)) or self._unlisted(t, module)
        depth, prev = t.depth, t.scope
        if depth >= self._max_depth:
            self._region_too_deep(depth)
        gpu = self.gpu
        start = None
        try:  # (the thread's state changes as in _PyModuleCall.module_call)
            t.depth, t.scope = depth + 1, entry[1]
            marks = gpu.begin(args) if gpu is not None else None
            start = self._clock()
            out = forward(*args, **kwargs)
            end = self._clock()
        except BaseException:
            t.depth, t.scope = depth, prev
            if start is not None:
                self._failed(t, entry[0], depth, start, prev)
            raise
        t.depth, t.scope = depth, prev
        if t.open and t.open[-1].depth > depth:
            regions.close_abandoned(self, t, depth + 1)
        before = t.flushed + len(t.buf) // self._width
        self._emit(
            t,
            (start, end - start, entry[0], depth),
            self._tail(args, kwargs, out, end, (-1, -1)),  # a module's FLOPs: its ops' sum
            None,
            end,
        )
        after = t.flushed + len(t.buf) // self._width
        if marks is not None and after > before:
            gpu.end(marks, (t, after - 1))
        return out

    def _tail(self, args, kwargs, out, end, counts: tuple) -> tuple:
        """The optional columns of a module or op event: shape id, (FLOPs, bytes), memory."""
        tail = (self._shape_id(args, kwargs, out),) if self.record_shapes else ()
        if self.record_ops:
            tail += counts
        if self.memory is not None:
            tail += (self.memory.on_output(out, end - self.origin_ns),)
        return tail

    # Identity: keymaps are keyed by id(module), and an id is only a module's while it lives.
    # Every keymapped module is watched: when it dies, its id leaves every keymap (and _roots)
    # before its memory can be reused, and the generation tells cached look-ups to start over.
    def _keymap_for(self, module, refresh: bool = False) -> dict:
        """The outermost module's keymap: one per outermost module while it lives, made on its
        first call and, with ``refresh``, brought up to date in place with its tree (an entry
        once made stays while its module lives)."""
        keymap = self._roots.get(id(module))
        if keymap is not None and not refresh:
            return keymap
        if keymap is None:
            keymap = {}
            self._watch(module)
            self._roots[id(module)] = keymap
        named = getattr(module, "named_modules", None)
        pairs = named() if named is not None else [("", module)]
        for path, m in pairs:
            if id(m) not in keymap:
                self._add_entry(keymap, m, path)
        if id(module) not in keymap:
            self._add_entry(keymap, module, "")
        return keymap

    def _add_entry(self, keymap: dict, module, path: str):
        name = type(module).__name__
        self._watch(module)
        entry = keymap[id(module)] = _entry(self.store.intern_key("module", name, path), name, path)
        return entry

    def _watch(self, module) -> None:
        mid = id(module)
        if mid in self._watched:
            return
        try:
            self._watched[mid] = weakref.ref(module, lambda _, mid=mid: self._forget(mid))
        except TypeError:  # no weak references: keep it alive, so that its id stays its own
            self._watched[mid] = None
            self._pinned.append(module)

    def _forget(self, mid: int) -> None:
        """A watched module died: no keymap may lend its entry to the next object at its address
        (runs inside that module's deallocation, before its memory is reused)."""
        self._generation += 1
        self._roots.pop(mid, None)
        for keymap in list(self._roots.values()):
            keymap.pop(mid, None)
        self._watched.pop(mid, None)

    def _unlisted(self, t, module):
        # A module called inside the outermost one but not in its keymap: the tree may have
        # changed since the keymap was made, so look again before inventing a path.
        keymap = t.keymap = self._keymap_for(t.root, refresh=True)
        entry = keymap.get(id(module))
        if entry is None:
            parent_path = t.scope[1] if t.scope else ""
            name = type(module).__name__
            path = f"{parent_path}.{name}" if parent_path else name
            entry = self._add_entry(keymap, module, path)
        return entry

    def _shape_id(self, args, kwargs, out) -> int:
        """The interned shape text of one call, cached by a key that tells apart every call
        whose text differs (lists and tuples of tensors included)."""
        T = self._tensor  # a Tensor's shape is a Python property; its array's is C
        try:
            sk = (
                tuple([a.data.shape if type(a) is T else shape_key(a, T) for a in args]),
                tuple([(k, shape_key(v, T)) for k, v in kwargs.items()]) if kwargs else None,
                shape_key(out, T),
            )
            sid = self._shape_ids.get(sk)
        except Exception:  # noqa: BLE001 - an unhashable or failing shape: not cached
            sk = sid = None
        if sid is None:
            sid = self.store.intern_shape(format_shapes(args, kwargs, out))
            if sk is not None:
                self._shape_ids[sk] = sid
        return sid

    # -- CUDA device times ---------------------------------------------------------------------
    def device_times(self) -> tuple[np.ndarray, np.ndarray]:
        """``(store rows, device ns)`` of the module events timed on a GPU (at stop)."""
        if self.gpu is None:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        idents, ns = self.gpu.resolve()
        firsts: dict = {}
        rows = np.array([_row_of(t, i, firsts) for t, i in idents], np.int64)
        keep = rows >= 0
        return rows[keep], ns[keep]


class PythonRecorder(_PyModuleCall, _RecorderBody):
    """The recorder with the pure-Python module-call path."""


_c = hooks.compiled()
if _c is not None:

    class CRecorder(_c.ModuleCall, _RecorderBody):
        """The recorder with the compiled module-call path (``_crecorder.ModuleCall``)."""

        _thread_state = _c.ThreadState
        _backward_type = _c.Backward

    _c.bind_regions(regions.close_out_of_order, regions.close_abandoned)

    Recorder = CRecorder
else:
    CRecorder = None
    Recorder = PythonRecorder

IMPLEMENTATION = "c" if _c is not None else "python"
"""Which module-call path ``Recorder`` uses: ``"c"`` (compiled extension) or ``"python"``."""


def _row_of(t, index: int, firsts: dict) -> int:
    """Store row of the ``index``-th event a thread recorded (-1 if it never reached the store).

    ``firsts`` caches each thread's block start indices (ascending: blocks are appended in
    order), so each lookup is a bisection rather than a scan of every block.
    """
    import bisect

    starts = firsts.get(id(t))
    if starts is None:
        starts = firsts[id(t)] = [b[0] for b in t.blocks]
    i = bisect.bisect_right(starts, index) - 1
    if i >= 0:
        first_index, first_row, n = t.blocks[i]
        if index < first_index + n:
            return first_row + index - first_index
    return -1
