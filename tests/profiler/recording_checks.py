"""Checks shared by the recording fault tests: an interrupt injected where a signal can land,
the nesting every recorded event must keep, and small workloads."""

from __future__ import annotations

import os

import everyo as eo
from everyo.profiler import Profiler, RunRegistry, record_function
from everyo.profiler.recording import hooks

# the profiler's package, all its folders (recording, storage...)
_PROFILER_DIR = os.path.dirname(os.path.dirname(hooks.__file__))


class Interrupt(BaseException):
    """What a signal handler raises (like KeyboardInterrupt, not an Exception)."""


class InjectAt:
    """Raises ``Interrupt`` at the ``k``-th point where a signal handler can run: entering a
    Python function, or returning from any call (Python's or C's) — where the interpreter checks
    for pending signals. Installed with ``sys.setprofile``, so in every frame, the profiler's own
    Python code included (a line tracer would also raise where no signal can land, such as
    between a ``with`` block's last line and its ``__exit__``).

    ``where(frame)`` picks the frames that get interrupts (default: all).
    """

    def __init__(self, k: int, where=None, raiser=None):
        self.k, self.seen, self.fired, self.where = k, 0, False, where
        self.raiser = raiser  # raises the interrupt instead (a signal handler, say)

    def __call__(self, frame, event, arg):
        if self.fired or event not in ("call", "return", "c_return"):
            return
        if self.where is not None and not self.where(frame):
            return
        self.seen += 1
        if self.seen == self.k:
            self.fired = True
            where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
            if self.raiser is not None:
                self.raiser(f"point {self.k} ({event} {where})")
            raise Interrupt(f"point {self.k} ({event} {where})")


class ProgramError(Exception):
    """What the program's own signal handler raises: an Exception, not the profiler's."""


def program_handler(signum, frame):
    """Installed as a signal handler by the tests that raise through it: the exception's
    traceback holds a handler's frame, as when the interpreter runs one."""
    raise ProgramError(frame)


def raise_from_handler(text: str) -> None:
    import signal

    handler = signal.getsignal(signal.SIGUSR2)
    handler(signal.SIGUSR2, text)


def in_a_flush(frame) -> bool:
    code = frame.f_code
    return code.co_filename.startswith(_PROFILER_DIR) and code.co_name in (
        "_flush",
        "_settle",
        "_columns",
        "append",
        "thread_events",
    )


def thread_state_is_clean(rec) -> list:
    t = rec._peek_state()
    if t is None:
        return []
    bad = [f for f in ("keymap", "root", "scope", "backward") if getattr(t, f) is not None]
    return bad + (["depth"] if t.depth else []) + (["open"] if list(t.open) else [])


def check_nesting(events) -> None:
    by_row = {e.row: e for e in events}
    for e in events:
        if e.parent < 0:
            assert e.depth == 0, e
            continue
        up = by_row[e.parent]
        assert up.depth == e.depth - 1, (e, up)
        end, up_end = e.start_ns + e.duration_ns, up.start_ns + up.duration_ns
        assert up.start_ns <= e.start_ns and end <= up_end, (e, up)


def interrupt_everywhere(
    step, where=None, *, limit=4000, flush_len=None, by_handler=False, **options
):
    """Run ``step`` under a profiler with an interrupt at its 1st, 2nd, ... signal point (in
    the frames ``where`` picks) until one runs through; after each, and one more step (which
    closes a region whose exit the interrupt skipped), the thread's state is clean. Returns the
    number of points, the events and the number of steps run. ``by_handler``: the program's
    signal handler raises an Exception (``ProgramError``) at each point instead, which the
    profiler must let through as it lets an interrupt through."""
    import signal

    raised = (ProgramError, Interrupt) if by_handler else Interrupt
    previous = signal.signal(signal.SIGUSR2, program_handler) if by_handler else None
    try:
        return _interrupt_everywhere(step, where, limit, flush_len, by_handler, raised, options)
    finally:
        if by_handler:
            signal.signal(signal.SIGUSR2, previous)


def _interrupt_everywhere(step, where, limit, flush_len, by_handler, raised, options):
    import sys

    p = Profiler(registry=RunRegistry(), label="interrupts", **options)
    steps = 0
    with p:
        if flush_len is not None:
            p._recorder.configure(flush_len=flush_len * p._recorder._width)
        k, clean = 0, 0
        while k < limit:
            k += 1
            tracer = InjectAt(k, where, raise_from_handler if by_handler else None)
            sys.setprofile(tracer)
            try:
                step()
            except raised:
                pass
            else:  # the point's exception was cleared on the way out: someone ate it
                assert not tracer.fired, f"the exception at point {k} was lost"
            finally:
                sys.setprofile(None)
            step()  # a region left open where no exit could run is closed by now
            steps += 2
            assert thread_state_is_clean(p._recorder) == [], f"after an interrupt at {k}"
            if not tracer.fired:
                clean += 1
                if clean == 2:
                    break
    assert k < limit and p.run.status == "completed"
    events = p.events
    check_nesting(events)
    return k, events, steps


def training_step():
    model = eo.Sequential(eo.Linear(3, 4, seed=0), eo.ReLU(), eo.Linear(4, 1, seed=1))
    opt = eo.SGD(model.parameters(), lr=1e-6)  # (the steps only need to run)
    x = eo.ones(2, 3)

    def step():
        with record_function("step", i=1):
            opt.zero_grad()
            loss = model(x).sum()
            loss.backward()
            opt.step()

    return step


def record_work(n=100):
    model = eo.Sequential(eo.Linear(3, 3, seed=0), eo.ReLU())
    x = eo.zeros(2, 3)
    for i in range(n):
        with record_function("r", i=i):
            model(x)
