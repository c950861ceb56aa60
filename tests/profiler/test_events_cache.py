"""``Profiler.events`` builds its ProfileEvents once per state of the run (issue 35)."""

from __future__ import annotations

import everyo as eo
from everyo.profiler import Profiler, RunRegistry, record_function


def test_reading_events_twice_returns_the_same_events_without_rebuilding_them():
    lin = eo.Linear(4, 2, seed=0)
    with Profiler(registry=RunRegistry()) as p:
        for _ in range(3):
            lin(eo.ones(2, 4))
    first, second = p.events, p.events
    assert first == second and len(first) == 3
    assert all(a is b for a, b in zip(first, second))  # built once
    first.clear()  # each read is a list of its own
    assert len(p.events) == 3


def test_events_recorded_after_a_read_show_in_the_next_read():
    p = Profiler(registry=RunRegistry())
    p.start()
    try:
        with record_function("a"):
            pass
        assert [e.name for e in p.events] == ["a"]
        with record_function("b"):
            pass
        assert [e.name for e in p.events] == ["a", "b"]
    finally:
        p.stop()
    p.start()  # resumed: the same run grows
    with record_function("c"):
        pass
    p.stop()
    assert [e.name for e in p.events] == ["a", "b", "c"]


def test_a_profiler_that_has_not_run_has_no_events():
    assert Profiler(registry=RunRegistry()).events == []


def test_an_edited_event_does_not_change_the_next_read():
    with Profiler(registry=RunRegistry()) as p:
        with record_function("step", index=7):
            pass
    p.events[0].metadata["index"] = 99
    assert p.events[0].metadata == {"index": 7}
    p.events[0].metadata.update(extra=1)
    assert p.events[0].metadata == {"index": 7}
