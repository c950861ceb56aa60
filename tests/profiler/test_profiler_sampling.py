"""Sampled Python stacks: capture, attribution to events, hot lines, export and load.

Shares measured from samples are compared with the truth the recorder measured in the same run
(each planted function is also a recorded region), with a tolerance from the sampling
statistics: a share p estimated from n samples has a standard error of sqrt(p(1-p)/n).
"""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import everyo.profiler as ep
from everyo.errors import EveryOProfilerError
from everyo.profiler.sampling.attribution import owners
from everyo.profiler.sampling.samples import SampleStore
from everyo.profiler.storage.run import Run
from everyo.profiler.storage.store import EventStore

pytestmark = pytest.mark.usefixtures("recorder_impl")


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


CPU_NS: dict[str, int] = {}


def planted(name: str, seconds: float) -> None:
    t0 = time.thread_time_ns()
    with ep.record_function(name):
        spin(seconds)
    CPU_NS[name] = CPU_NS.get(name, 0) + time.thread_time_ns() - t0


def planted_a():
    planted("a", 0.003)


def planted_b():
    planted("b", 0.0015)


def planted_c():
    planted("c", 0.0005)


def _function_share(hot, name: str) -> float:
    return sum(r["total_share"] for r in hot.lines if r["function"] == name)


def _tolerance(p: float, n: int) -> float:
    return 5 * (p * (1 - p) / n) ** 0.5 + 0.01  # 5 standard errors, and 1 point of edge effects


def _paths(*wanted: str) -> list:
    """The sampler paths among ``wanted`` that run here: the compiled one (the C timer thread
    and pending call) where it was built, the timer signal, the sampling thread."""
    from everyo.profiler.sampling import sampler

    return [p for p in wanted if p != "c" or sampler.compiled() is not None]


@pytest.fixture(params=_paths("c", "signal", "thread"))
def sampler_path(request, monkeypatch):
    """Every sampler path: how the main thread is sampled (forced by EVERYO_SAMPLER)."""
    monkeypatch.setenv("EVERYO_SAMPLER", request.param)
    return request.param


@pytest.fixture(params=_paths("c", "signal"))
def main_thread_path(request, monkeypatch):
    """The two paths that sample the main thread where it is: compiled, and the fallback."""
    monkeypatch.setenv("EVERYO_SAMPLER", request.param)
    return request.param


def test_planted_shares_are_recovered(registry, sampler_path):
    """Each planted function's share from the samples against the truth measured in the same
    run: the signal path in wall mode against the recorded (wall) shares; the sampling thread
    in CPU mode against the CPU time each call measured itself (its samples after a gap are
    capped, so on a busy machine, where the process is preempted, CPU time is what it can
    see). A pure Python workload: the sampling thread's lean towards GIL-releasing lines does
    not apply."""
    CPU_NS.clear()
    mode = "cpu" if sampler_path == "thread" else "wall"
    with ep.profile(sample=0.5, sample_mode=mode, registry=registry) as p:
        assert p._sampler.main_path == sampler_path
        t_end = time.perf_counter() + 0.8
        while time.perf_counter() < t_end:
            with ep.record_function("region"):
                planted_a()
                planted_b()
                planted_c()
    hot = ep.hot_lines(p.run, "region", top=None)
    if hot.effective_samples < 30:  # a few samples after very long waits carry all the weight
        pytest.skip(f"machine too busy to judge: {hot.effective_samples:.0f} effective samples")
    assert hot.effective_samples <= hot.samples + 1e-6
    recorded = {r["name"]: r["total_ms"] for r in p.run.summary()}
    cpu_total = sum(CPU_NS.values())
    for name in "abc":
        if mode == "wall":
            truth = recorded[name] / recorded["region"]
        else:
            truth = CPU_NS[name] / cpu_total
        share = _function_share(hot, f"planted_{name}")
        n = hot.effective_samples  # samples weighted by the time each stands for
        assert abs(share - truth) <= _tolerance(truth, n), (name, share, truth, n)
    top = hot.top_line
    assert top["function"] == "spin" and "perf_counter" in top["source"]


def _planted_region(seconds: float) -> None:
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        with ep.record_function("region"):
            planted_a()
            planted_b()
            planted_c()


def test_the_compiled_and_python_paths_give_the_same_attribution(registry, monkeypatch):
    """The planted workload sampled by the compiled path and by its pure-Python fallback (the
    timer signal): each function's and each line's share agree between the two within their
    sampling errors."""
    if len(_paths("c", "signal")) < 2:
        pytest.skip("the compiled sampler was not built here")
    got = {}
    for path in ("c", "signal"):
        monkeypatch.setenv("EVERYO_SAMPLER", path)
        with ep.profile(sample=0.5, registry=registry) as p:
            assert p._sampler.main_path == path
            _planted_region(0.8)
        hot = ep.hot_lines(p.run, "region", top=None)
        if hot.effective_samples < 30:
            pytest.skip(f"machine too busy to judge: {hot.effective_samples:.0f} effective samples")
        shares = {f"planted_{name}": _function_share(hot, f"planted_{name}") for name in "abc"}
        for r in hot.lines:  # and each line's own share
            shares[(r["file"], r["line"], r["function"])] = r["self_share"]
        got[path] = (shares, hot.effective_samples)
    (c, n_c), (py, n_py) = got["c"], got["signal"]
    for got_path in (c, py):
        assert max((k for k in got_path if isinstance(k, str)), key=got_path.get) == "planted_a"
    top_c, top_py = (max((k for k in d if isinstance(k, tuple)), key=d.get) for d in (c, py))
    assert top_c == top_py and top_c[2] == "spin"
    for key in c.keys() | py.keys():
        a, b = c.get(key, 0.0), py.get(key, 0.0)
        p = (a + b) / 2
        se = (p * (1 - p) * (1 / n_c + 1 / n_py)) ** 0.5
        assert abs(a - b) <= 5 * se + 0.02, (key, a, b, n_c, n_py)


def test_the_compiled_walk_finds_the_stack_the_python_walk_finds():
    """One sample taken by the compiled sampler and one by the Python walk at the same line (a
    plain call, a generator, a coroutine): the same interned stack, and rows as the fallback
    writes them (the thread's id, one interval for the first sample, then the time since)."""
    import asyncio
    import sys

    from everyo.profiler.sampling import sampler

    if sampler.compiled() is None:
        pytest.skip("the compiled sampler was not built here")
    store = SampleStore()
    py = sampler.Sampler(store, 1.0, "wall", time.perf_counter_ns, lambda: 0, EventStore(()))
    c = sampler.compiled().MainSampler(1_000_000, 7, None, py._intern_main, None, 1000)

    def both():  # (one line: this frame is at the same line for both walks)
        return (c.sample(), py._stack_of(sys._getframe()))[1]

    def leaf():
        return both()

    def gen():
        yield both()

    async def coro():
        await asyncio.sleep(0)
        return both()

    expected = [leaf(), next(gen()), asyncio.run(coro())]
    expected += [leaf() for _ in range(3)]  # (a stack seen before: the same id again)
    t, stack, wall, cpu = (
        np.frombuffer(b, d) for b, d in zip(c.drain(), (np.int64, np.int32, np.int64, np.int64))
    )
    assert stack.tolist() == expected
    assert len(set(expected)) == 4 and len(set(expected[3:])) == 1
    expected = expected[:3]
    names = [[store.frames[f][2] for f in store.frames_of(sid)][-2:] for sid in expected]
    assert [n[-1].rsplit(".", 1)[-1] for n in names] == ["both", "both", "both"]
    assert [n[0].rsplit(".", 1)[-1] for n in names] == ["leaf", "gen", "coro"]
    assert wall[0] == 1_000_000 and cpu[0] == 0
    assert (np.diff(t) == wall[1:]).all() and (wall[1:] > 0).all()
    assert c.errors == 0 and c.buffered == 0


@pytest.mark.parametrize("raised", [None, ValueError, KeyboardInterrupt])
def test_a_stack_not_interned_loses_a_sample_but_an_exception_reaches_the_program(raised):
    """The compiled sampler's pending call runs Python code for a stack it has not seen: an
    intern that gives -1 (it could not) costs that sample only; an exception out of it (the
    Python side clears its own, so it is the program's: its signal handler ran meanwhile, or a
    Ctrl-C) is raised where the thread is (issue 44: it was counted as a lost sample)."""
    from everyo.profiler.sampling import sampler

    if sampler.compiled() is None:
        pytest.skip("the compiled sampler was not built here")

    raising = [raised]

    def intern(frame):
        if raising[0] is None:
            return -1
        raising[0] = None  # (once: a second tick must not raise after the check)
        raise raised("while interning")

    c = sampler.compiled().MainSampler(500_000, 1, None, intern, None, 1000)
    c.start()
    try:
        if raised is not None:
            with pytest.raises(raised, match="while interning"):
                spin(5.0)  # (interrupted at the first sample)
        else:
            end = time.perf_counter() + 5.0
            while c.errors < 3 and time.perf_counter() < end:
                spin(0.01)
            assert c.errors >= 3 and c.buffered == 0
    finally:
        c.stop()


@pytest.mark.parametrize("whose", ["program", "own"])
def test_the_programs_signal_handler_exception_is_never_a_lost_sample(
    registry, main_thread_path, monkeypatch, whose
):
    """An exception the program's signal handler raises while the sampler runs Python code
    (interning a new stack) reaches the program; the sampler's own error loses one sample."""
    import signal

    from recording_checks import ProgramError, program_handler, raise_from_handler

    from everyo.profiler.sampling import sampler

    real, calls = sampler.Sampler._intern_stack, []

    def intern(self, frame):
        calls.append(1)
        if len(calls) == 3:
            if whose == "program":
                raise_from_handler("while interning")
            raise ValueError("the sampler's own")
        return real(self, frame)

    monkeypatch.setattr(sampler.Sampler, "_intern_stack", intern)
    previous = signal.signal(signal.SIGUSR2, program_handler)
    caught = 0
    try:
        with ep.profile(sample=0.2, registry=registry) as p:
            end = time.perf_counter() + 10.0
            while len(calls) < 4 and time.perf_counter() < end:
                try:
                    for depth in range(1, 40):  # new stacks: each is interned
                        _recurse(depth)
                except ProgramError:
                    caught += 1
    finally:
        signal.signal(signal.SIGUSR2, previous)
    assert len(calls) >= 4
    errors = p._sampler.errors if p._sampler is not None else None
    if whose == "program":
        assert caught == 1
    else:
        assert caught == 0, errors


def _recurse(n: int) -> None:
    if n:
        _recurse(n - 1)
    else:
        spin(0.002)


def test_the_sampling_thread_sleeps_while_no_other_thread_records(
    registry, monkeypatch, main_thread_path
):
    """With the main thread sampled where it is, the sampling thread takes nothing (and so
    never asks for the GIL) until another thread records an event; the switch interval is
    left alone."""
    import sys

    from everyo.profiler.sampling import sampler

    taken = []
    take = sampler.Sampler.take
    monkeypatch.setattr(sampler.Sampler, "take", lambda self: (taken.append(1), take(self))[1])
    switch = sys.getswitchinterval()

    def work():
        with ep.record_function("worker"):
            spin(0.1)

    with ep.profile(sample=0.5, registry=registry) as p:
        with ep.record_function("main"):
            spin(0.1)  # 200 ticks
        assert sys.getswitchinterval() == switch
        assert taken == []
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
    assert taken
    assert ep.hot_lines(p.run, "worker").samples > 0
    assert ep.hot_lines(p.run, "main").samples > 0


def test_a_wrong_sampler_override_says_what_to_do(monkeypatch):
    monkeypatch.setenv("EVERYO_SAMPLER", "fast")
    with pytest.raises(EveryOProfilerError, match="EVERYO_SAMPLER='fast'.*c .*signal.*thread"):
        ep.Profiler(sample=1)
    ep.Profiler()  # (no sampling: the variable does not matter)
    monkeypatch.setenv("EVERYO_SAMPLER", "c")
    monkeypatch.setenv("EVERYO_PURE_PYTHON", "1")
    with pytest.raises(EveryOProfilerError, match="EVERYO_SAMPLER=c.*not built or EVERYO_PURE"):
        ep.Profiler(sample=1)


def _synthetic_run(events, samples) -> Run:
    """A run from ``(name, start, dur, depth, tid)`` events and ``(t, tid, wall)`` samples."""
    names = sorted({e[0] for e in events})
    tids = sorted({e[4] for e in events} | {s[1] for s in samples})
    cols = {
        "start_ns": [e[1] for e in events],
        "dur_ns": [e[2] for e in events],
        "key": np.array([names.index(e[0]) for e in events], np.int32),
        "thread": np.array([tids.index(e[4]) for e in events], np.int16),
        "depth": np.array([e[3] for e in events], np.int16),
    }
    store = EventStore.from_columns(
        cols, [("user", n, "") for n in names], threads=[(t, f"t{t}") for t in tids]
    )
    run = Run(store, label="synthetic", options={"sample_mode": "wall"})
    s = SampleStore()
    f_outer = s.frame_id("o", "/x/app.py", 10, "outer_fn")
    f_inner = s.frame_id("i", "/x/app.py", 20, "inner_fn")
    outer = s.stack_id(-1, f_outer)
    inner = s.stack_id(outer, f_inner)
    s.append(
        {
            "t_ns": [t for t, _, _ in samples],
            "tid": [tid for _, tid, _ in samples],
            "stack": [inner if t % 2 else outer for t, _, _ in samples],
            "wall_ns": [w for _, _, w in samples],
            "cpu_ns": [w for _, _, w in samples],
        }
    )
    run.samples = s
    run.finish()
    return run


def test_attribution_is_the_innermost_open_event_on_the_samples_thread():
    events = [
        ("outer", 0, 100, 0, 7),
        ("inner", 10, 20, 1, 7),  # [10, 30)
        ("inner", 50, 10, 1, 7),  # [50, 60)
        ("leaf", 50, 5, 2, 7),  # starts with its parent
        ("other", 0, 100, 0, 8),  # another thread, same times
    ]
    samples = [(5, 7, 1), (15, 7, 1), (30, 7, 1), (52, 7, 1), (57, 7, 1), (99, 7, 1)]
    samples += [(100, 7, 1), (15, 8, 1), (15, 9, 1)]
    run = _synthetic_run(events, samples)
    batch = run.snapshot()
    cols = run.samples.read()
    got = [batch.name[o] if o >= 0 else None for o in owners(batch, cols["t_ns"], cols["tid"])]
    assert got == ["outer", "inner", "outer", "leaf", "inner", "outer", None, "other", None]
    inner = ep.hot_lines(run, "inner")
    assert (inner.calls, inner.event_ns, inner.samples) == (2, 30, 3)  # the leaf's sample too
    assert ep.hot_lines(run, "inner", self_only=True).samples == 2
    assert ep.hot_lines(run, "outer").samples == 6


def test_threads_keep_their_own_samples(registry, main_thread_path):
    def work(name, seconds):
        with ep.record_function(name):
            spin(seconds)

    with ep.profile(sample=0.5, registry=registry) as p:
        with ep.record_function("main-warm"):  # the threads start after the main one's event
            spin(0.01)
        threads = [
            threading.Thread(target=work, args=("worker-1", 0.25)),
            threading.Thread(target=work, args=("worker-2", 0.25)),
        ]
        for t in threads:
            t.start()
        with ep.record_function("main-work"):
            spin(0.25)
        for t in threads:
            t.join()
    run = p.run
    batch, cols, s = run.snapshot(), run.samples.read(), run.samples
    owner = owners(batch, cols["t_ns"], cols["tid"])
    for name in ("worker-1", "worker-2", "main-work"):
        assert ep.hot_lines(run, name).samples > 0, name
        mine = np.flatnonzero((owner >= 0) & (batch.name[np.maximum(owner, 0)] == name))
        assert len(set(cols["tid"][mine].tolist())) == 1, name  # one thread's samples
        in_work = [
            any(s.frames[f][2].endswith(".work") for f in s.frames_of(sid))
            for sid in cols["stack"][mine]
        ]
        assert all(in_work) if name != "main-work" else not any(in_work), name


def test_a_wait_on_the_main_thread_keeps_its_time(registry, main_thread_path):
    """A region that sleeps (the GIL released, no bytecode run): its samples stand for the
    whole wait, the first one included (the compiled path samples once the sleep returns,
    for the time since its previous sample or since the start; the signal path during it)."""
    with ep.profile(sample=1, registry=registry) as p:
        spin(0.01)
        with ep.record_function("wait"):
            time.sleep(0.2)
        with ep.record_function("busy"):
            spin(0.02)
    wait, busy = ep.hot_lines(p.run, "wait"), ep.hot_lines(p.run, "busy")
    assert wait.samples > 0
    assert 0.75 <= wait.sampled_ns / wait.event_ns <= 1.25, (wait.sampled_ns, wait.event_ns)
    assert busy.sampled_ns <= 1.25 * busy.event_ns + 2e6  # (none of the wait's time)


@pytest.mark.parametrize("error", [ValueError("planned"), KeyboardInterrupt()])
def test_a_failing_profile_keeps_its_samples(registry, error, main_thread_path):
    import signal

    with pytest.raises(type(error)):
        with ep.profile(sample=0.5, registry=registry) as p:
            with ep.record_function("doomed"):
                spin(0.2)
                raise error
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # the timer stopped with it
    assert p.run.status == "failed"
    assert len(p.run.samples) > 0
    assert ep.hot_lines(p.run, "doomed").samples > 0


def test_samples_count_in_the_memory_budget(registry):
    with ep.profile(sample=0.5, registry=registry) as p:
        with ep.record_function("x"):
            spin(0.2)
    assert p.run.samples.nbytes > 0
    assert p.run.nbytes == p.run.store.nbytes + p.run.samples.nbytes


def test_raw_export_and_load_keep_the_samples(registry, tmp_path):
    with ep.profile(sample=0.5, sample_mode="cpu", registry=registry) as p:
        with ep.record_function("x"):
            spin(0.05)
    path = p.export_json(tmp_path / "run.json.gz", format="raw")
    back = ep.load(path)
    a, b = p.run.samples.read(), back.samples.read()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    assert back.samples.frames == p.run.samples.frames
    assert back.options["sample_mode"] == "cpu"
    assert ep.hot_lines(back, "x").lines == ep.hot_lines(p.run, "x").lines


def test_a_damaged_samples_part_names_the_file(registry, tmp_path):
    import json

    with ep.profile(sample=0.5, registry=registry) as p:
        spin(0.01)
    path = p.export_json(tmp_path / "run.json", format="raw")
    data = json.loads(path.read_text())
    data["samples"]["stacks"] = [[5, 0]]
    path.write_text(json.dumps(data))
    with pytest.raises(ep.EveryOExportError if hasattr(ep, "EveryOExportError") else Exception):
        ep.load(path)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sample": -1},
        {"sample": "fast"},
        {"sample": 0},
        {"sample": 1, "sample_mode": "gpu"},
        {"sample": np.bool_(True)},
        {"sample": np.float64("nan")},
    ],
)
def test_bad_sampling_options_say_what_to_do(kwargs):
    with pytest.raises(EveryOProfilerError, match="sample"):
        ep.Profiler(**kwargs)


@pytest.mark.parametrize("sample", [np.int64(2), np.float32(1.0), np.int32(5), 2.5])
def test_a_numpy_number_is_a_sampling_interval(sample):
    """Issue 44: sample=np.int64(2) and np.float32(1.0) were refused."""
    assert ep.Profiler(sample=sample).sample_ms == float(sample)
    assert type(ep.Profiler(sample=sample).sample_ms) is float


def test_hot_lines_needs_samples_and_a_known_event(registry):
    with ep.profile(registry=registry) as p:
        with ep.record_function("x"):
            pass
    with pytest.raises(EveryOProfilerError, match="sample=1"):
        ep.hot_lines(p.run, "x")
    with ep.profile(sample=1, registry=registry) as p:
        with ep.record_function("x"):
            pass
    with pytest.raises(EveryOProfilerError, match="no event named 'y'.*'x'"):
        ep.hot_lines(p.run, "y")
    with pytest.raises(EveryOProfilerError, match="row number"):
        ep.hot_lines(p.run, 5)
    with pytest.raises(EveryOProfilerError, match="hide="):
        ep.hot_lines(p.run, "x", hide="all")
    text = str(ep.hot_lines(p.run, "x"))  # too short for a sample: says so
    assert "no samples inside it" in text or "hot lines of 'x'" in text


def test_everyo_frames_are_folded_unless_asked(registry):
    import everyo as eo

    model = eo.Sequential(eo.Linear(64, 64, seed=0), eo.ReLU(), eo.Linear(64, 64, seed=1))
    x = eo.zeros(256, 64)
    with ep.profile(sample=0.5, registry=registry) as p:
        t_end = time.perf_counter() + 0.2
        while time.perf_counter() < t_end:
            model(x)
    folded = ep.hot_lines(p.run, "Sequential", top=None)
    assert folded.samples > 0
    # everyo's package folder (a clone into a folder named everyo holds this file too); a
    # folded frame spends no time itself (one kept above library frames names the operation)
    ours = os.path.join(os.path.dirname(eo.__file__), "")
    assert not any(r["file"].startswith(ours) and r["self_ns"] > 0 for r in folded.lines)
    shown = ep.hot_lines(p.run, "Sequential", hide=None, top=None)
    assert any(r["file"].startswith(ours) for r in shown.lines)


def test_the_main_thread_is_sampled_where_it_is_not_where_it_releases_the_gil(
    registry, main_thread_path
):
    """A loop that is mostly pure Python with a short NumPy call: the signal path's share of
    the NumPy region stays close to its recorded share (the sampling thread's would not)."""
    x = np.ones((64, 64))

    def rows(n):
        s = 0.0
        for i in range(n):
            s += i**0.5
        return s

    with ep.profile(sample=0.5, registry=registry) as p:
        assert p._sampler.main_path == main_thread_path
        t_end = time.perf_counter() + 0.6
        while time.perf_counter() < t_end:
            with ep.record_function("step"):
                with ep.record_function("python"):
                    rows(3000)
                with ep.record_function("numpy"):
                    x @ x
    totals = {r["name"]: r["total_ms"] for r in p.run.summary()}
    truth = totals["numpy"] / totals["step"]
    step, numpy_part = ep.hot_lines(p.run, "step"), ep.hot_lines(p.run, "numpy")
    share = numpy_part.sampled_ns / step.sampled_ns
    assert abs(share - truth) <= _tolerance(truth, step.effective_samples) + 0.02, (share, truth)


def test_a_programs_own_alarm_handler_is_left_alone(registry, main_thread_path):
    import signal

    def handler(signum, frame):
        pass

    old = signal.signal(signal.SIGALRM, handler)
    try:
        with ep.profile(sample=1, registry=registry) as p:
            # the compiled sampler uses no signal; the fallback leaves it to the thread
            assert p._sampler.main_path == ("c" if main_thread_path == "c" else "thread")
            spin(0.3)
        assert signal.getsignal(signal.SIGALRM) is handler
        assert len(p.run.samples) > 0
    finally:
        signal.signal(signal.SIGALRM, old)
    with ep.profile(sample=1, registry=registry) as p:
        uses_signal = p._sampler.main_path == "signal"
        assert (signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL) == uses_signal
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_generator_and_async_regions_keep_their_samples(registry, main_thread_path):
    import asyncio

    @ep.record_function("gen")
    def gen():
        for _ in range(3):
            spin(0.02)
            yield 1

    @ep.record_function("coro")
    async def coro():
        spin(0.03)
        await asyncio.sleep(0)
        spin(0.03)

    with ep.profile(sample=0.5, registry=registry) as p:
        assert sum(gen()) == 3
        asyncio.run(coro())
    for name in ("gen", "coro"):
        hot = ep.hot_lines(p.run, name)
        assert hot.samples > 0, name
        assert hot.top_line["function"] == "spin", (name, hot.top_line)


CLI_SCRIPT = """
import sys, time
import everyo.profiler as ep

def hot_loop():
    s = 0.0
    for i in range(30_000):
        s += i ** 0.5  # the planted hot line
    return s

end = time.perf_counter() + float(sys.argv[1])
while time.perf_counter() < end:
    with ep.record_function("prepare"):
        hot_loop()
"""


def test_cli_prints_the_hot_lines_of_the_top_rows(tmp_path, capsys):
    from everyo.__main__ import main

    script = tmp_path / "job.py"
    script.write_text(CLI_SCRIPT)
    assert main(["profile", str(script), "0.3", "--sample", "0.5"]) == 0
    out = capsys.readouterr().out
    table, _, hot = out.partition("hot lines of 'prepare'")
    assert "prepare" in table and hot, out
    first = hot.splitlines()[2]  # the first line under the header row
    assert "job.py:8" in first and "the planted hot line" in first, out


def test_cli_sample_option_forms(tmp_path, capsys):
    from everyo.__main__ import main

    script = tmp_path / "job.py"
    script.write_text(CLI_SCRIPT)
    assert main(["profile", str(script), "0.05", "--sample", "--sample-mode", "cpu"]) == 0
    run = ep.runs.latest
    assert run.options["sample_ms"] == 1.0 and run.options["sample_mode"] == "cpu"
    assert main(["profile", "--sample=2", str(script), "0.05"]) == 0
    assert ep.runs.latest.options["sample_ms"] == 2.0
    assert main(["profile", "--sample", str(script), "0.05"]) == 0  # a bare --sample first
    assert ep.runs.latest.options["sample_ms"] == 1.0
    assert main(["profile", "--sample", "5", str(script), "0.05"]) == 0
    assert ep.runs.latest.options["sample_ms"] == 5.0
    capsys.readouterr()
    assert main(["profile", str(script), "0.05", "--sample=0"]) == 2
    assert "--sample takes the interval in milliseconds" in capsys.readouterr().err
    assert main(["profile", str(script), "0.05", "--sample-mode", "gpu"]) == 2
    assert "--sample-mode takes wall" in capsys.readouterr().err


def test_chrome_trace_carries_the_samples_as_nested_slices(registry, tmp_path):
    import json

    with ep.profile(sample=0.5, registry=registry) as p:
        for _ in range(10):
            with ep.record_function("step"):
                planted_a()
                planted_b()
    path = p.export_chrome_trace(tmp_path / "t.json")
    events = json.loads(path.read_text())["traceEvents"]
    sampled = [e for e in events if e.get("cat") == "everyo.sample"]
    assert sampled and {e["ph"] for e in sampled} == {"b", "e"}
    open_by_thread: dict = {}
    for e in sampled:  # in file order: each thread's slices nest like a call stack
        stack = open_by_thread.setdefault(e["tid"], [])
        if e["ph"] == "b":
            stack.append((e["name"], e["ts"]))
        else:
            name, ts = stack.pop()
            assert name == e["name"] and ts <= e["ts"]
    assert all(not s for s in open_by_thread.values())
    assert {e["tid"] for e in sampled} == {tid for tid, _ in p.run.store.threads}
    names = {e["name"].split(" (")[0] for e in sampled}
    assert {"planted_a", "planted_b", "spin"} <= names
    back = ep.load(path)  # the slices are not events
    assert back.num_events == p.run.num_events


def test_the_whole_run_without_events(registry):
    with ep.profile(sample=0.5, registry=registry) as p:
        spin(0.2)  # no event at all: only the samples say where the time went
    hot = ep.hot_lines(p.run, None)
    assert hot.event == "the run" and hot.samples > 0
    assert hot.top_line["function"] == "spin"


def test_a_step_can_be_asked_why(registry):
    with ep.profile(sample=0.5, registry=registry) as p:
        spin(0.05)
        ep.step()
        for _ in range(10):  # (30 ms: samples inside it even on a busy machine)
            planted_a()
        spin(0.05)
        ep.step()
    first, second = ep.hot_lines(p.run, None, step=0), ep.hot_lines(p.run, None, step=1)
    assert first.event == "step 0" and first.samples > 0 and second.samples > 0
    fns = {r["function"] for r in second.lines}
    assert "planted_a" in fns and "planted_a" not in {r["function"] for r in first.lines}
    inside_a = ep.hot_lines(p.run, "a", step=1)
    assert 0 < inside_a.samples < second.samples
    with pytest.raises(EveryOProfilerError, match="2 step"):
        ep.hot_lines(p.run, None, step=2)


def test_samples_alone_hold_the_budget_while_recording(monkeypatch, main_thread_path):
    from everyo.errors import EveryOProfilerWarning
    from everyo.profiler.sampling import sampler

    monkeypatch.setattr(sampler, "_FLUSH_SAMPLES", 8)
    small = ep.RunRegistry(budget_bytes=2_000)
    with pytest.warns(EveryOProfilerWarning, match="still recording"):
        with ep.profile(sample=0.5, registry=small) as p:
            end = time.perf_counter() + 2.0
            while len(p.run.samples) < 100 and time.perf_counter() < end:
                spin(0.01)  # no event at all: only the samples grow
            assert p._over_budget  # said while the run was still recording


def test_a_long_run_draws_a_bounded_share_of_its_samples_into_the_trace(
    registry, monkeypatch, tmp_path
):
    import json

    from everyo.profiler.export import chrome_samples

    with ep.profile(sample=0.5, registry=registry) as p:
        for _ in range(20):
            with ep.record_function("step"):
                planted_a()
                planted_b()

    def opened(cap: int) -> int:
        monkeypatch.setattr(chrome_samples, "MAX_SAMPLES", cap)
        path = p.export_chrome_trace(tmp_path / f"cap{cap}.json")
        events = json.loads(path.read_text())["traceEvents"]
        return sum(1 for e in events if e.get("cat") == "everyo.sample" and e["ph"] == "b")

    taken = len(p.run.samples)
    assert taken >= 20
    every, drawn = opened(10**9), opened(taken // 4)  # every 4th sample of each thread
    assert 0 < drawn < every
    assert ep.load(tmp_path / f"cap{taken // 4}.json").num_events == p.run.num_events


def test_a_thread_that_takes_a_dead_threads_ident_is_not_filed_under_it(registry):
    """Issue 44, case 3: a profiled thread ends and a new thread (that records nothing) gets
    its ident; the sampling thread must not sample the new one under the dead one's id."""
    store = None
    for _ in range(20):  # (the ident is reused when the new thread gets the old one's stack)
        # (a long interval: no sample falls between the first's end and the second's start)
        with ep.profile(sample=20, registry=registry) as p:

            def records():
                with ep.record_function("recorded"):
                    spin(0.05)

            first = threading.Thread(target=records)
            first.start()
            first.join()
            second = threading.Thread(target=recycled_ident_spins, args=(0.4,))
            second.start()
            second.join()
        if second.ident == first.ident:
            store = p.run.samples
            break
    if store is None:
        pytest.skip("no thread ident was reused here")
    rows = store.read()
    names = {
        store.frames[f][2].rsplit(".", 1)[-1]
        for sid, tid in zip(rows["stack"], rows["tid"])
        if tid == first.native_id
        for f in store.frames_of(int(sid))
    }
    assert "recycled_ident_spins" not in names


def recycled_ident_spins(seconds: float) -> None:
    spin(seconds)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_the_signal_fallback_leaves_the_programs_own_alarm_alone(registry, monkeypatch):
    """Issue 44, case 4: the profiled code installs its own SIGALRM handler and timer while the
    fallback samples with SIGALRM; stop() leaves both as the program set them, and says so."""
    monkeypatch.setenv("EVERYO_SAMPLER", "signal")
    rang = []

    def alarm(signum, frame):
        rang.append(signum)

    previous = signal.getsignal(signal.SIGALRM)
    try:
        with pytest.warns(ep.EveryOProfilerWarning, match="installed its own SIGALRM"):
            with ep.profile(sample=1, registry=registry):
                spin(0.02)
                signal.signal(signal.SIGALRM, alarm)
                signal.setitimer(signal.ITIMER_REAL, 0.3)
        assert signal.getsignal(signal.SIGALRM) == alarm
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 0  # (the program's timer runs on)
        end = time.perf_counter() + 5
        while not rang and time.perf_counter() < end:
            spin(0.01)
        assert rang == [signal.SIGALRM]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_the_signal_fallback_puts_the_signal_back_when_it_is_still_its_own(registry, monkeypatch):
    monkeypatch.setenv("EVERYO_SAMPLER", "signal")
    before = signal.getsignal(signal.SIGALRM)
    with ep.profile(sample=1, registry=registry):
        spin(0.02)
    assert signal.getsignal(signal.SIGALRM) == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_the_memory_budget_counts_the_samplers_stack_tables(registry, main_thread_path):
    """Issue 44: the sampler's look-up tables (whole stacks keyed by code and offset) were not
    counted, and deep varied recursion grew the process 1.5-1.9x what the budget counted."""
    from everyo.profiler.sampling import samples as samples_module

    def stored(s):
        return (
            len(s) * samples_module._ROW_BYTES
            + len(s.frames) * samples_module._FRAME_BYTES
            + len(s.stacks) * samples_module._STACK_BYTES
        )

    with ep.profile(sample=0.1, registry=registry) as p:
        end = time.perf_counter() + 10
        while (
            time.perf_counter() < end
            and len(p._sampler._seen) + (p._sampler._c.stacks if p._sampler._c is not None else 0)
            < 50
        ):
            for depth in range(1, 200, 9):  # many deep stacks, each seen anew
                _recurse(depth)
        p._sampler.flush()
        s = p.run.samples
        tables = s.nbytes - stored(s)
        assert tables >= 50 * 8 * 2 * 20  # (50 stacks of 20+ frames: two words each at least)
        assert p.run.nbytes > tables  # (the run counts them: the budget reads run.nbytes)
    assert s.nbytes == stored(s)  # (the tables go with the sampler at stop)


def test_samples_reach_the_store_at_least_every_half_second_of_sampling():
    """A live dashboard draws only the samples in the store: at the magic's 10 ms they are
    moved there every 50 samples, not every 512 (5 s: a short cell showed none while live)."""
    from everyo.profiler.sampling import sampler
    from everyo.profiler.sampling.samples import SampleStore
    from everyo.profiler.storage.store import EventStore

    def flush_at(ms):
        s = sampler.Sampler(
            SampleStore(), ms, "wall", time.perf_counter_ns, lambda: 0, EventStore(())
        )
        return s._flush_at

    assert [flush_at(ms) for ms in (10.0, 1.0, 0.5, 0.1)] == [50, 500, 512, 512]
