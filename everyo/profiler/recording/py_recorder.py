"""The pure-Python module-call primitives: the specification of the compiled
``_crecorder.ModuleCall`` and ``ThreadState``, and the fallback where that extension was not
built (``EVERYO_PURE_PYTHON=1`` forces it).

Both meet the recorder's policy at one contract (:mod:`everyo.profiler.recording.contract`): they
read what ``configure`` set and call back only the methods in ``contract.C_CALLBACKS``.
"""

from __future__ import annotations

import threading

from everyo.profiler.recording import regions
from everyo.profiler.recording.contract import check_call_args, check_options
from everyo.profiler.recording.own_errors import raised_by_signal_handler
from everyo.profiler.recording.packing import KEY_BITS, SHAPES, pack


def _single_shapes(a, out, depth: int):
    """What the single-input shape cache compares: ``(input shape, output shape, depth, input
    dtype, output dtype)`` when both shapes are tuples (subclasses too: a ``torch.Size``), else
    ``None`` (not cached: a list of tensors, no shape, or a ``.shape`` or ``.dtype`` that
    raised)."""
    try:
        shapes = (getattr(a, "shape", None), getattr(out, "shape", None), depth)
        if not (isinstance(shapes[0], tuple) and isinstance(shapes[1], tuple)):
            return None
        return (*shapes, getattr(a, "dtype", None), getattr(out, "dtype", None))
    except Exception as exc:  # noqa: BLE001 - a user's property failing: no shape, never an error
        if raised_by_signal_handler(exc):  # (the program's own: it goes on)
            raise
        return None


class PyThreadState:
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


class PyModuleCall:
    """The pure-Python module-call primitives (the compiled ``_crecorder.ModuleCall`` mirrors
    them)."""

    _thread_state = PyThreadState  # the class of per-thread records module_call expects

    def configure(self, **options) -> None:
        """Set what the primitives read (``contract.OPTIONS``), each value checked first.

        (``python_roots`` changes nothing here: this path always finds an outermost module's
        keymap through ``_root_call``.)"""
        for name, value in check_options(options).items():
            setattr(self, "_" + name, value)

    def drop_module_cache(self) -> None:
        """(A keymapped module died: the compiled path's look-up cache starts over; this path
        keeps none.)"""

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
        if mode == SHAPES:
            # one input: compare the shapes with those of the module's last call (cheaper than
            # hashing them, and a training loop repeats them call after call); only tuple shapes
            a, T = args[0] if one else None, self._tensor
            try:
                if not one:
                    cur = None
                elif type(a) is T and type(out) is T:  # a Tensor's shape is a property
                    ad, od = a.data, out.data
                    cur = (ad.shape, od.shape, depth, ad.dtype, od.dtype)
                else:
                    cur = _single_shapes(a, out, depth)
                last = entry[2][0]
                if cur is not None and last[0] == cur:
                    packed = last[1]
                else:
                    packed = pack(entry[0], depth, self._shape_id(args, kwargs, out))
                    if cur is not None:
                        entry[2][0] = (cur, packed)
            except BaseException:  # (an interrupt while reading shapes): kept without them, so
                # the events inside it keep their parent (the compiled path's `unshaped`);
                # pack() inline: no call before the append, where a second interrupt could land
                t.buf += (start, end, entry[0] | depth << KEY_BITS)
                raise
            buf = t.buf
            buf += (start, end, packed)
            if len(buf) >= self._flush_len or end > t.flush_at:
                self._flush(t, end)
        elif mode:
            buf = t.buf
            # pack() inline: a call per event is measured here (benchmarks/profiler_overhead.py)
            buf += (start, end, entry[0] | depth << KEY_BITS)
            if len(buf) >= self._flush_len or end > t.flush_at:
                self._flush(t, end)
        else:
            try:
                self._emit_call(t, args, kwargs, out, start, end, entry[0], depth)
            except BaseException:  # (an interrupt in the policy): kept if events inside it were
                if depth < t.keep_below:  # (this path's buffer holds three fields an event)
                    # pack() inline: no call before the append, where a second interrupt could land
                    t.buf += (start, end, entry[0] | depth << KEY_BITS)
                    t.keep_below = depth
                raise
        return out
