"""Fakes for profiler tests: a controllable clock and tiny modules that call the hook protocol."""

from __future__ import annotations

import numpy as np
from fakes import FakeClock

from everyo.profiler.recording import hooks


class FakeModule:
    """A module shaped like the engine's: ``named_modules()`` and a hooked ``__call__``."""

    def __init__(self, *children, clock: FakeClock | None = None, work_ns: int = 0):
        self.children = list(children)
        self.clock = clock
        self.work_ns = work_ns

    def named_modules(self, prefix: str = ""):
        yield prefix, self
        for i, child in enumerate(self.children):
            yield from child.named_modules(f"{prefix}.{i}" if prefix else str(i))

    def __call__(self, *args, **kwargs):
        p = hooks.active
        if p is None:
            return self.forward(*args, **kwargs)
        return p.module_call(self, self.forward, args, kwargs)

    def forward(self, x, **kwargs):
        if self.clock is not None:
            self.clock.advance(self.work_ns)
        for child in self.children:
            x = child(x)
        return x


class Linear(FakeModule):
    def __init__(self, n_in: int, n_out: int, **kw):
        super().__init__(**kw)
        self.w = np.ones((n_in, n_out))

    def forward(self, x, **kwargs):
        if self.clock is not None:
            self.clock.advance(self.work_ns)
        return x @ self.w


class ReLU(FakeModule):
    def forward(self, x, **kwargs):
        if self.clock is not None:
            self.clock.advance(self.work_ns)
        return np.maximum(x, 0)


class Sequential(FakeModule):
    pass


class Boom(FakeModule):
    def __init__(self, exc: BaseException, **kw):
        super().__init__(**kw)
        self.exc = exc

    def forward(self, x, **kwargs):
        if self.clock is not None:
            self.clock.advance(self.work_ns)
        raise self.exc


def mlp(clock: FakeClock | None = None) -> Sequential:
    """Sequential(Linear(4, 16), ReLU(), Linear(16, 2)) taking 100 + 10/20/30 ns per call."""
    return Sequential(
        Linear(4, 16, clock=clock, work_ns=10),
        ReLU(clock=clock, work_ns=20),
        Linear(16, 2, clock=clock, work_ns=30),
        clock=clock,
        work_ns=100,
    )
