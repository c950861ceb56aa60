"""The hot paths: what runs on every module call, region, op and autograd node while profiling.

Each thread keeps its own state (nesting depth, module-path map, a flat buffer of finished
events). Finishing an event is one ``list +=`` of a tuple; buffers go into the run's columnar
store in bulk (every ``FLUSH_EVENTS`` events or ``FLUSH_NS`` of time, and at stop), so live readers
see events within about 50 ms.

No parent ids are recorded: events finish in post-order on their thread, so an event's parent is
the next event of that thread one level up (see ``Run``). The only rule that keeps this true is
that an event whose descendant was recorded is recorded too (``_ThreadState.low``).
"""

from __future__ import annotations

import threading

import numpy as np

from everyo.profiler.gpu import CudaTimer
from everyo.profiler.packing import (
    BUFFER_FIELDS,
    DEPTH_BITS,
    KEY_BITS,
    SHAPE_SHIFT,
    pack,
)
from everyo.profiler.regions import RegionHooks
from everyo.profiler.shapes import format_shapes

FLUSH_EVENTS = 2048
FLUSH_NS = 50_000_000
_PLAIN, _SHAPES = 1, 2  # Capture._mode while recording everything, without / with shapes


def _entry(key: int, name: str, path: str) -> tuple:
    """A module's record for one outermost module: (key, scope token, [last shapes]).

    The last item holds one tuple ``((input shape, output shape, depth), packed int)`` of the
    module's last single-input call, replaced whole (so threads never see half of one).
    """
    return key, (name, path), [(None, 0)]


class _ThreadState:
    __slots__ = (
        "buf",
        "meta",
        "depth",
        "scope",
        "keymap",
        "root",
        "tid",
        "flush_at",
        "bw",
        "low",
        "flushed",
        "blocks",
        "open",
    )

    def __init__(self, tid: int, now: int):
        self.buf: list[int] = []
        self.meta: list[tuple[int, dict]] = []  # (event index in buf, metadata)
        self.depth = 0  # open events on this thread
        self.scope = None  # (class name, path) of the innermost running module
        self.keymap = None  # id(module) -> (key, token) for the outermost module running
        self.root = None
        self.tid = tid
        self.flush_at = now + FLUSH_NS
        self.bw = None
        self.low = 0  # events shallower than this must be kept (a descendant was)
        self.flushed = 0  # events of this thread already in the store
        self.blocks: list[tuple[int, int, int]] = []  # (thread index, store row, count)
        self.open: list = []  # the open regions (regions._Region), innermost last


class Capture(RegionHooks):
    """Implements the hook protocol of :mod:`everyo.profiler.hooks` (see Profiler)."""

    def _init_capture(self, clock, extra_fields: tuple[str, ...], plain: bool):
        self._clock = clock
        self._fields = BUFFER_FIELDS + tuple(f for f in extra_fields if f != "shape")
        self._width = len(self._fields)
        self._flush_len = FLUSH_EVENTS * self._width
        self._pad = (-1,) * len(extra_fields)  # the tail of an event without tensors
        if not plain:  # GPU, memory or op columns: the general path, without a per-call check
            self.module_call = self._module_call_full
        self._tls = threading.local()
        self._threads: list[_ThreadState] = []
        self._threads_lock = threading.Lock()
        self._roots: dict[int, dict] = {}
        self._region_keys: dict[tuple[str, str], int] = {}
        self._bw_keys: dict = {}
        self._shape_ids: dict = {}
        self._recording = False
        self._over_budget = False
        self._cuda_possible = self._gpu is None and CudaTimer.possible()
        self._skip = 0
        # the inlined path applies: recording, no warmup events left to skip, and no schedule
        # (with a schedule, every event goes through _emit, which keeps ancestors of kept events)
        self._on = self._fast = False
        self._mode = 0
        import sys

        tensor_mod = sys.modules.get("everyo.core.tensor")
        self._tensor = getattr(tensor_mod, "Tensor", None)

    def _set_recording(self, recording: bool) -> None:
        self._recording = recording
        self._on = recording and self._skip == 0 and self.schedule is None
        self._fast = self._on and self._width == len(BUFFER_FIELDS)
        # module_call's inlined path: 0 (use _emit), _PLAIN or _SHAPES
        self._mode = 0 if not self._on else _SHAPES if self.record_shapes else _PLAIN

    # -- per-thread state ----------------------------------------------------------------------
    def _state(self) -> _ThreadState:
        try:
            return self._tls.s
        except AttributeError:
            cur = threading.current_thread()
            t = _ThreadState(
                self.store.add_thread(threading.get_native_id(), cur.name), self._clock()
            )
            self._tls.s = t
            with self._threads_lock:
                self._threads.append(t)
            return t

    # -- recording -----------------------------------------------------------------------------
    def _emit(self, t: _ThreadState, core: tuple, tail: tuple, meta, end: int) -> None:
        """Keep one finished event (subject to warmup and the schedule)."""
        depth = core[3]
        if not self._recording:
            if depth >= t.low:
                return
        elif self._skip:
            self._skip -= 1
            self.run.skipped += 1
            self._set_recording(True)  # the inlined path resumes once warmup is over
            return
        t.low = depth
        buf = t.buf
        if meta:
            t.meta.append((len(buf) // self._width, meta))
        if self.record_shapes:
            packed = pack(core[2], depth, tail[0])
            tail = tail[1:]
        else:
            packed = pack(core[2], depth)
        # one extend: a flush from another thread never splits a record
        buf += (core[0], core[0] + core[1], packed) + tail
        if len(buf) >= self._flush_len or end > t.flush_at:
            self._flush(t, end)

    def _emit_region(self, t: _ThreadState, start: int, end: int, key: int, depth: int, meta):
        """Keep one finished event without tensors (a region, a backward group)."""
        if self._fast:  # recording everything, nothing beyond the three buffered fields
            buf = t.buf
            if meta:
                t.meta.append((len(buf) // 3, meta))
            buf += (start, end, key | depth << KEY_BITS)
            if len(buf) >= self._flush_len or end > t.flush_at:
                self._flush(t, end)
        else:
            self._emit(t, (start, end - start, key, depth), self._pad, meta, end)

    def _flush(self, t: _ThreadState, now: int) -> None:
        buf, meta = t.buf, t.meta
        t.buf, t.meta = [], []
        t.flush_at = now + FLUSH_NS
        w = self._width
        n = len(buf) // w
        if n == 0:
            return
        rows = np.fromiter(buf, np.int64, n * w).reshape(n, w)
        cols = {name: rows[:, i] for i, name in enumerate(self._fields)}
        packed = cols.pop("packed")
        cols["key"] = packed & ((1 << KEY_BITS) - 1)
        cols["depth"] = (packed >> KEY_BITS) & ((1 << DEPTH_BITS) - 1)
        if self.record_shapes:
            cols["shape"] = (packed >> SHAPE_SHIFT) - 1
        cols["dur_ns"] = cols.pop("end_ns") - cols["start_ns"]
        cols["start_ns"] = cols["start_ns"] - self.run._t0
        cols["tid"] = np.full(n, t.tid, np.int16)
        first = self.store.append(cols, dict(meta) if meta else None)
        t.blocks.append((t.flushed, first, n))
        t.flushed += n
        self._check_budget()

    def _check_budget(self) -> None:
        """Hold the registry's memory budget while the run grows, not only at start and stop:
        evict the oldest finished runs, and say once when this run alone is over budget (it
        keeps recording: nothing recorded is dropped)."""
        registry = self.registry
        if self._stopped or registry.nbytes <= registry.budget_bytes:
            return  # (at stop, the registry enforces its budget once the run is finished)
        registry.enforce_budget()
        run = self.run
        if self._over_budget or registry.nbytes <= registry.budget_bytes:
            return
        self._over_budget = True
        import warnings

        from everyo.errors import EveryOProfilerWarning

        warnings.warn(
            f"everyo profiler: run {run.id} ({run.label!r}) holds {run.nbytes:,} bytes and the "
            f"runs held total more than runs.budget_bytes={registry.budget_bytes:,} while it "
            "is still recording (nothing is dropped). Record less (schedule=, "
            "record_shapes=False, fewer metadata), or raise everyo.profiler.runs.budget_bytes",
            EveryOProfilerWarning,
            stacklevel=2,
        )

    def _flush_all(self) -> None:
        now = self._clock()
        with self._threads_lock:
            states = list(self._threads)
        for t in states:
            self._flush(t, now)

    # -- module calls --------------------------------------------------------------------------
    def module_call(self, module, forward, args, kwargs):
        """Run ``forward(*args, **kwargs)`` as one module event (hook protocol)."""
        try:
            t = self._tls.s
        except AttributeError:
            t = self._state()
        keymap = t.keymap
        if keymap is None:
            return self._root_call(t, module, forward, args, kwargs)
        entry = keymap.get(id(module)) or self._unlisted(t, module)
        depth = t.depth
        t.depth = depth + 1
        prev = t.scope
        t.scope = entry[1]
        one = len(args) == 1 and not kwargs  # the common case: a direct call is cheaper
        clock = self._clock
        start = clock()
        try:
            out = forward(args[0]) if one else forward(*args, **kwargs)
        except BaseException:
            self._failed(t, entry[0], depth, start, prev)
            raise
        end = clock()
        t.depth = depth
        t.scope = prev
        mode = self._mode  # recording everything (no warmup, no schedule): append, maybe flush
        if mode is _SHAPES:
            if one:
                # compare the shapes with those of the module's last call: cheaper than hashing
                # them, and a training loop repeats them call after call
                a, T = args[0], self._tensor
                if type(a) is T and type(out) is T:  # a Tensor's shape is a property
                    cur = (a.data.shape, out.data.shape, depth)
                else:
                    cur = (getattr(a, "shape", None), getattr(out, "shape", False), depth)
                last = entry[2][0]
                if last[0] == cur:
                    packed = last[1]
                else:
                    packed = pack(entry[0], depth, self._shape_id(args, kwargs, out))
                    entry[2][0] = (cur, packed)
            else:
                packed = pack(entry[0], depth, self._shape_id(args, kwargs, out))
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
            tail = (self._shape_id(args, kwargs, out),) if self.record_shapes else ()
            self._emit(t, (start, end - start, entry[0], depth), tail, None, end)
        return out

    def _root_call(self, t: _ThreadState, module, forward, args, kwargs):
        # the outermost module: its named_modules() give the paths of everything inside
        if self._cuda_possible and self._gpu is None and CudaTimer.wanted(args):
            self._start_cuda_timing()
        t.keymap = self._keymap_for(module)
        t.root = module
        try:
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
        self._gpu = gpu
        self.module_call = self._module_call_full
        self.run.options["cuda_timing"] = True

    def _failed(self, t: _ThreadState, key: int, depth: int, start: int, prev) -> None:
        end = self._clock()
        t.depth = depth
        t.scope = prev
        self._emit(t, (start, end - start, key, depth), self._pad, None, end)

    def _module_call_full(self, module, forward, args, kwargs):
        """module_call with CUDA timing, memory or op columns on (the general, slower path)."""
        t = self._state()
        if t.keymap is None:
            return self._root_call(t, module, forward, args, kwargs)
        entry = t.keymap.get(id(module)) or self._unlisted(t, module)
        depth, prev = t.depth, t.scope
        t.depth, t.scope = depth + 1, entry[1]
        gpu = self._gpu
        marks = gpu.begin(args) if gpu is not None else None
        start = self._clock()
        try:
            out = forward(*args, **kwargs)
        except BaseException:
            self._failed(t, entry[0], depth, start, prev)
            raise
        end = self._clock()
        t.depth, t.scope = depth, prev
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
        if self._memory is not None:
            tail += (self._memory.on_output(out, end - self.run._t0),)
        return tail

    def _keymap_for(self, module) -> dict:
        keymap = self._roots.get(id(module))
        if keymap is None:
            keymap = {}
            named = getattr(module, "named_modules", None)
            pairs = named() if named is not None else [("", module)]
            for path, m in pairs:
                name = type(m).__name__
                keymap[id(m)] = _entry(self.store.intern_key("module", name, path), name, path)
            if id(module) not in keymap:
                name = type(module).__name__
                keymap[id(module)] = _entry(self.store.intern_key("module", name, ""), name, "")
            self._roots[id(module)] = keymap
        return keymap

    def _unlisted(self, t: _ThreadState, module):
        # A module called inside the outermost one but not among its named_modules(): the
        # tree may have changed since we cached it, so look again before inventing a path.
        self._roots.pop(id(t.root), None)
        t.keymap = self._keymap_for(t.root)
        entry = t.keymap.get(id(module))
        if entry is None:
            name = type(module).__name__
            parent_path = t.scope[1] if t.scope else ""
            path = f"{parent_path}.{name}" if parent_path else name
            entry = _entry(self.store.intern_key("module", name, path), name, path)
            t.keymap[id(module)] = entry
        return entry

    def _shape_id(self, args, kwargs, out) -> int:
        T = self._tensor  # a Tensor's shape is a Python property; its array's is C
        sk = (
            tuple([a.data.shape if type(a) is T else getattr(a, "shape", None) for a in args]),
            tuple([(k, getattr(v, "shape", None)) for k, v in kwargs.items()]) if kwargs else None,
            out.data.shape if type(out) is T else getattr(out, "shape", False),
        )
        sid = self._shape_ids.get(sk)
        if sid is None:
            sid = self._new_shape(sk, args, kwargs, out)
        return sid

    def _new_shape(self, sk, args, kwargs, out) -> int:
        sid = self._shape_ids[sk] = self.store.intern_shape(format_shapes(args, kwargs, out))
        return sid
