"""Hooks for regions, ops and autograd: record_function, optimizer/data/train regions, op
events (``record_ops``) and the backward pass grouped per module.

These run less often than module calls. A finished region or backward group goes to its thread's
buffer through ``Recorder._emit_region`` (one append while everything is recorded) or
``Recorder._emit`` (warmup, schedule, extra columns).
"""

from __future__ import annotations

import dis
import inspect
import sys

from everyo.errors import EveryOProfilerError
from everyo.profiler.recording.flops import estimate
from everyo.profiler.recording.packing import KEY_BITS, KEY_MASK, pack

MAX_DEPTH = 32_000
"""Deepest nesting of events on one thread (the store keeps depth as int16)."""

BACKWARD_REGION = ("backward", "backward")
"""(kind, name) of a whole backward pass's event (its groups are named by ``_bw_key``)."""


def _too_deep(depth: int) -> EveryOProfilerError:
    return EveryOProfilerError(
        f"everyo profiler: events nested deeper than {MAX_DEPTH:,} levels on one thread "
        "(regions, module calls and backward passes together); a region is probably entered in "
        "a loop without being exited (use `with record_function(...):`), or a module recurses "
        "that deep: record fewer levels"
    )


_SUSPENDABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def close_abandoned(p, t, depth: int) -> None:
    """Close the open regions of thread state ``t`` at ``depth`` or deeper, recording each as
    ending now: their ``with`` blocks were left without their exit (an interrupt landed where
    the exit could not run). Called when an event enclosing them closes, when the same code
    opens a region again, and at stop.

    Each region is taken out of the stack and the depth restored in one step that no signal
    can split (no call between them), before its event is recorded.
    """
    stack = t.open
    now = p._clock()
    while stack and stack[-1].depth >= depth:
        region = stack[-1]
        if p._fast:  # recording everything: appended and closed with no call between
            packed = pack(region.key, region.depth)  # (before the index is read)
            index = t.flushed + len(t.buf) // 3
            t.buf += (region.start, now, packed)
            if region.depth < t.depth:  # (a caller may have restored a shallower depth first)
                t.depth = region.depth
            del stack[-1]
            region.t = region.frame = None
            if region.meta:
                t.meta.append((index, region.meta))
            continue
        # recorded first, then closed: an interrupt between them has it recorded again at the
        # next repair (the copy holds the same events), never lost with its children kept
        p._emit_region(t, region.start, now, region.key, region.depth, region.meta)
        if region.depth < t.depth:
            t.depth = region.depth
        del stack[-1]
        region.t = region.frame = None


_WITH_OPS = {
    dis.opmap[n] for n in ("BEFORE_WITH", "SETUP_WITH", "BEFORE_ASYNC_WITH") if n in dis.opmap
}
_with_sites: dict = {}  # (code, offset) -> whether that instruction is a `with` statement's


def _is_with(code, offset: int) -> bool:
    """Whether instruction ``offset`` of ``code`` enters a ``with`` statement's block."""
    site = (code, offset)
    hit = _with_sites.get(site)
    if hit is None:
        if len(_with_sites) > 4096:  # (it holds code objects: notebook cells' too)
            _with_sites.clear()
        hit = _with_sites[site] = code.co_code[offset] in _WITH_OPS
    return hit


def is_abandoned(region, caller) -> bool:
    """Whether open ``region`` was left for good: it was opened by a ``with`` statement (its
    ``frame`` is ``(frame, offset)`` of the code that entered it; ``ExitStack`` and direct
    ``__enter__()`` calls never count), that frame is no longer running on this thread (the
    stack from ``caller`` up does not hold it), and it is not a generator or coroutine (those
    are suspended, not gone, and come back to exit)."""
    if region.frame is None:
        return False
    frame, offset = region.frame
    if frame.f_code.co_flags & _SUSPENDABLE or not _is_with(frame.f_code, offset):
        return False
    f = caller
    while f is not None:
        if f is frame:
            return False
        f = f.f_back
    return True


def _exempt(region) -> bool:
    """A region :func:`is_abandoned` never counts as left: no frame, a generator's or
    coroutine's, or not opened by a ``with`` statement."""
    if region.frame is None:
        return True
    frame, offset = region.frame
    return bool(frame.f_code.co_flags & _SUSPENDABLE) or not _is_with(frame.f_code, offset)


def none_abandoned(t, caller) -> bool:
    """Whether thread state ``t`` has no abandoned region, for ``caller`` about to open one,
    at a cost that does not grow with the nesting (issue 44: checking every open region
    against the whole stack made N nested regions cost N³).

    Each region is opened after this check, so every region open then had its frame on the
    stack above the new region's: while the innermost region that can be abandoned still has
    its frame on the stack, so have all the others (a running frame's callers run too). That
    frame is found by walking up from ``caller``, usually in a step or two (recursion opens a
    region per level); ``False`` (look at each) when it is not found."""
    stack = t.open
    i = len(stack) - 1
    while i >= 0 and _exempt(stack[i]):
        i -= 1
        if len(stack) - i > 64:  # (many exempt regions: look at each instead)
            return False
    if i < 0:
        return True
    target, f = stack[i].frame[0], caller
    while f is not None:
        if f is target:
            return True
        f = f.f_back
    return False


def close_abandoned_on(p, t, frame) -> None:
    """Close thread state ``t``'s abandoned regions (see :func:`is_abandoned`), from the
    outermost one; ``frame`` is that thread's current frame (``None``: it has ended)."""
    if frame is not None and none_abandoned(t, frame):
        return
    for region in list(t.open):
        if is_abandoned(region, frame):
            close_abandoned(p, t, region.depth)
            return


def close_out_of_order(region, t) -> None:
    """Take ``region`` out of thread state ``t``'s open stack when it is not the innermost: the
    regions opened inside it move one level up (shared by both recorders' regions)."""
    stack = t.open
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is region:
            region.t = region.frame = None
            del stack[i]
            for inner in stack[i:]:  # they outlive this one: one level up from now on
                inner.depth -= 1
            if t.depth > region.depth:
                t.depth -= 1
            return
    # not open on this thread (exited twice, or on another thread): depth stays as it is


class _Region:
    """Context manager for one region (record_function, optimizer step, DataLoader fetch...).

    Open regions of a thread form a stack (the thread state's ``open``). A region closes by
    identity: closing one that is not the innermost (regions exited out of order, or left open
    across a ``yield``/``await``) takes it out of the stack and moves the regions opened inside
    it one level up, so the thread's depth is right for every later event.
    """

    __slots__ = ("p", "key", "meta", "t", "depth", "start", "frame")

    def __init__(self, p, key: int, meta: dict | None):
        self.p, self.key, self.meta = p, key, meta
        self.t = self.frame = None  # t: the thread state while open; frame: see is_abandoned

    def __enter__(self):
        p = self.p
        t = p._state()
        depth = t.depth
        if depth >= p._max_depth:
            p._region_too_deep(depth)
        self.start = p._clock()  # first: if it raises, the region was never opened
        self.depth = depth
        if self.frame is None:  # the code that opens it (see is_abandoned)
            f = sys._getframe(1)
            self.frame = (f, f.f_lasti)
        stack = t.open
        # open it: no call between these (a signal lands only after a call or a backward jump)
        self.t = t
        t.depth = depth + 1
        stack += (self,)
        return self

    def __exit__(self, exc_type, exc, tb):
        t = self.t
        if t is None:  # not open: never entered, closed already, or closed as abandoned
            return False
        p, stack = self.p, t.open
        if exc_type is not None and stack and stack[-1] is not self and self.depth < t.depth:
            close_abandoned(p, t, self.depth + 1)  # an exception unwound the ones inside it
        end = p._clock()  # (an interrupt here leaves it open: closed as abandoned later)
        if stack and stack[-1] is self:
            if p._fast:  # recording everything: appended and closed with no call between
                buf = t.buf
                index = t.flushed + len(buf) // 3
                # pack() inline: a call per event is measured here (benchmarks/profiler_overhead.py)
                buf += (self.start, end, self.key | self.depth << KEY_BITS)
                t.depth = self.depth
                del stack[-1]
                self.t = self.frame = None
                if self.meta:
                    t.meta.append((index, self.meta))
                if len(buf) >= p._flush_len or end > t.flush_at:
                    p._flush(t, end)
                return False
            t.depth = self.depth  # close it: no call between these
            del stack[-1]
            self.t = self.frame = None
        else:
            close_out_of_order(self, t)
        try:
            p._emit_region(t, self.start, end, self.key, self.depth, self.meta)
        except BaseException:  # (an interrupt in the policy): kept if events inside it were
            if self.depth < t.keep_below:
                pad = p._pad[1:] if p.record_shapes else p._pad
                # pack() inline: no call before the append, where a second interrupt could land
                t.buf += (self.start, end, self.key | self.depth << KEY_BITS) + pad
                t.keep_below = self.depth
            raise
        return False


class _Backward:
    """The backward pass running on one thread and its open per-module group.

    Groups go to the thread's buffer as they close; the buffer's size and age are checked once,
    when the pass ends (a pass adds one event per module, not an unbounded number).
    """

    __slots__ = ("p", "t", "clock", "keys", "shifted", "depth", "token", "packed", "start")

    def __init__(self, p, t, depth: int):
        self.p, self.t, self.depth = p, t, depth
        self.clock, self.keys = p._clock, p._bw_keys
        self.shifted = depth << KEY_BITS
        self.token = self.packed = self.start = None

    def switch(self, token) -> None:
        """Close the open group (if any) and open one for ``token`` (a scope or an op name)."""
        key = self.keys.get(token)
        packed = (key if key is not None else self.p._bw_key(token)) | self.shifted
        now = self.clock()
        # the new group replaces the old in one step (no call), then the old one is recorded:
        # an interrupt loses at most that one, never records it twice or half
        old_token, old_start, old_packed = self.token, self.start, self.packed
        self.token, self.start, self.packed = token, now, packed
        if old_token is not None:
            if self.p._fast:  # extend a local: a flush may swap t.buf meanwhile
                buf = self.t.buf
                buf += (old_start, now, old_packed)
            else:
                self.p._emit(
                    self.t,
                    (old_start, now - old_start, old_packed & KEY_MASK, self.depth),
                    self.p._pad,
                    None,
                    now,
                )

    def enter(self, node) -> None:
        """Autograd ``node`` runs next: open its group (its module scope, else its op name)
        unless that group is the open one."""
        token = node.scope
        if token is None:
            token = node.name
        if token is not self.token:
            self.switch(token)

    def close(self, now: int) -> None:
        token, self.token = self.token, None  # closed first: never recorded twice
        if token is not None:
            if self.p._fast:
                buf = self.t.buf
                buf += (self.start, now, self.packed)
            else:
                self._emit(now)

    def _emit(self, now: int) -> None:
        p, key = self.p, self.packed & KEY_MASK
        p._emit(self.t, (self.start, now - self.start, key, self.depth), p._pad, None, now)


class RegionHooks:
    """The region, op and autograd parts of the hook protocol (mixed into ``Recorder``)."""

    _backward_type = _Backward  # the compiled recorder's is _crecorder.Backward

    def region(self, name: str, kind: str = "user", **metadata) -> _Region:
        """A context manager recording one region of ``kind`` (hook protocol)."""
        key = self._region_keys.get((kind, name))
        if key is None:
            key = self._region_key(kind, name)
        return _Region(self, key, metadata or None)

    def _region_key(self, kind: str, name: str) -> int:
        """The store key of a region, op or backward event (interned on first use)."""
        key = self._region_keys.get((kind, name))
        if key is None:
            key = self._region_keys[(kind, name)] = self.store.intern_key(kind, name, "")
        return key

    def _region_too_deep(self, depth: int):
        raise _too_deep(depth)

    def op_call(self, name, fn, args, kwargs):
        """Run one engine op as an ``op`` event with shapes, FLOPs and bytes (hook protocol)."""
        t = self._state()
        key = self._region_keys.get(("op", name))
        if key is None:
            key = self._region_key("op", name)
        depth = t.depth
        start = self._clock()
        t.depth = depth + 1
        try:
            out = fn(*args, **kwargs)
            end = self._clock()
        except BaseException:
            t.depth = depth  # first (no call before it)
            self._failed(t, key, depth, start, t.scope)
            raise
        t.depth = depth
        self._emit(
            t,
            (start, end - start, key, depth),
            self._tail(args, kwargs, out, end, estimate(name, args, kwargs, out)),
            None,
            end,
        )
        return out

    def backward_call(self, run, *args):
        """Run a whole backward pass, ``run(*args)``, as one ``backward`` event with per-module
        children."""
        t = self._state()
        key = self._region_keys.get(self._backward_region)
        if key is None:
            key = self._region_key(*self._backward_region)
        depth = t.depth
        if depth >= self._max_depth:
            self._region_too_deep(depth)
        bw = self._backward_type(self, t, depth + 1)
        start = self._clock()  # (if it raises, nothing ran: nothing to restore or record)
        saved = t.backward
        t.depth = depth + 1  # (no call from here into the try: no signal can land between)
        t.backward = bw
        try:
            return run(*args)
        finally:
            err = None
            try:
                if t.open and t.open[-1].depth > depth:
                    close_abandoned(self, t, depth + 1)
                end = self._clock()
            except BaseException as e:  # (an interrupt): the latest time known
                end, err = (bw.start if bw.token is not None else start), e
            fast = self._fast
            if fast:  # the last group, the pass and the thread restored, no call between them
                buf = t.buf
                if bw.token is not None:
                    buf += (bw.start, end, bw.packed)
                bw.token = None
                # pack() inline: no call until the thread is restored (and one per pass, measured)
                buf += (start, end, key | depth << KEY_BITS)
            t.depth, t.backward = depth, saved
            try:
                if err is not None:
                    raise err
                if not fast:
                    bw.close(end)
                    self._emit_region(t, start, end, key, depth, None)
            except BaseException:  # (an interrupt in the policy): kept if its groups were
                if not fast and depth < t.keep_below:
                    pad = self._pad[1:] if self.record_shapes else self._pad
                    # pack() inline: no call before the append, where a second interrupt could land
                    t.buf += (start, end, key | depth << KEY_BITS) + pad
                    t.keep_below = depth
                raise
            if fast and (len(buf) >= self._flush_len or end > t.flush_at):
                self._flush(t, end)

    def backward_groups(self):
        """``enter(node)`` of the backward pass running on this thread, or ``None``.

        Optional part of the hook protocol: ``run_backward`` calls it once per pass and then
        ``enter(node)`` before each autograd node, instead of ``backward_node`` around every
        node; a new group opens only where consecutive nodes change module (the node's scope,
        or its name outside any module).
        """
        t = self._peek_state()
        bw = None if t is None else t.backward
        return None if bw is None else bw.enter

    def backward_node(self, scope, name, fn):
        """Run one autograd node; consecutive nodes of one module become one event."""
        t = self._peek_state()
        bw = None if t is None else t.backward
        if bw is not None:
            token = scope if scope is not None else name
            if token is not bw.token:
                bw.switch(token)
        return fn()

    def _bw_key(self, token) -> int:
        key = self._bw_keys.get(token)
        if key is None:
            if isinstance(token, tuple):
                key = self.store.intern_key("backward", f"{token[0]}.backward", token[1])
            else:
                key = self.store.intern_key("backward", f"{token}.backward", "")
            self._bw_keys[token] = key
        return key
