"""Recording under interrupts (issue 36, faults 3 and 4): an exception raised where a signal can
land, at each such point of a training step, a flush or stop, leaves no event open, every later
event nested right and nothing recorded lost; a flush or stop that raises is finished later.

Every test runs with the compiled and the pure-Python recorder (see conftest.py).
"""

from __future__ import annotations

import signal
import sys
from collections import Counter

import numpy as np
import pytest
from recording_checks import (
    InjectAt,
    Interrupt,
    check_nesting,
    in_a_flush,
    interrupt_everywhere,
    record_work,
    thread_state_is_clean,
    training_step,
)

from everyo.profiler import Profiler, RunRegistry, schedule
from everyo.profiler.recording import hooks

pytestmark = pytest.mark.usefixtures("recorder_impl")


def test_an_interrupt_anywhere_in_a_training_step_leaves_nesting_right(recorder_impl):
    """At every point a signal can land: the step's, the engine's, record_function's and the
    recorder's own (the compiled recorder's Python callbacks, or the whole pure-Python one)."""
    points, events, _ = interrupt_everywhere(training_step())
    assert points > 20
    assert Counter(e.name for e in events)["step"] >= 3


def test_an_interrupt_while_reading_a_calls_shapes_keeps_the_call(recorder_impl):
    """An interrupt in the shape look-up of a call whose children were kept: the call is kept
    without its shape, so they keep their parent (the pure-Python path dropped it, and a timer
    signal then gave its children the next call of the outer module as parent)."""
    import everyo as eo

    outer = eo.Sequential(eo.Linear(2, 2, seed=0))
    p = Profiler(registry=RunRegistry())
    with p:
        outer(eo.zeros(1, 2))
        rec = p._recorder
        real, calls = rec._shape_id, []

        def interrupted(args, kwargs, out):
            calls.append(len(calls))
            if len(calls) == 2:  # the outer call's, after the inner one's was kept
                raise Interrupt("in the shape look-up")
            return real(args, kwargs, out)

        rec._shape_id = interrupted
        with pytest.raises(Interrupt):
            outer(eo.zeros(3, 2))  # new shapes: both calls look theirs up
        rec._shape_id = real
        outer(eo.zeros(1, 2))
    events = p.events
    check_nesting(events)
    assert [(e.name, e.depth, e.shapes) for e in events[2:4]] == [
        ("Linear", 1, "[(3, 2)] -> (3, 2)"),
        ("Sequential", 0, ""),
    ]
    assert len(events) == 6


def test_with_a_schedule_an_interrupt_anywhere_leaves_nesting_right(recorder_impl):
    # every event through the Python policy (_emit), interrupted at each point of it too: an
    # event it could not record is kept anyway when events inside it were
    window = schedule(wait=0, warmup=0, active=1_000_000)
    points, events, _ = interrupt_everywhere(training_step(), schedule=window)
    assert points > 20 and Counter(e.name for e in events)["step"] >= 3


def test_an_interrupt_anywhere_in_a_flush_keeps_the_recorder_consistent(recorder_impl):
    # a flush after every event, interrupted at each point of it (flushes run both paths' code)
    points, events, steps = interrupt_everywhere(training_step(), in_a_flush, flush_len=1)
    assert points > 100
    assert Counter(e.name for e in events)["step"] >= steps // 2


# -- fault 4: a flush or a stop that raises loses nothing ---------------------------------------
def _failing_appends(monkeypatch, store, fails: set, exc=MemoryError):
    """Make ``store.append`` raise on its calls numbered in ``fails`` (from 1)."""
    real, calls = store.append, [0]

    def append(*args, **kwargs):
        calls[0] += 1
        if calls[0] in fails:
            raise exc("injected")
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "append", append)
    return calls


def test_a_flush_that_raises_keeps_its_events_for_the_next(registry, monkeypatch):
    p = Profiler(registry=registry)
    with p:
        record_work(20)
        _failing_appends(monkeypatch, p.store, {1})
        with pytest.raises(MemoryError):
            p.flush()
        record_work(20)
    events = p.events
    assert len(events) == 40 * 4
    assert [e.metadata["i"] for e in events if e.name == "r"] == list(range(20)) * 2
    check_nesting(events)


def test_an_interrupted_stop_is_finished_by_the_next_stop(registry, monkeypatch):
    p = Profiler(registry=registry)
    p.start()
    record_work(75)  # 300 events, buffered
    _failing_appends(monkeypatch, p.store, {1}, KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        p.stop()
    assert p.run.status == "running" and hooks.active is None
    p.stop()
    assert p.run.status == "completed" and p.run.num_events == 300
    assert p.stop() is p.run and p.run.num_events == 300  # a third stop: nothing more to do
    check_nesting(p.events)


def test_a_profiler_started_after_an_interrupted_stop_finishes_it_first(registry, monkeypatch):
    p = Profiler(registry=registry)
    p.start()
    record_work(5)
    _failing_appends(monkeypatch, p.store, {1}, KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        p.stop()
    with p:
        record_work(5)
    assert p.run.status == "completed" and p.run.num_events == 40


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_timer_signals_raising_in_a_training_loop_leave_nesting_right(recorder_impl):
    """The audit's set-up: a timer signal whose handler raises, at whatever point it lands."""
    step, armed = training_step(), [False]
    rng = np.random.default_rng(0)

    def handler(signum, frame):
        if armed[0]:
            armed[0] = False
            raise Interrupt("timer")

    previous = signal.signal(signal.SIGALRM, handler)
    p = Profiler(registry=RunRegistry())
    interrupted = 0
    try:
        with p:
            for _ in range(150):
                try:
                    armed[0] = True
                    signal.setitimer(signal.ITIMER_REAL, float(rng.uniform(20e-6, 600e-6)))
                    step()
                    step()
                    armed[0] = False
                except Interrupt:
                    interrupted += 1
                signal.setitimer(signal.ITIMER_REAL, 0)
                armed[0] = False
            step()
            assert thread_state_is_clean(p._recorder) == []
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert interrupted > 10
    check_nesting(p.events)


def test_an_interrupt_anywhere_in_stop_is_finished_by_the_next_stop(registry):

    k = 0
    while k < 3000:
        k += 1
        p = Profiler(registry=registry, warmup=3, profile_memory=k % 2 == 0)
        p.start()
        record_work(10)  # 40 events, the first 3 skipped
        tracer = InjectAt(k)
        sys.setprofile(tracer)
        try:
            p.stop()
        except Interrupt:
            pass
        finally:
            sys.setprofile(None)
        p.stop()
        where = f"after an interrupt at {k}"
        assert p.run.status == "completed" and hooks.active is None and hooks.holder() is None
        assert (p.run.num_events, p.run.skipped) == (37, 3), where
        check_nesting(p.events)
        registry.clear()
        if not tracer.fired:
            break
    assert 20 < k < 3000


@pytest.mark.parametrize("option", ["record_shapes", "record_ops", "profile_memory"])
@pytest.mark.parametrize("by_handler", [False, True])
def test_an_exception_from_the_programs_signal_handler_anywhere_leaves_nesting_right(
    recorder_impl, option, by_handler
):
    """Issue 44, case 6: an interrupt, or an Exception the program's handler raises, at every
    point of a step with each optional column on; the profiler lets it through (never clears
    it as one of its own errors, nor drops it in a weakref callback of its own) and the
    thread's depth, open regions and nesting stay right (with record_ops the compiled recorder
    kept an event its policy failed to record as three fields in a wider buffer, and the general
    path dropped a module event whose ops were kept)."""
    from recording_checks import ProgramError

    points, events, _ = interrupt_everywhere(
        training_step(), by_handler=by_handler, **{option: True}
    )
    assert points > 20
    assert Counter(e.name for e in events)["step"] >= 3
    assert ProgramError.__mro__[1] is Exception


def test_the_programs_signal_handler_exception_in_a_shape_read_reaches_the_program(
    recorder_impl,
):
    """Issue 44, case 2: a ``.shape`` that runs Python code is where the program's signal
    handler can run; its exception is the program's, not a shape the profiler could not read
    (a ``.shape`` that fails by itself still counts as no shape)."""
    from recording_checks import ProgramError, program_handler, raise_from_handler

    import everyo as eo

    class Odd:
        def __init__(self, by_handler):
            self.by_handler = by_handler

        @property
        def shape(self):
            if self.by_handler:
                raise_from_handler("in .shape")
            raise ValueError("a user's property that fails by itself")

    class Passes(eo.Module):
        def forward(self, x):
            return x

    model = Passes()
    previous = signal.signal(signal.SIGUSR2, program_handler)
    try:
        with Profiler(registry=RunRegistry(), record_shapes=True) as p:
            model(Odd(False))  # no shape, no error
            with pytest.raises(ProgramError):
                model(Odd(True))
            model(Odd(False))
            assert thread_state_is_clean(p._recorder) == []
    finally:
        signal.signal(signal.SIGUSR2, previous)
    assert [e.name for e in p.events].count("Passes") == 3
