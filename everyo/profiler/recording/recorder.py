"""The recorder: what runs on every module call, region, op and autograd node while profiling.

A :class:`Recorder` is the object installed as ``hooks.active`` while a :class:`Profiler` runs.
It receives everything it writes to explicitly: the store, the clock, the origin of the run's
times and the recording options. Each thread keeps its own thread state (nesting depth,
module-path map, a flat buffer of finished events). Finishing an event is one extend of its
thread's buffer; buffers go into the store in bulk (every ``FLUSH_EVENTS`` events or
``FLUSH_NS`` of time, and at stop), so live readers see events within about 50 ms.

No parent ids are recorded: events finish in post-order on their thread, so an event's parent is
the next event of that thread one level up (see ``Run``). The only rule that keeps this true is
that an event whose descendant was recorded is recorded too (``keep_below`` of a thread state,
and an event is appended before its thread's state is restored to its parent's).

A recorder is the policy (this module, ``regions``, ``keymaps``, ``shapes``, ``store_writer``)
on top of the module-call primitives: the compiled
``everyo.profiler.recording._crecorder.ModuleCall``
where that extension is in use (:mod:`everyo._compiled`), else its pure-Python twin
``py_recorder.PyModuleCall``, which does exactly the same (``IMPLEMENTATION`` says which one
runs; ``EVERYO_PURE_PYTHON=1`` forces the Python one). The two meet at one contract
(:mod:`everyo.profiler.recording.contract`): the policy sets what the primitives read only through
``configure``, and they call back only the methods in ``C_CALLBACKS``. ARCHITECTURE.md's
"Recording" section has the rules (identity, interrupts, nothing lost) both keep.
"""

from __future__ import annotations

import sys
import threading

from everyo import _compiled
from everyo.profiler.recording import hooks, own_errors, regions
from everyo.profiler.recording.contract import C_CALLBACKS
from everyo.profiler.recording.general_path import GeneralPath
from everyo.profiler.recording.gpu import CudaTimer
from everyo.profiler.recording.keymaps import Keymaps
from everyo.profiler.recording.packing import BUFFER_FIELDS, PLAIN, SHAPES, pack
from everyo.profiler.recording.py_recorder import PyModuleCall
from everyo.profiler.recording.regions import RegionHooks
from everyo.profiler.recording.shapes import ShapeIds
from everyo.profiler.recording.store_writer import StoreWriter

__all__ = ["C_CALLBACKS", "CRecorder", "IMPLEMENTATION", "PythonRecorder", "Recorder"]

FLUSH_EVENTS = 2048
FLUSH_NS = 50_000_000


class _RecorderBody(GeneralPath, RegionHooks):
    """Implements the hook protocol of :mod:`everyo.profiler.recording.hooks` for one run.

    ``Recorder`` is this plus the fastest module-call primitives available (``CRecorder`` where
    the extension was built, else ``PythonRecorder``); both record the same events.

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
        self._pad = (-1,) * len(extra)  # the tail of an event without tensors
        self._writer = StoreWriter(store, self._fields, record_shapes, origin_ns)
        self._keymaps = Keymaps(store, on_forget=self.drop_module_cache)
        tensor = hooks.tensor_type  # (None without the engine: shapes by `.shape`)
        self._shape_id = ShapeIds(store, tensor).shape_id  # (a C callback: no extra frame)
        self._cuda_possible = gpu is None and CudaTimer.possible()
        self._threads: list = []
        self._by_thread: dict = {}  # threading.get_ident() -> that thread's record
        self._threads_lock = threading.Lock()
        self._stopped = False
        self._skip = warmup
        self._recording = False
        self.configure(
            clock=clock,
            tensor=tensor,
            mode=0,  # until set_recording: every event through the policy
            fast=False,
            general=False,
            python_roots=self._cuda_possible,  # a CUDA tensor may start device timing
            flush_len=FLUSH_EVENTS * self._width,
            max_depth=regions.MAX_DEPTH,  # (read here: tests lower it)
            region_keys={},
            roots=self._keymaps.roots,
            bw_keys={},
            backward_region=regions.BACKWARD_REGION,
        )
        if gpu is not None or memory is not None or record_ops:
            self._use_general_path()

    @property
    def cuda_timing(self) -> bool:
        return self.gpu is not None

    @property
    def origin_ns(self) -> int:
        """The run's time origin on the recorder's clock."""
        return self._writer.origin_ns

    def set_origin(self, origin_ns: int) -> None:
        """Move the time origin (only meaningful before events are recorded)."""
        self._writer.origin_ns = origin_ns

    def watch_modules(self, on_add) -> None:
        """Call ``on_add(module, entry)`` as each module gets its path and key (a framework
        adapter registers its per-module hooks there: once per module, not per call)."""
        self._keymaps.on_add = on_add

    def set_recording(self, recording: bool) -> None:
        """Record events from now on (or stop, keeping the ancestors of kept events).

        The primitives append directly only while everything is recorded (no warmup events
        left to skip, no schedule): with a schedule every event goes through ``_emit``, which
        keeps the ancestors of kept events."""
        self._recording = recording
        on = recording and self._skip == 0 and self.schedule is None
        self.configure(
            fast=on and self._width == len(BUFFER_FIELDS),
            mode=0 if not on else SHAPES if self.record_shapes else PLAIN,
        )

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
    # the primitives (a threading.local in Python, a thread-specific key in C)

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
            if not self._skip:
                self.set_recording(True)  # the primitives' path resumes once warmup is over
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

    def _emit_call(self, t, args, kwargs, out, start: int, end: int, key: int, depth: int):
        """Keep one module event the primitives did not append (mode 0: warmup, schedule)."""
        tail = (self._shape_id(args, kwargs, out),) if self.record_shapes else ()
        self._emit(t, (start, end - start, key, depth), tail, None, end)

    def _emit_region(self, t, start: int, end: int, key: int, depth: int, meta):
        """Keep one finished event without tensors (a region, a backward group)."""
        if self._fast:  # recording everything, nothing beyond the three buffered fields
            buf = t.buf
            index = t.flushed + len(buf) // 3
            buf += (start, end, pack(key, depth))
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
        """Move thread state ``t``'s buffered events into the store (``StoreWriter.write``:
        nothing is lost if it raises), then check the budget."""
        t.flush_at = now + FLUSH_NS
        self._writer.write(t)
        if self.on_flush is not None and not self._stopped:
            self.on_flush()

    # -- module calls (module_call itself: the primitives' or _module_call_full) ---------------
    def _root_call(self, t, module, forward, args, kwargs):
        # the outermost module: its named_modules() give the paths of everything inside
        if self._cuda_possible and self.gpu is None and CudaTimer.wanted(args):
            self._start_cuda_timing()
        try:
            t.keymap = self._keymaps.for_root(module)
            t.root = module
            return self.module_call(module, forward, args, kwargs)
        finally:
            t.keymap = t.root = None

    def _unlisted(self, t, module):
        """The entry of a module called inside the outermost one but missing from its keymap."""
        t.keymap, entry = self._keymaps.unlisted(t.root, module, t.scope)
        return entry

    def _keep_anyway(self, t, start: int, end: int, key: int, depth: int) -> None:
        """Keep an event the policy failed to record (an interrupt landed in it) when an event
        inside it was kept, without its optional columns, so that those keep their parent (the
        compiled recorder's call, for buffers of any width)."""
        if depth < t.keep_below:
            self._emit(t, (start, end - start, key, depth), self._pad, None, end)

    def _failed(self, t, key: int, depth: int, start: int, prev) -> None:
        """Record a call that raised (its caller restored the thread first, as this does)."""
        t.depth, t.scope = depth, prev
        if t.open and t.open[-1].depth > depth:  # regions its exception unwound
            regions.close_abandoned(self, t, depth + 1)
        end = self._clock()
        self._emit(t, (start, end - start, key, depth), self._pad, None, end)


class PythonRecorder(PyModuleCall, _RecorderBody):
    """The recorder with the pure-Python module-call primitives."""


_c = _compiled.load("everyo.profiler.recording._crecorder")
if _c is not None:

    class CRecorder(_c.ModuleCall, _RecorderBody):
        """The recorder with the compiled module-call primitives (``_crecorder.ModuleCall``)."""

        _thread_state = _c.ThreadState
        _backward_type = _c.Backward

    _c.bind_regions(
        regions.close_out_of_order, regions.close_abandoned, own_errors.raised_by_signal_handler
    )

    Recorder = CRecorder
else:
    CRecorder = None
    Recorder = PythonRecorder

IMPLEMENTATION = "c" if _c is not None else "python"
"""Which module-call primitives ``Recorder`` uses: ``"c"`` (compiled extension) or
``"python"``."""
