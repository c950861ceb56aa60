"""Hooks for regions, ops and autograd: record_function, optimizer/data/train regions, op
events (``record_ops``) and the backward pass grouped per module.

These run less often than module calls; the shared recording path is ``Capture._emit``.
"""

from __future__ import annotations

from everyo.profiler.flops import estimate


class _Region:
    """Context manager for one region (record_function, optimizer step, DataLoader fetch...)."""

    __slots__ = ("p", "key", "meta", "t", "depth", "start")

    def __init__(self, p, key: int, meta: dict | None):
        self.p, self.key, self.meta = p, key, meta

    def __enter__(self):
        t = self.p._state()
        self.t = t
        self.depth = t.depth
        t.depth += 1
        self.start = self.p._clock()
        return self

    def __exit__(self, exc_type, exc, tb):
        p, t = self.p, self.t
        end = p._clock()
        t.depth = self.depth
        p._emit(t, (self.start, end - self.start, self.key, self.depth), p._pad, self.meta, end)
        return False


class _Backward:
    __slots__ = ("depth", "token", "key", "start")

    def __init__(self, depth: int):
        self.depth = depth
        self.token = self.key = self.start = None


class RegionHooks:
    """The region, op and autograd parts of the hook protocol (mixed into ``Capture``)."""

    def region(self, name: str, kind: str = "user", **metadata) -> _Region:
        """A context manager recording one region of ``kind`` (hook protocol)."""
        key = self._region_keys.get((kind, name))
        if key is None:
            key = self._region_keys[(kind, name)] = self.store.intern_key(kind, name, "")
        return _Region(self, key, metadata or None)

    def op_call(self, name, fn, args, kwargs):
        """Run one engine op as an ``op`` event with shapes, FLOPs and bytes (hook protocol)."""
        t = self._state()
        key = self._region_keys.get(("op", name))
        if key is None:
            key = self._region_keys[("op", name)] = self.store.intern_key("op", name, "")
        depth = t.depth
        t.depth = depth + 1
        start = self._clock()
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

    def scope(self):
        """The token autograd nodes store: (class name, path) of the innermost module, or None."""
        try:
            return self._tls.s.scope
        except AttributeError:
            return None

    def backward_call(self, run):
        """Run a whole backward pass as one ``backward`` event with per-module children."""
        with self.region("backward", "backward") as root:
            t = root.t
            saved, t.bw = t.bw, _Backward(root.depth + 1)
            try:
                return run()
            finally:
                self._close_group(t, t.bw, self._clock())
                t.bw = saved

    def backward_node(self, scope, name, fn):
        """Run one autograd node; consecutive nodes of one module become one event."""
        try:
            t = self._tls.s
        except AttributeError:
            return fn()
        bw = t.bw
        if bw is None:
            return fn()
        token = scope if scope is not None else name
        if token is not bw.token:
            now = self._clock()
            self._close_group(t, bw, now)
            bw.token, bw.key, bw.start = token, self._bw_key(token), now
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

    def _close_group(self, t, bw: _Backward, now: int) -> None:
        if bw.token is not None:
            self._emit(t, (bw.start, now - bw.start, bw.key, bw.depth), self._pad, None, now)
            bw.token = None
