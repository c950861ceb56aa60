"""Faults that used to lose or misfile events: concurrent starts, regions closed out of order,
decorated generators and coroutines, deep nesting, metadata and the memory budget."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import warnings

import pytest
from profiler_fakes import FakeClock

from everyo.errors import EveryOProfilerError, EveryOProfilerWarning
from everyo.profiler import (
    Profiler,
    record_function,
)
from everyo.profiler.recording import hooks

# every test runs with the compiled and the pure-Python recorder (see conftest.py)
pytestmark = pytest.mark.usefixtures("recorder_impl")


def _names(p):
    return [e.name for e in p.events]


# -- one profiler at a time, even when started from several threads at once -------------------
def test_concurrent_starts_let_exactly_one_profiler_in(registry):
    n_threads, rounds = 8, 40
    for _ in range(rounds):
        barrier = threading.Barrier(n_threads)
        started, refused = [], []

        def go(i, barrier=barrier, started=started, refused=refused):
            p = Profiler(label=f"t{i}", registry=registry)
            barrier.wait()
            try:
                p.start()
            except RuntimeError:
                refused.append(p)
                return
            started.append(p)

        threads = [threading.Thread(target=go, args=(i,)) for i in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(started) == 1, f"{len(started)} profilers started at once"
        assert len(refused) == n_threads - 1
        assert hooks.holder() is started[0] and hooks.active is not None
        started[0].stop()
        assert hooks.active is None
    # a refused profiler left nothing behind and can still run later
    p = Profiler(registry=registry)
    with p, record_function("after"):
        pass
    assert _names(p) == ["after"]


def test_a_refused_start_keeps_the_running_profiler_and_its_events(registry):
    outer = Profiler(label="outer", registry=registry)
    with outer:
        with record_function("a"):
            pass
        with pytest.raises(RuntimeError, match="nested"):
            Profiler(label="inner", registry=registry).start()
        with record_function("b"):
            pass
    assert _names(outer) == ["a", "b"]
    assert [r.label for r in registry] == ["outer"]


# -- regions close by identity -----------------------------------------------------------------
def test_regions_exited_out_of_order_keep_the_depth_right(registry):
    clock = FakeClock(tick=10)
    with Profiler(clock=clock, registry=registry) as p:
        a, b = record_function("a"), record_function("b")
        a.__enter__()
        b.__enter__()
        a.__exit__(None, None, None)  # out of order
        b.__exit__(None, None, None)
        with record_function("after"):
            with record_function("child"):
                pass
    ev = {e.name: e for e in p.events}
    assert ev["after"].depth == 0
    assert ev["child"].depth == 1
    assert ev["a"].depth == 0 and ev["b"].depth == 0  # b outlived a: it is a sibling, not a child
    batch = p.run.snapshot()
    names = list(batch.name)
    assert names[batch.parent[names.index("child")]] == "after"


def test_a_region_open_across_yield_does_not_shift_later_events(registry):
    def gen():
        with record_function("inside"):
            yield 1
            yield 2

    with Profiler(registry=registry) as p:
        g = gen()
        next(g)
        with record_function("between"):  # runs while "inside" is still open
            pass
        g.close()  # closes "inside" (GeneratorExit)
        with record_function("last"):
            pass
    ev = {e.name: e for e in p.events}
    assert ev["last"].depth == 0
    assert ev["inside"].depth == 0


# -- decorated generators and coroutines --------------------------------------------------------
def test_decorated_generator_times_its_iteration(registry):
    clock = FakeClock()

    @record_function("produce")
    def produce(n):
        for i in range(n):
            clock.advance(1_000)  # work done while the generator runs
            yield i
        clock.advance(500)

    with Profiler(clock=clock, registry=registry) as p:
        out = []
        for x in produce(3):
            clock.advance(7_000)  # the consumer's work is not the generator's
            out.append(x)
    assert out == [0, 1, 2]
    events = [e for e in p.events if e.name == "produce"]
    assert len(events) == 4  # one per resumption: three items, then the return
    assert sum(e.duration_ns for e in events) == 3 * 1_000 + 500
    assert all(e.depth == 0 for e in events)


def test_decorated_generator_forwards_send_throw_and_return(registry):
    @record_function("echo")
    def echo():
        got = yield "ready"
        try:
            yield got * 2
        except KeyError:
            yield "caught"
        return "done"

    with Profiler(registry=registry) as p:
        g = echo()
        assert next(g) == "ready"
        assert g.send(21) == 42
        assert g.throw(KeyError("k")) == "caught"
        with pytest.raises(StopIteration) as stop:
            next(g)
    assert stop.value.value == "done"
    assert _names(p).count("echo") == 4


def test_decorated_coroutine_times_its_steps_not_other_tasks(registry):
    clock = FakeClock()

    @record_function("fetch")
    async def fetch(work_ns):
        clock.advance(work_ns)
        await asyncio.sleep(0)
        clock.advance(work_ns)
        return work_ns

    @record_function("other")
    async def other():
        clock.advance(5_000)
        await asyncio.sleep(0)
        clock.advance(5_000)

    async def main():
        return await asyncio.gather(fetch(100), other(), fetch(300))

    with Profiler(clock=clock, registry=registry) as p:
        result = asyncio.run(main())
    assert result[0] == 100 and result[2] == 300
    fetch_ns = sum(e.duration_ns for e in p.events if e.name == "fetch")
    other_ns = sum(e.duration_ns for e in p.events if e.name == "other")
    assert fetch_ns == 2 * 100 + 2 * 300  # not the 10 µs of the interleaved task
    assert other_ns == 10_000
    assert all(e.depth == 0 for e in p.events)


def test_record_function_refuses_async_generators():
    async def agen():
        yield 1

    with pytest.raises(EveryOProfilerError, match="async generator"):
        record_function("x")(agen)


def test_decorated_functions_keep_working_without_a_profiler():
    @record_function("g")
    def g():
        yield from range(3)

    @record_function("c")
    async def c():
        return 5

    assert list(g()) == [0, 1, 2]
    assert asyncio.run(c()) == 5


# -- depth limit ------------------------------------------------------------------------------
def test_regions_nested_past_the_depth_limit_are_refused_clearly(registry, monkeypatch):
    import everyo.profiler.recording.regions as regions

    monkeypatch.setattr(regions, "MAX_DEPTH", 50)
    with Profiler(registry=registry) as p:
        with contextlib.ExitStack() as stack:
            for _ in range(50):
                stack.enter_context(record_function("deep"))
            with pytest.raises(EveryOProfilerError, match="deeper than 50"):
                stack.enter_context(record_function("too deep"))
        with record_function("after"):
            pass
    depths = [e.depth for e in p.events]
    assert min(depths) == 0 and max(depths) == 49
    assert p.events[-1].name == "after" and p.events[-1].depth == 0


def test_the_default_depth_limit_fits_the_stored_column():
    import numpy as np

    from everyo.profiler.recording.packing import DEPTH_BITS
    from everyo.profiler.recording.regions import MAX_DEPTH
    from everyo.profiler.storage.store import CORE_COLUMNS

    dtype = dict(CORE_COLUMNS)["depth"]
    assert MAX_DEPTH <= np.iinfo(dtype).max
    assert MAX_DEPTH < 1 << DEPTH_BITS


# -- memory budget ----------------------------------------------------------------------------
def test_metadata_counts_in_the_run_size(registry):
    with Profiler(registry=registry) as plain:
        for _ in range(1000):
            with record_function("r"):
                pass
    with Profiler(registry=registry) as tagged:
        for i in range(1000):
            with record_function("r", batch=i, note="x" * 40):
                pass
    per_plain = plain.run.nbytes / 1000
    per_tagged = tagged.run.nbytes / 1000
    assert per_tagged > per_plain + 150  # the dicts, their keys' slots and values


def test_budget_is_checked_while_a_run_grows(registry):
    registry.budget_bytes = 200_000
    with Profiler(label="old", registry=registry):
        for _ in range(3000):
            with record_function("r"):
                pass
    assert [r.label for r in registry] == ["old"]
    clock = FakeClock(tick=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with Profiler(label="growing", registry=registry, clock=clock) as p:
            for i in range(12_000):
                with record_function("r", i=i):
                    pass
            # the finished run was evicted while this one was still running
            assert [r.label for r in registry] == ["growing"]
    over = [w for w in caught if issubclass(w.category, EveryOProfilerWarning)]
    assert any("growing" in str(w.message) and "budget" in str(w.message) for w in over)
    assert len(p.events) == 12_000  # nothing recorded was dropped


# -- a profiler started again resumes its run -----------------------------------------------------
def test_a_restarted_profiler_adds_to_its_run_on_one_time_axis(registry):
    clock = FakeClock(tick=10)
    p = Profiler(clock=clock, registry=registry, warmup=1)
    with p:
        with record_function("skipped"):
            pass
        with record_function("a"):
            pass
        p.step()
    first_wall = p.run.wall_ns
    clock.advance(1_000)
    with p:
        with pytest.raises(EveryOProfilerError, match="already running"):
            p.start()
        with record_function("b"):
            pass
        p.step()
    assert [e.name for e in p.events] == ["a", "b"]
    a, b = p.events
    assert b.start_ns > a.start_ns + 1_000  # the same origin: b comes after the pause
    assert p.run.status == "completed" and p.run.wall_ns > first_wall + 1_000
    assert p.run.skipped == 1 and len(p.run.step_ns) == 2
    assert [r for r in registry] == [p.run]


def test_fractional_warmup_is_truncated_and_bad_ones_are_refused(registry):
    assert Profiler(warmup=2.9, registry=registry).warmup == 2
    for bad in (-1, -0.5, float("nan"), float("inf"), "3", True):
        with pytest.raises(ValueError, match="warmup"):
            Profiler(warmup=bad, registry=registry)
