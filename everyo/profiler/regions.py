"""Hooks for regions, ops and autograd: record_function, optimizer/data/train regions, op
events (``record_ops``) and the backward pass grouped per module.

These run less often than module calls. A finished region or backward group goes to its thread's
buffer through ``Recorder._emit_region`` (one append while everything is recorded) or
``Recorder._emit`` (warmup, schedule, extra columns).
"""

from __future__ import annotations

from everyo.errors import EveryOProfilerError
from everyo.profiler.flops import estimate
from everyo.profiler.packing import KEY_BITS, KEY_MASK

MAX_DEPTH = 32_000
"""Deepest nesting of events on one thread (the store keeps depth as int16)."""


def _too_deep(depth: int) -> EveryOProfilerError:
    return EveryOProfilerError(
        f"everyo profiler: regions nested deeper than {MAX_DEPTH:,} levels on one thread; "
        "a region is probably entered in a loop without being exited (use `with "
        "record_function(...):`), or record fewer levels"
    )


def close_out_of_order(region, t) -> None:
    """Take ``region`` out of thread state ``t``'s open stack when it is not the innermost: the
    regions opened inside it move one level up (shared by both recorders' regions)."""
    stack = t.open
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is region:
            del stack[i]
            for inner in stack[i:]:  # they outlive this one: one level up from now on
                inner.depth -= 1
            if t.depth > region.depth:
                t.depth -= 1
            return
    # not open on this thread (exited twice, or on another thread): depth stays as it is


class _Region:
    """Context manager for one region (record_function, optimizer step, DataLoader fetch...).

    Open regions of a thread form a stack (``_ThreadState.open``). A region closes by identity:
    closing one that is not the innermost (regions exited out of order, or left open across a
    ``yield``/``await``) takes it out of the stack and moves the regions opened inside it one
    level up, so the thread's depth is right for every later event.
    """

    __slots__ = ("p", "key", "meta", "t", "depth", "start")

    def __init__(self, p, key: int, meta: dict | None):
        self.p, self.key, self.meta = p, key, meta

    def __enter__(self):
        p = self.p
        self.t = t = p._state()
        self.depth = depth = t.depth
        if depth >= MAX_DEPTH:
            raise _too_deep(depth)
        self.start = p._clock()  # first: if it raises, the region was never opened
        t.depth = depth + 1
        t.open.append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        p, t = self.p, self.t
        end = p._clock()
        stack = t.open
        if stack and stack[-1] is self:
            stack.pop()
            t.depth = self.depth
        else:
            close_out_of_order(self, t)
        p._emit_region(t, self.start, end, self.key, self.depth, self.meta)
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
        now = self.clock()
        if self.token is not None:
            if self.p._fast:  # extend a local: a flush may swap t.buf meanwhile
                buf = self.t.buf
                buf += (self.start, now, self.packed)
            else:
                self._emit(now)
        self.token = token
        key = self.keys.get(token)
        self.packed = (key if key is not None else self.p._bw_key(token)) | self.shifted
        self.start = now

    def enter(self, node) -> None:
        """Autograd ``node`` runs next: open its group (its module scope, else its op name)
        unless that group is the open one."""
        token = node.scope
        if token is None:
            token = node.name
        if token is not self.token:
            self.switch(token)

    def close(self, now: int) -> None:
        if self.token is not None:
            if self.p._fast:
                buf = self.t.buf
                buf += (self.start, now, self.packed)
            else:
                self._emit(now)
            self.token = None

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
        except BaseException:
            self._failed(t, key, depth, start, t.scope)
            raise
        end = self._clock()
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
        key = self._region_keys.get(("backward", "backward"))
        if key is None:
            key = self._region_key("backward", "backward")
        depth = t.depth
        if depth >= MAX_DEPTH:
            raise _too_deep(depth)
        bw = self._backward_type(self, t, depth + 1)
        start = self._clock()  # (if it raises, nothing ran: nothing to restore or record)
        t.depth = depth + 1
        saved = t.backward
        t.backward = bw
        try:
            return run(*args)
        finally:
            end = self._clock()
            bw.close(end)
            t.backward = saved
            t.depth = depth
            self._emit_region(t, start, end, key, depth, None)

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
