"""The machine's state per measurement: readings, verdicts, the threads= policy, and every
place a figure is shown with it. Fake readings and fake rusage; no wall-clock thresholds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from everyo import machine_state as ms
from everyo.bench import BenchmarkResult, benchmark, check_regression, compare
from everyo.bench.regression import MACHINE_BUSY
from everyo.errors import EveryOConfigError
from everyo.machine_state import MachineState, MachineWatch, Reading, judge
from everyo.thread_policy import ThreadPolicy, check_threads, choose_threads, parse_threads

HZ = ms._HZ


def reading(t: float, others_s: float, own_s: float = 0.0, involuntary: int = 0) -> Reading:
    """A reading at ``t`` seconds after other processes used ``others_s`` CPU seconds and this
    one ``own_s`` (all ticks since boot, as /proc counts them)."""
    return Reading(t, (others_s + own_s) * HZ, own_s * HZ, involuntary, "proc")


def state_over(seconds: float, others_cores: float, *, threads: int, cores: int = 2, own=1.0):
    start, end = reading(0.0, 0.0), reading(seconds, others_cores * seconds, own * seconds, 7)
    return judge(start, end, cores=cores, threads={"blas": threads, "openmp": None})


def test_quiet_when_other_processes_use_almost_nothing():
    state = state_over(1.0, 0.05, threads=2)
    assert state.verdict == "quiet" and state.trusted
    assert state.others_cores == pytest.approx(0.05)
    assert state.involuntary_switches == 7
    assert "other processes used 0.1 of 2 cores" in state.reason


def test_busy_when_others_leave_our_single_thread_a_core():
    state = state_over(1.0, 1.0, threads=1)
    assert state.verdict == "busy" and state.trusted
    assert "other processes used 1.0 of 2 cores; 1 BLAS thread" in state.line()


def test_more_threads_than_cores_is_said_even_on_a_quiet_machine():
    state = judge(
        reading(0.0, 0.0), reading(1.0, 0.0, 2.0), cores=2, threads={"blas": 3, "openmp": None},
        threads_policy=3, threads_applied=3,
    )  # fmt: skip
    assert state.verdict == "quiet"  # (others did nothing: the figure is this process's own)
    assert "3 BLAS threads, set by threads=3, more than the 2 usable cores" in state.reason
    auto = state_over(1.0, 1.0, threads=1)
    assert "usable cores" not in auto.reason


def test_contended_when_our_blas_threads_share_cores_with_others():
    state = state_over(2.0, 1.7, threads=2)
    assert state.verdict == "contended" and not state.trusted
    assert state.line().startswith("Machine: contended (other processes used 1.7 of 2 cores")
    assert "threads='auto'" in state.reason  # says what to do


def test_our_own_cpu_time_is_not_counted_as_other_processes():
    # this process used both cores (2 BLAS threads): nobody else did
    state = state_over(1.0, 0.0, threads=2, own=2.0)
    assert state.verdict == "quiet" and state.own_cores == pytest.approx(2.0)


def test_unknown_without_readings_or_over_a_window_too_short():
    none = Reading(0.0, None, None, 0, "none")
    assert judge(none, none._replace(t=1.0), cores=2, threads={}).verdict == "unknown"
    short = judge(reading(0.0, 0.0), reading(0.01, 0.0), cores=2, threads={})
    assert short.verdict == "unknown" and "too short" in short.reason


def test_proc_parsing_keeps_only_the_usable_cpus():
    stat = "cpu  60 0 0 140 5 0 0 0\ncpu0 10 0 0 90 0 0 0 0\ncpu1 50 0 0 50 5 0 0 0\nintr 1 2\n"
    assert ms.parse_proc_stat(stat, {0}) == 10.0
    assert ms.parse_proc_stat(stat, None) == 60.0  # idle and iowait are not busy
    assert ms.parse_proc_stat(stat, {0, 1}) == 60.0  # every CPU: the total line
    assert ms.parse_proc_stat("intr 0\n", None) is None


@pytest.mark.real_machine  # the reader itself, with its sources faked here
def test_a_reading_counts_this_process_and_its_preemptions(monkeypatch):
    class Usage:
        ru_utime, ru_stime, ru_nivcsw = 1.5, 0.5, 42

    monkeypatch.setattr(ms, "_cread", None)  # the Python reader (the compiled one: below)
    monkeypatch.setattr(ms, "_getrusage", lambda who: Usage)
    monkeypatch.setattr(ms, "_proc_busy", lambda: 1000.0)
    r = ms._read()
    assert r.own == pytest.approx(2.0 * HZ) and r.involuntary == 42 and r.busy == 1000.0
    monkeypatch.setattr(ms, "_proc_busy", lambda: None)
    monkeypatch.setattr(ms, "_psutil_busy", lambda: None)
    assert ms._read().source == "none"


needs_cmachine = pytest.mark.skipif(
    ms._cread is None, reason="the compiled machine reader is not built (no C compiler)"
)


@needs_cmachine
@pytest.mark.real_machine
def test_the_compiled_reader_reads_what_the_python_one_reads(monkeypatch):
    """The compiled reader reads the same counters as the Python one, a moment apart."""
    t, busy, own, involuntary = ms._cread()
    monkeypatch.setattr(ms, "_cread", None)
    python = ms._read()
    elapsed = python.t - t
    assert elapsed >= 0 and python.source == "proc"
    every_cpu = ms.usable_cores() * (elapsed + 0.02) * HZ + 2  # a tick each way
    assert 0 <= python.busy - busy <= every_cpu
    assert 0 <= python.own - own <= every_cpu and python.involuntary >= involuntary


@pytest.mark.real_machine
def test_a_forked_child_does_not_reach_back_to_its_parents_readings():
    """The parent's readings count the parent's CPU time as "own": a child's short window
    reaching back to one would take the child's own work for other processes'."""
    import os

    ms.read_machine()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running pytest's teardown
        ok = False
        try:
            ok = len(ms._history) == 0 and ms._anchor == (None, None)
        finally:
            os.write(write_end, b"1" if ok else b"0")
            os._exit(0)
    os.close(write_end)
    answer = os.read(read_end, 1)
    os.waitpid(pid, 0)
    assert answer == b"1" and len(ms._history) > 0


def test_a_state_that_cannot_be_judged_says_so_and_the_measurement_goes_on(monkeypatch):
    clock = iter([10.0, 10.5])
    monkeypatch.setattr(ms, "_read", lambda: reading(next(clock), 0.0))
    monkeypatch.setattr(ms, "_history", type(ms._history)(maxlen=64))

    def broken():
        raise RuntimeError("no threadpool info")

    monkeypatch.setattr(ms, "threads_in_use", broken)
    state = MachineWatch().start().stop()  # (the measurement itself is not broken by it)
    assert state.verdict == "unknown" and "could not be judged" in state.reason
    assert "no threadpool info" in state.reason and state.window_s == 0.5


def test_readings_of_different_cpus_are_not_compared():
    """The total line (every CPU usable) and the usable CPUs' lines (a process limited to some)
    are different readings: a window between the two says so instead of a load."""
    start = Reading(0.0, 0.0, 0.0, 0, "proc")
    end = Reading(1.0, 1.5 * HZ, 0.0, 0, "proc-cpus")
    state = judge(start, end, cores=2, threads={"blas": 1, "openmp": None})
    assert state.verdict == "unknown" and state.others_cores is None
    assert "CPUs this process may run on changed" in state.reason


def test_ci_builds_and_uses_the_compiled_reader():
    """CI sets EVERYO_REQUIRE_COMPILED=1: there the reader's C extension must be built and in
    use (else the tests of it above and below would skip unseen)."""
    import os

    import everyo as eo

    if not os.environ.get("EVERYO_REQUIRE_COMPILED"):
        pytest.skip("EVERYO_REQUIRE_COMPILED is not set (only CI requires the extension)")
    assert ms._cread is not None
    assert eo.environment()["everyo"]["machine_reader"] == "c"


def test_a_watch_judges_its_own_window_and_later_readings_do_not_move_it(monkeypatch):
    clock = iter([10.0, 10.5, 11.0])
    monkeypatch.setattr(ms, "_read", lambda: reading(t := next(clock), 1.5 * (t - 10.0)))
    monkeypatch.setattr(ms, "_history", type(ms._history)(maxlen=64))
    monkeypatch.setattr(ms, "threads_in_use", lambda: {"blas": 2, "openmp": None})
    watch = MachineWatch().start()
    state = watch.stop()
    ms.read_machine()  # a later reading
    expected = judge(reading(10.0, 0.0), reading(10.5, 0.75), threads={"blas": 2, "openmp": None})
    assert state == expected and watch.state is state
    assert state.others_cores == pytest.approx(1.5) and state.verdict == "contended"


def test_a_short_watch_reaches_back_to_an_earlier_reading(monkeypatch):
    clock = iter([10.0, 12.0, 12.001])
    others = {10.0: 0.0, 12.0: 3.0, 12.001: 3.002}  # 1.5 cores busy elsewhere throughout

    def fake_read():
        t = next(clock)
        return reading(t, others[t])

    monkeypatch.setattr(ms, "_read", fake_read)
    monkeypatch.setattr(ms, "_history", type(ms._history)(maxlen=64))
    monkeypatch.setattr(ms, "threads_in_use", lambda: {"blas": 1, "openmp": None})
    ms.read_machine()  # an earlier measurement's reading, 2 s before
    state = MachineWatch().start().stop()  # a 1-ms window
    assert state.window_s == pytest.approx(2.001)
    assert state.verdict == "busy" and state.others_cores == pytest.approx(1.5, abs=0.01)


def test_back_to_back_short_measurements_share_a_window_start_a_quarter_second_old(
    monkeypatch,
):
    """A sweep's short points reach back to one earlier reading while it is 0.2-0.25 s old, then
    to a newer one: each window ends with its own measurement."""
    times = [10.0] + [10.3 + 0.01 * k for k in range(60)]  # a reading, then 1-ms points
    clock = iter(times)
    monkeypatch.setattr(ms, "_read", lambda: reading(t := next(clock), 0.5 * t))
    monkeypatch.setattr(ms, "_history", type(ms._history)(maxlen=64))
    monkeypatch.setattr(ms, "threads_in_use", lambda: {"blas": 1, "openmp": None})
    ms.read_machine()
    windows = []
    for _ in range(30):
        state = MachineWatch().start().stop()
        windows.append(state.window_s)
        assert state.others_cores == pytest.approx(0.5, abs=0.01)
    # each point reads at its start and end, 10 ms apart: while 10.0 is the newest reading at
    # least 0.2 s old, the windows reach back to it (0.31 s, 0.33 s, ...)
    assert windows[:10] == pytest.approx([0.31 + 0.02 * k for k in range(10)])
    assert windows[10] == pytest.approx(0.21)  # then to 10.30, the newest kept 0.2 s before
    assert all(0.2 - 1e-9 <= w <= 0.25 + 1e-9 for w in windows[10:])  # reused up to 0.25 s
    kept = [r.t for r in ms._history]  # readings 10 ms apart are kept 50 ms apart
    assert all(b - a >= ms.HISTORY_SPACING_S - 1e-9 for a, b in zip(kept[:-2], kept[1:-1]))


def test_state_round_trips_and_ignores_what_is_not_one():
    state = state_over(1.0, 1.0, threads=1)
    again = MachineState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again == state
    assert MachineState.from_dict({"verdict": "sunny"}) is None
    assert MachineState.from_dict("busy") is None
    assert ms.worst([state_over(1, 0, threads=1), None, state]).verdict == "busy"


# -- the threads= policy -----------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0, -1, "many", 1.5, True, "0"])
def test_bad_threads_values_are_refused_with_what_to_use(bad):
    with pytest.raises(ValueError, match="threads must be 'auto'"):
        check_threads(bad) if not isinstance(bad, str) or bad == "many" else parse_threads(bad)


def test_threads_values_accepted():
    assert check_threads("auto") == "auto" and check_threads(None) is None
    assert check_threads("keep") is None and check_threads(3) == 3
    assert parse_threads("4") == 4 and parse_threads("AUTO") == "auto"
    with pytest.raises(EveryOConfigError):
        benchmark(lambda: None, threads=0)


def test_a_numpy_integer_is_a_number_of_threads_and_a_numpy_bool_is_not():
    two = check_threads(np.int64(2))  # e.g. np.int64(os.cpu_count()) // 2
    assert two == 2 and type(two) is int
    for bad in (np.int64(0), np.bool_(True), np.float64(2.0)):
        with pytest.raises(ValueError, match="threads must be 'auto'"):
            check_threads(bad)


def test_auto_limits_threads_to_the_cores_others_leave_free(monkeypatch):
    monkeypatch.setattr("everyo.thread_policy.threads_in_use", lambda: {"blas": 8, "openmp": 8})
    busy = state_over(1.0, 5.4, threads=8, cores=8)
    assert choose_threads("auto", busy) == 2
    assert choose_threads("auto", state_over(1.0, 1.9, threads=2)) == 1
    assert choose_threads("auto", state_over(1.0, 0.0, threads=8, cores=8)) is None  # quiet
    assert choose_threads(3, busy) == 3 and choose_threads(None, busy) is None


def test_auto_never_calls_a_busy_machine_quiet_when_it_leaves_the_threads(monkeypatch):
    monkeypatch.setattr("everyo.thread_policy.threads_in_use", lambda: {"blas": 1, "openmp": None})
    busy = state_over(1.0, 0.9, threads=1)  # one BLAS thread already: nothing to limit
    assert busy.verdict == "busy"
    policy = ThreadPolicy("auto", state=busy).apply()
    assert policy.applied is None
    text = policy.describe()
    assert "quiet" not in text and "1 thread, no more than the cores" in text
    policy.restore()  # ("auto" holds the threads it leaves: released here)
    quiet = ThreadPolicy("auto", state=state_over(1.0, 0.0, threads=1)).apply()
    assert quiet.describe().endswith("(the machine is quiet)")
    quiet.restore()
    assert ThreadPolicy(None).describe() == "threads left as configured (1 BLAS thread)"


def test_policy_sets_blas_threads_and_restores_them():
    before = ms.threads_in_use()["blas"]
    if before is None:
        pytest.skip("no BLAS library that threadpoolctl can see")
    with ThreadPolicy(1) as policy:
        assert policy.applied == 1 and ms.threads_in_use()["blas"] == 1
        assert "limited to 1" in policy.describe()
    assert ms.threads_in_use()["blas"] == before


# -- where the state is shown ------------------------------------------------------------------
def test_benchmark_records_and_prints_the_machine_state_and_its_quality():
    clock = iter([i / 1024 for i in range(1000)])  # exact steps: no spread at all
    result = benchmark(lambda: None, warmup=0, repeat=20, clock=lambda: next(clock), threads=1)
    state = result.machine_state
    assert state is not None and state.threads_policy == 1
    assert state.verdict in ms.VERDICTS
    text = str(result)
    assert "Machine: " in text and "Stability: stable" in text and "Outliers: 0 of 20" in text
    again = BenchmarkResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.machine_state == state


def test_outliers_and_stability_of_a_result():
    times = [1e-3] * 50 + [1.01e-3] * 45 + [9e-3] * 5
    result = BenchmarkResult(times, machine=state_over(1, 1.7, threads=2).to_dict())
    assert len(result.outliers) == 5 and result.stability == "noisy"
    text = str(result)
    assert "Outliers: 5 of 100" in text and "not to be trusted" in text
    assert not result.trusted


def test_a_stability_set_by_outliers_says_so_beside_its_small_spread():
    # a tight sample with a long tail: 1 % spread, but a fifth of the calls are outliers
    times = [1e-3 * (1 + 0.01 * (i % 3 - 1)) for i in range(80)] + [1.2e-3] * 20
    text = str(BenchmarkResult(times))
    assert "Stability: unstable (spread 1.5% of the median; 20% of the calls are outliers)" in text
    # a verdict the spread alone gives has no such clause
    assert "outliers)" not in str(BenchmarkResult([1e-3, 1.01e-3, 0.99e-3] * 20))


def _result(seconds: float, state: MachineState | None, seed: int) -> BenchmarkResult:
    rng = np.random.default_rng(seed)
    times = rng.lognormal(np.log(seconds), 0.02, 60)
    return BenchmarkResult(times, name="w", machine=None if state is None else state.to_dict())


def test_comparisons_on_a_contended_machine_are_inconclusive():
    quiet, busy = state_over(1, 0.0, threads=1), state_over(1, 1.0, threads=1)
    contended = state_over(1, 1.7, threads=2)
    fast, slow = 0.010, 0.013
    assert compare(_result(slow, quiet, 1), _result(fast, quiet, 2)).verdict == "faster"
    verdict = compare(_result(slow, quiet, 1), _result(fast, contended, 2))
    assert verdict.verdict == MACHINE_BUSY and not verdict.conclusive
    assert "contended" in str(verdict)
    # one side on a quiet machine, the other on a busy one: slower for that alone
    check = check_regression(_result(slow, busy, 3), _result(fast, quiet, 4))
    assert check.verdict == MACHINE_BUSY and "only the new result" in check.machine_note
    # a little busier than quiet (0.4 of 2 cores): within half a core of quiet, comparable
    slightly = state_over(1, 0.4, threads=1)
    assert slightly.verdict == "busy"
    assert check_regression(_result(slow, slightly, 3), _result(fast, quiet, 4)).conclusive
    # both busy alike (an interleaved run): comparable
    assert check_regression(_result(slow, busy, 3), _result(fast, busy, 4)).verdict == "regression"
    # a result from before machine states were recorded: judged as before
    assert check_regression(_result(slow, None, 3), _result(fast, None, 4)).verdict == "regression"


def test_a_regression_check_shows_each_sides_machine_under_its_figure():
    quiet, busy = state_over(1, 0.0, threads=1), state_over(1, 1.0, threads=1)
    check = check_regression(_result(0.013, busy, 3), _result(0.010, busy, 4))
    assert check.verdict == "regression"  # busy alike: comparable, but not a quiet machine's
    lines = str(check).splitlines()
    at = lines.index(next(line for line in lines if line.startswith("Baseline median:")))
    assert lines[at + 1] == f"Baseline machine: busy ({busy.reason})"
    assert lines[at + 3] == f"New machine: busy ({busy.reason})"
    mixed = check_regression(_result(0.013, quiet, 3), _result(0.010, busy, 4))
    assert mixed.baseline_machine.startswith("busy") and mixed.new_machine.startswith("quiet")
    # results from before machine states were recorded: no such lines
    assert "machine:" not in str(check_regression(_result(0.013, None, 3), _result(0.01, None, 4)))


def test_bench_cli_exits_4_when_the_baseline_was_measured_on_a_contended_machine(
    tmp_path, monkeypatch, capsys
):
    from everyo.__main__ import main

    (tmp_path / "work_mod.py").write_text("def work():\n    return sum(range(100))\n")
    monkeypatch.chdir(tmp_path)
    baseline = _result(0.001, state_over(1, 1.7, threads=2), 5)
    baseline.name = "work_mod:work"
    baseline.to_json(tmp_path / "base.json")
    code = main(["bench", "work_mod:work", "--baseline", "base.json", "--repeat", "20"])
    out = capsys.readouterr().out
    assert code == 4, out
    assert "INCONCLUSIVE: THE MACHINE WAS BUSY" in out and "contended" in out
    assert main(["bench", "work_mod:work", "--threads", "many"]) == 2


def test_a_short_window_with_only_a_recent_reading_still_reads_the_load(monkeypatch):
    clock = iter([20.0, 20.1, 20.101])  # the sweep's start reading, 0.1 s before the point
    others = {20.0: 0.0, 20.1: 0.19, 20.101: 0.1909}

    own = {20.0: 0.0, 20.1: 0.1, 20.101: 0.101}  # one core's work throughout
    monkeypatch.setattr(ms, "_read", lambda: reading((t := next(clock)), others[t], own[t]))
    monkeypatch.setattr(ms, "_history", type(ms._history)(maxlen=64))
    monkeypatch.setattr(ms, "threads_in_use", lambda: {"blas": 2, "openmp": None})
    ms.read_machine()
    state = MachineWatch().start().stop()  # 1 ms: reaches back to the 0.1-s-old reading
    assert state.window_s == pytest.approx(0.101)
    assert state.verdict == "contended"  # not "unknown", which a sweep would trust


def test_a_measurement_that_mostly_waited_stays_comparable_but_is_not_excused_contention():
    sleeper = state_over(1.0, 1.4, threads=1, own=0.05)  # time.sleep, I/O: others' load is moot
    assert sleeper.verdict == "busy" and sleeper.mostly_waited  # 7 preemptions in 1 s
    start, end = reading(0.0, 0.0), reading(1.0, 1.9, 0.05, involuntary=400)
    preempted = judge(start, end, cores=2, threads={"blas": 1, "openmp": None})
    assert not preempted.mostly_waited  # little CPU, preempted all along: starved, not waiting
    # two BLAS threads beside others: contended even if idle (starved OpenBLAS threads yield)
    assert state_over(1.0, 1.9, threads=2, own=0.05).verdict == "contended"
    quiet = state_over(1, 0.0, threads=1, own=0.05)
    assert check_regression(_result(0.02, sleeper, 1), _result(0.02, quiet, 2)).conclusive


# -- what recording the state costs: readings and states shared within one kernel tick ----------
def test_measurements_within_one_tick_share_readings_and_their_state(monkeypatch):
    """/proc/stat counts in 10-ms ticks: a watch started or stopped within one tick of the newest
    reading uses it instead of a new one, and two windows over the same readings give the same
    state (each measurement its own object); a reading older than a tick makes a new one."""
    now = [100.0]
    reads = []

    def fake_read():
        reads.append(now[0])
        return reading(now[0], 0.5 * (now[0] - 99.0), 0.9 * (now[0] - 99.0))

    monkeypatch.setattr(ms, "_read", fake_read)
    monkeypatch.setattr(ms, "_monotonic", lambda: now[0])
    monkeypatch.setattr(ms, "_history", type(ms._history)(maxlen=64))
    monkeypatch.setattr(ms, "_all_cpus_usable", lambda: True)
    monkeypatch.setattr(ms, "threads_in_use", lambda: {"blas": 1, "openmp": None})
    ms.read_machine()  # an earlier reading, 1 s before
    now[0] = 101.0
    first = MachineWatch().start()
    now[0] += 0.002  # a 2-ms measurement: its end is its start reading, to the counters
    one = first.stop()
    now[0] += 0.001
    two = MachineWatch().start()
    now[0] += 0.002
    again = two.stop()
    assert again == one and again is not one and reads == [100.0, 101.0]
    assert one.window_s == pytest.approx(1.0) and one.others_cores == pytest.approx(0.5)
    assert one.verdict == "busy" and one.extra is not again.extra
    now[0] += 0.02  # older than a tick: a new reading ends the next window
    three = MachineWatch().start()
    assert reads[:2] == [100.0, 101.0] and reads[2] == pytest.approx(101.025)
    assert three.stop().window_s == pytest.approx(1.025)
    limited = MachineWatch(threads_policy=1, threads_applied=1).start().stop()
    assert limited.threads_applied == 1 and "set by threads=1" in limited.reason


@pytest.mark.parametrize(
    "others", [0.0, 0.04, 0.05, 0.149, 0.15, 0.25, 0.35, 0.95, 1.04, 1.75, 1.999, 7.96]
)
def test_the_load_text_reads_as_the_figure_rounded_to_a_tenth(others):
    state = state_over(1.0, others, threads=1, cores=8)
    assert state.load_text == f"other processes used {others:.1f} of 8 cores"
    assert state.reason.startswith(state.load_text)


def test_a_window_never_ends_at_a_reading_older_than_its_start(monkeypatch):
    """Another thread's reading can be kept after a newer one (it read, then appended late):
    a watch's end is then a new reading, never that older one."""
    now = [50.0]
    monkeypatch.setattr(ms, "_read", lambda: reading(now[0], 0.2 * now[0], 0.1 * now[0]))
    monkeypatch.setattr(ms, "_monotonic", lambda: now[0])
    monkeypatch.setattr(ms, "_history", type(ms._history)(maxlen=64))
    monkeypatch.setattr(ms, "_all_cpus_usable", lambda: True)
    monkeypatch.setattr(ms, "threads_in_use", lambda: {"blas": 1, "openmp": None})
    ms.read_machine()  # an old reading to reach back to
    now[0] = 51.0
    late = ms._read()  # the other thread's reading, taken now and kept later
    now[0] += 0.001
    watch = MachineWatch().start()  # (its own new reading: `late` is not kept yet)
    ms._history.append(late)
    now[0] += 0.002
    state = watch.stop()
    assert ms._history[-1].t == pytest.approx(51.003)  # a new reading ended the window
    assert state.window_s == pytest.approx(1.003) and state.verdict == "quiet"


def test_the_reason_and_the_load_text_give_the_same_figure():
    # 0.4496 cores: kept as 0.45, which reads "0.5"; the reason must not say "0.4"
    state = state_over(1.0, 0.4496, threads=1)
    assert state.others_cores == pytest.approx(0.45)
    assert state.reason.startswith(state.load_text) and "0.5 of 2" in state.load_text


def test_a_comparison_records_each_sides_machine_and_shows_a_load():
    quiet, busy = state_over(1, 0.0, threads=1), state_over(1, 1.0, threads=1)
    alike = compare(_result(0.013, busy, 1), _result(0.010, busy, 2))
    assert alike.verdict == "faster" and alike.baseline_machine == alike.candidate_machine
    assert alike.baseline_machine == f"busy ({busy.reason})"
    assert str(alike).endswith(f"faster (machine: busy ({busy.reason}))")
    calm = compare(_result(0.013, quiet, 1), _result(0.010, quiet, 2))
    assert calm.candidate_machine.startswith("quiet") and str(calm).endswith(": faster")
    half = compare(_result(0.013, busy, 1), _result(0.010, None, 2))
    assert half.candidate_machine == "" and "candidate's: not recorded" in str(half)


class _CtrlC(BaseException):
    pass


def test_a_ctrl_c_anywhere_in_applying_or_restoring_threads_leaves_blas_as_it_was():
    """Issue 44: a Ctrl-C at 24 of 1,534 points inside applying or restoring `threads=` left
    BLAS at 1 thread for the rest of the session. An interrupt at each point where a signal's
    handler can run (a Python function's start, a C call's return: a Python function's own
    return is none) of a `with ThreadPolicy(1):` block, then the count is what it was."""
    import sys

    if ms.thread_controller() is None or not ms.thread_controller().lib_controllers:
        pytest.skip("threadpoolctl sees no BLAS here")
    controller = ms.thread_controller()
    before = [lib.num_threads for lib in controller.lib_controllers]
    if max(before) < 2:
        for lib in controller.lib_controllers:
            lib.set_num_threads(2)
        before = [lib.num_threads for lib in controller.lib_controllers]
    fired_any = 0
    for k in range(1, 5000):
        seen, fired = [0], [False]

        def tracer(frame, event, arg, k=k, seen=seen, fired=fired):
            if fired[0] or event not in ("call", "c_return"):
                return
            seen[0] += 1
            if seen[0] == k:
                fired[0] = True
                raise _CtrlC(f"point {k}")

        sys.setprofile(tracer)
        try:
            with ThreadPolicy(1):
                pass
        except _CtrlC:
            fired_any += 1
        finally:
            sys.setprofile(None)
        now = [lib.num_threads for lib in controller.lib_controllers]
        assert now == before, f"after a Ctrl-C at point {k}"
        if not fired[0]:
            break
    assert fired_any > 10
