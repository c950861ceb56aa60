"""What the machine did while something was measured: other processes' CPU use, this process's
involuntary context switches, the BLAS/OpenMP threads in use, and a verdict from them.

A figure measured while other processes used the cores is not the figure of a quiet machine, and
a multi-threaded BLAS call that shares its cores with another process's can be 100x slower (its
worker threads spin waiting for each other while descheduled). So every benchmark result, sweep
point, profiled run and comparison carries a :class:`MachineState`:

- ``quiet``: other processes used (almost) no CPU while it ran;
- ``busy``: they used some, and this process's threads still had cores of their own, or were
  one thread (it takes turns with theirs: slower, but it does not collapse);
- ``contended``: this process's threads had to share cores with them (others' cores plus our
  BLAS/OpenMP threads exceed the usable cores), the case where multi-threaded BLAS collapses;
- ``unknown``: the platform does not say (the reason says why).

On Linux the readings come from ``/proc/stat`` (only the CPUs this process may run on) less this
process's own CPU time (``getrusage``, which also gives the involuntary context switches), in the
kernel's clock ticks; elsewhere from psutil when it is installed. Recording a measurement's state
costs two readings (``everyo/_cmachine.c`` where it is built: most of a reading is the kernel
writing /proc/stat) and the verdict.

>>> watch = MachineWatch().start()
>>> state = watch.stop()
>>> state.verdict in ("quiet", "busy", "contended", "unknown")
True
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from everyo import _compiled

try:
    import resource
except ImportError:  # not on Windows
    resource = None

__all__ = [
    "VERDICTS",
    "MachineState",
    "MachineWatch",
    "Reading",
    "read_machine",
    "threads_in_use",
    "current_load",
    "worst",
    "judge",
    "parse_proc_stat",
]

VERDICTS = ("quiet", "busy", "contended", "unknown")
QUIET_CORES = 0.3
"""Other processes' average CPU use (in cores) up to which the machine counts as quiet; at least
10 % of the usable cores on a large machine (background daemons scale with it)."""
OVERSUBSCRIBED = 0.25
"""Slack, in cores, before others' use plus our threads counts as more than the usable cores."""
WAITING_CORES = 0.25
"""Below this average CPU use (in cores), with few preemptions (:data:`WAITING_SWITCHES`), a
measurement mostly waited (sleep, I/O, a device): other processes' load hardly changes it, so a
quiet/busy difference does not make two such measurements incomparable. It does not excuse a
contended verdict: OpenBLAS threads starved of a core yield, and look as idle as a sleep."""
WAITING_SWITCHES = 20.0
"""Involuntary context switches a second below which low CPU use means waiting, not starving."""
MIN_WINDOW_S = 0.2
"""Below this a window is too short to read the load from the kernel's 10-ms ticks alone: the
watch reaches back to an earlier reading (at most :data:`MAX_LOOKBACK_S` old)."""
MAX_LOOKBACK_S = 3.0
SHORTEST_S = 0.05
"""A window shorter than this, with no earlier reading to reach back to, tells nothing: the
verdict is ``unknown``."""

_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class Reading(NamedTuple):
    """One reading: ``t`` (monotonic s), CPU ticks busy on the usable CPUs, this process's CPU
    ticks, and its involuntary context switches. ``busy``/``own`` are ``None`` where unknown.
    """

    t: float
    busy: float | None
    own: float | None
    involuntary: int
    source: str


_history: deque[Reading] = deque(maxlen=64)
"""Recent readings, oldest first, at least :data:`HISTORY_SPACING_S` apart but for the newest
(appending to a deque is atomic: readers copy it first)."""
HISTORY_SPACING_S = 0.05
"""Kept readings are this far apart (64 of them span 3 s, :data:`MAX_LOOKBACK_S`)."""


def read_machine() -> Reading:
    """Take one reading (and keep it, so a later short window can reach back to it)."""
    reading = _read()
    # readings closer than HISTORY_SPACING_S replace the newest kept one instead of pushing
    # older ones out: a sweep of short points would otherwise fill the history within a tenth
    # of a second, and no reading would be left old enough to read a window's load over
    if len(_history) > 1 and _history[-1].t - _history[-2].t < HISTORY_SPACING_S:
        _history[-1] = reading  # (the newest was too close to the one before: it moves on)
    else:
        _history.append(reading)
    return reading


def _read() -> Reading:
    # The hot path: a measurement takes two readings, and their cost must stay well under 1 %
    # of a 1-ms window (TARGETS.md); /proc/stat regenerating itself is most of it.
    if _cread is not None:
        t, busy, own, involuntary = _cread()
        checked, _, every = _affinity  # (what _all_cpus_usable says, without a second clock)
        if busy is not None and (every if t - checked < _AFFINITY_TTL_S else _all_cpus_usable()):
            return Reading(t, busy, own, involuntary, "proc")
    t = _monotonic()
    own, involuntary = _own_usage()
    busy = _proc_busy()
    if busy is not None:  # (the usable CPUs' lines: a reading of another kind than the total)
        return Reading(t, busy, own, involuntary, "proc" if _all_cpus_usable() else "proc-cpus")
    busy = _psutil_busy()
    source = "psutil" if busy is not None else "none"
    return Reading(t, busy, own if busy is not None else None, involuntary, source)


_cmachine = _compiled.load("everyo._cmachine")  # the same reading in C: half the cost
_cread = _cmachine.read if _cmachine is not None else None
_monotonic = time.monotonic


def _own_usage() -> tuple[float, int]:
    """This process's CPU time (all its threads) in clock ticks, and its involuntary context
    switches: one getrusage call."""
    if resource is None:  # Windows: the process's CPU time from os.times, no preemptions
        times = os.times()
        return (times.user + times.system) * _HZ, 0
    try:
        usage = _getrusage(_RUSAGE_SELF)
    except (OSError, ValueError):
        return 0.0, 0
    return (usage.ru_utime + usage.ru_stime) * _HZ, usage.ru_nivcsw


if resource is not None:
    _getrusage, _RUSAGE_SELF = resource.getrusage, resource.RUSAGE_SELF


def _usable_cpus() -> set[int] | None:
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


_AFFINITY_TTL_S = 1.0
_affinity: tuple[float, set[int] | None, bool] = (-_AFFINITY_TTL_S, None, True)


def _usable_cpus_cached() -> set[int] | None:
    """:func:`_usable_cpus`, read again at most once a second (a process's affinity rarely
    changes while it measures; reading it costs a tenth of a reading)."""
    global _affinity
    checked, cpus, _ = _affinity
    now = _monotonic()
    if now - checked >= _AFFINITY_TTL_S:
        cpus = _usable_cpus()
        _affinity = (now, cpus, cpus is None or cpus == _ALL_CPUS)
    return cpus


def _all_cpus_usable() -> bool:
    """True when this process may run on every CPU (then /proc/stat's total line is its load)."""
    if _monotonic() - _affinity[0] >= _AFFINITY_TTL_S:
        _usable_cpus_cached()
    return _affinity[2]


def usable_cores() -> int:
    cpus = _usable_cpus_cached()
    return len(cpus) if cpus else (os.cpu_count() or 1)


_stat_fd: int | None = None
_ALL_CPUS = set(range(os.cpu_count() or 1))
_STAT_BYTES = 64 + 96 * (os.cpu_count() or 1)  # (os.cpu_count reads a file: once, here)


def _proc_busy() -> float | None:
    """Busy ticks of the usable CPUs from /proc/stat, read through a descriptor kept open
    (``pread`` from offset 0 regenerates the file: a third of the cost of open, read, close);
    ``None`` where /proc is not there."""
    global _stat_fd
    cpus = _usable_cpus_cached()
    try:
        if _stat_fd is None:
            _stat_fd = os.open("/proc/stat", os.O_RDONLY)
        if cpus is None or cpus == _ALL_CPUS:  # the total line alone, parsed inline
            fields = os.pread(_stat_fd, 160, 0).split(None, 9)
            if fields[0] == b"cpu" and len(fields) >= 9:
                # user nice system idle iowait irq softirq steal: all but idle and iowait
                return float(
                    int(fields[1])
                    + int(fields[2])
                    + int(fields[3])
                    + int(fields[6])
                    + int(fields[7])
                    + int(fields[8])
                )
        head = os.pread(_stat_fd, _STAT_BYTES, 0)  # the cpu lines only
    except (OSError, AttributeError, ValueError):
        return None
    return parse_proc_stat(head, cpus)


def parse_proc_stat(stat: str | bytes, cpus: set[int] | None) -> float | None:
    r"""Busy ticks summed over the ``cpuN`` lines of ``/proc/stat`` for the CPUs in ``cpus``
    (all when ``None``: then the total line, which is their sum): all but idle and iowait;
    ``None`` when there is no such line.

    >>> stat = "cpu  10 1 3 90 2 0 0 1\ncpu0 3 0 1 50 2 0 0 0\ncpu1 7 1 2 40 0 0 0 1\n"
    >>> parse_proc_stat(stat, None), parse_proc_stat(stat, {1})
    (15.0, 11.0)
    """
    if isinstance(stat, str):
        stat = stat.encode("ascii", "replace")
    if cpus is None or cpus == _ALL_CPUS:  # every CPU: the total line says it in one
        fields = stat[: stat.find(b"\n")].split(None, 9)
        if len(fields) < 9 or fields[0] != b"cpu":
            return None
        return float(sum(map(int, fields[1:4])) + sum(map(int, fields[6:9])))
    busy = 0
    found = False
    for line in stat.split(b"\n")[1:]:  # the total first, then one line per CPU
        if not line.startswith(b"cpu"):
            break
        fields = line.split(None, 9)
        if cpus is not None and int(fields[0][3:]) not in cpus:
            continue
        # user nice system idle iowait irq softirq steal: all but idle and iowait
        busy += sum(map(int, fields[1:4])) + sum(map(int, fields[6:9]))
        found = True
    return float(busy) if found else None


def _psutil_busy() -> float | None:
    try:
        import psutil
    except ImportError:
        return None
    try:
        total = psutil.cpu_times()
        return (sum(total) - total.idle - getattr(total, "iowait", 0.0)) * _HZ
    except Exception:  # noqa: BLE001 - a descriptive field must never break a measurement
        return None


# -- threads in use ----------------------------------------------------------------------------
_controller = None
_controller_lock = threading.Lock()


def thread_controller():
    """A cached ``threadpoolctl.ThreadpoolController`` (building one scans the loaded libraries:
    about 1 ms), or ``None`` without threadpoolctl."""
    global _controller
    controller = _controller
    if controller is not None and controller.lib_controllers:
        return controller  # (the common case, without the lock)
    with _controller_lock:
        if _controller is None or not _controller.lib_controllers:
            try:
                import numpy  # noqa: F401  (load NumPy's BLAS so that it is seen)
                from threadpoolctl import ThreadpoolController
            except ImportError:
                return None
            _controller = ThreadpoolController()
        return _controller


def threads_in_use() -> dict[str, int | None]:
    """The thread counts the BLAS and OpenMP libraries loaded now would use
    (``{"blas": 2, "openmp": None}``; ``None`` for a kind not loaded or not knowable)."""
    controller = thread_controller()
    out: dict[str, int | None] = {"blas": None, "openmp": None}
    if controller is None:
        return out
    for lib in controller.lib_controllers:
        kind = lib.user_api
        if kind in out:
            out[kind] = max(out[kind] or 0, int(lib.num_threads))
    return out


# -- the state and its verdict -----------------------------------------------------------------
@dataclass
class MachineState:
    """What the machine did during one measurement, and the verdict.

    Attributes
    ----------
    verdict : str
        ``"quiet"``, ``"busy"``, ``"contended"`` or ``"unknown"``.
    reason : str
        The verdict in words: ``"another process used 1.7 of 2 cores; 2 BLAS threads"``.
    others_cores : float or None
        Average CPU use of other processes over the window, in cores (``None``: unknown).
    own_cores : float or None
        This process's average CPU use over the window, in cores.
    usable_cores : int
        The cores this process may run on.
    blas_threads, openmp_threads : int or None
        The threads those libraries would use (threadpoolctl), ``None`` when not known.
    involuntary_switches : int
        Times this process was preempted during the window.
    window_s : float
        The seconds the load was read over (a short measurement reads a longer window that
        ends with it).
    threads_policy, threads_applied
        The ``threads=`` asked for and the limit it set (``None``: threads left as they were).
    """

    verdict: str
    reason: str
    others_cores: float | None = None
    own_cores: float | None = None
    usable_cores: int = 1
    blas_threads: int | None = None
    openmp_threads: int | None = None
    involuntary_switches: int = 0
    window_s: float = 0.0
    threads_policy: Any = None
    threads_applied: int | None = None
    source: str = "proc"
    extra: dict = field(default_factory=dict)

    @property
    def trusted(self) -> bool:
        """False when the figure measured may be wrong for the machine's sake (contended)."""
        return self.verdict != "contended"

    @property
    def mostly_waited(self) -> bool:
        """True when the measurement mostly waited (sleep, I/O, a device) rather than computed:
        little CPU of its own and few preemptions, so others' load hardly changed it."""
        if self.own_cores is None or self.window_s <= 0:
            return False
        switches = self.involuntary_switches / self.window_s
        return self.own_cores < WAITING_CORES and switches < WAITING_SWITCHES

    @property
    def load_text(self) -> str:
        """``"other processes used 1.7 of 2 cores"`` (or why that is unknown)."""
        if self.others_cores is None:
            return "other processes' CPU use unknown on this platform"
        return _used_text(self.others_cores, self.usable_cores)

    def line(self) -> str:
        """``"Machine: busy (another process used 1.7 of 2 cores; 1 BLAS thread, limited by
        threads='auto')"``: what every view prints next to the figure."""
        return f"Machine: {self.verdict} ({self.reason})"

    def to_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["extra"] = dict(self.extra)  # (dataclasses.asdict: four times the cost)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> MachineState | None:
        """The state saved by :meth:`to_dict` (``None`` for a file from before it existed, or a
        field that is not one)."""
        if not isinstance(data, dict) or data.get("verdict") not in VERDICTS:
            return None
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        try:
            return cls(**known)
        except TypeError:
            return None


_last_judged: tuple = ((), ())
"""The newest window judged by :meth:`MachineWatch.stop` and its state's fields: back-to-back
measurements that share their readings (:data:`REUSE_S`) are judged once."""


def _judged(start: Reading, end: Reading, policy: Any, applied: int | None) -> MachineState:
    """:func:`judge`, or an ``unknown`` state saying why it could not be judged."""
    global _last_judged
    try:
        cores = usable_cores()
        threads = threads_in_use() if applied is None else _limited(applied)
        key = (start, end, cores, threads["blas"], threads["openmp"], policy, applied)
        last, fields = _last_judged
        if not (last and last[0] is start and last[1] is end and last[2:] == key[2:]):
            fields = _judgement(start, end, cores, threads, policy, applied)
            _last_judged = (key, fields)
        return MachineState(*fields)  # (each measurement its own state)
    except Exception as exc:  # noqa: BLE001 - a descriptive field must never break a view
        reason = f"the machine's state could not be judged ({type(exc).__name__}: {exc})"
        return MachineState("unknown", reason, window_s=round(max(end.t - start.t, 0.0), 4))


def worst(states) -> MachineState | None:
    """The least trustworthy of several states (contended > busy > unknown > quiet)."""
    rank = {"quiet": 0, "unknown": 1, "busy": 2, "contended": 3}
    states = [s for s in states if s is not None]
    return max(states, key=lambda s: rank.get(s.verdict, 1)) if states else None


def judge(
    start: Reading,
    end: Reading,
    *,
    cores: int | None = None,
    threads: dict[str, int | None] | None = None,
    threads_policy: Any = None,
    threads_applied: int | None = None,
) -> MachineState:
    """The state over the window from ``start`` to ``end`` (pure: tests pass fake readings)."""
    return MachineState(*_judgement(start, end, cores, threads, threads_policy, threads_applied))


def _judgement(
    start: Reading,
    end: Reading,
    cores: int | None,
    threads: dict[str, int | None] | None,
    threads_policy: Any,
    threads_applied: int | None,
) -> tuple:
    """:func:`judge`'s state, as the positional fields of a :class:`MachineState`."""
    cores = cores or usable_cores()
    if threads is None:
        threads = threads_in_use() if threads_applied is None else _limited(threads_applied)
    blas, omp = threads.get("blas"), threads.get("openmp")
    ours = max(blas or 1, omp or 1)
    window = max(end.t - start.t, 1e-9)
    thread_text = _threads_text(blas, omp, threads_policy, threads_applied)
    if ours > cores:  # (threads=3 on 2 cores: they take turns even on a quiet machine)
        thread_text = f"{thread_text}, more than the {cores} usable cores"
    others = own = None
    if None in (start.busy, end.busy, start.own, end.own):
        verdict = "unknown"
        reason = f"the platform does not report other processes' CPU use; {thread_text}"
    elif start.source != end.source:
        verdict = "unknown"
        reason = (
            "the CPUs this process may run on changed during the measurement, so its load "
            f"was read over different CPUs at its start and end; {thread_text}"
        )
    elif window < SHORTEST_S:
        verdict = "unknown"
        reason = (
            f"read over {window * 1e3:.0f} ms only, too short to tell other processes' load "
            f"(the kernel counts CPU time in 10-ms ticks); {thread_text}"
        )
    else:
        used_own = max(end.own - start.own, 0.0)
        others = min(max(end.busy - start.busy - used_own, 0.0) / _HZ / window, float(cores))
        own = min(used_own / _HZ / window, float(cores))
        others, own = _rounded(others, 1000), _rounded(own, 1000)
        used = _used_text(others, cores)  # (from the figure kept: as load_text reads it)
        if others <= max(QUIET_CORES, 0.1 * cores):
            verdict, reason = "quiet", f"{used}; {thread_text}"
        # not excused for waiting: OpenBLAS threads starved of a core yield (voluntary
        # switches), so a collapsed call looks as idle as a sleep; with threads="auto" ours is
        # 1 when busy
        elif ours > 1 and others + ours > cores + OVERSUBSCRIBED:
            verdict = "contended"
            advice = "our threads shared cores with them: use threads='auto' or 1"
            reason = f"{used}; {thread_text}; {advice}"
        else:
            verdict, reason = "busy", f"{used}; {thread_text}"
    return (
        verdict,
        reason,
        others,
        own,
        cores,
        blas,
        omp,
        max(end.involuntary - start.involuntary, 0),
        _rounded(window, 10000),
        threads_policy,
        threads_applied,
        end.source,
    )


def _rounded(x: float, scale: int) -> float:
    """``x >= 0`` rounded to ``1 / scale`` (``round(x, 3)`` goes through a decimal conversion,
    several µs when a measurement has just evicted the caches)."""
    return int(x * scale + 0.5) / scale


_used_texts: dict[tuple[int, int], str] = {}


def _used_text(others: float, cores: int) -> str:
    """``"other processes used 1.7 of 2 cores"``, to a tenth of a core (texts kept per tenth)."""
    tenths = others * 10
    if abs(tenths % 1 - 0.5) < 1e-6:  # near a tie: as format() rounds it
        return f"other processes used {others:.1f} of {cores} cores"
    key = (int(tenths + 0.5), cores)
    text = _used_texts.get(key)
    if text is None:
        text = f"other processes used {key[0] // 10}.{key[0] % 10} of {cores} cores"
        if len(_used_texts) < 4096:
            _used_texts[key] = text
    return text


def _limited(applied: int) -> dict[str, int | None]:
    """The threads in use while a thread policy holds its limit: the limit, for each kind of
    library loaded (the policy limited them all; asking each library costs a reading's tenth)."""
    global _limited_cache
    controller = thread_controller()
    if controller is None:
        return {"blas": None, "openmp": None}
    libs = controller.lib_controllers
    cached = _limited_cache
    if cached[0] is controller and cached[1] == len(libs) and cached[2] == applied:
        return cached[3]
    kinds = {lib.user_api for lib in libs}
    out = {kind: (applied if kind in kinds else None) for kind in ("blas", "openmp")}
    _limited_cache = (controller, len(libs), applied, out)
    return out


_limited_cache: tuple = (None, -1, None, None)


_thread_texts: dict[tuple, str] = {}


def _threads_text(blas, omp, policy, applied) -> str:
    key = (blas, omp, policy, applied)
    try:
        return _thread_texts[key]
    except (KeyError, TypeError):
        pass
    parts = []
    if blas is not None:
        parts.append(f"{blas} BLAS thread{'s' if blas != 1 else ''}")
    if omp is not None:
        parts.append(f"{omp} OpenMP thread{'s' if omp != 1 else ''}")
    text = ", ".join(parts) or "BLAS threads unknown (pip install threadpoolctl)"
    if applied is not None:
        text += f", {'limited' if policy == 'auto' else 'set'} by threads={policy!r}"
    try:
        if len(_thread_texts) < 256:
            _thread_texts[key] = text
    except TypeError:  # an unhashable policy: not kept
        pass
    return text


class MachineWatch:
    """Read the machine at :meth:`start` and at :meth:`stop` (or :meth:`peek` while running).

    A window shorter than :data:`MIN_WINDOW_S` reaches back to the newest earlier reading that
    makes it long enough (a sweep's previous point, the sweep's start), because the kernel
    counts CPU time in 10-ms ticks.
    """

    def __init__(self, *, threads_policy: Any = None, threads_applied: int | None = None):
        self.threads_policy = threads_policy
        self.threads_applied = threads_applied
        self.first: Reading | None = None
        self.state: MachineState | None = None

    def start(self) -> MachineWatch:
        """Start the window: at the newest reading when it is younger than one of the kernel's
        ticks (:data:`REUSE_S`: a measurement right after another starts where that one ended,
        to the counters' resolution), else at a new reading."""
        self.first = _recent_reading()
        self.state = None
        return self

    def peek(self) -> MachineState:
        """The state so far, without ending the watch."""
        if self.first is None:
            self.start()
        end = read_machine()
        return judge(
            _window_start(self.first, end),
            end,
            threads_policy=self.threads_policy,
            threads_applied=self.threads_applied,
        )

    def stop(self) -> MachineState:
        """End the window; the state is kept as :attr:`state`.

        A reading that the platform cannot judge (threadpoolctl failing, say) gives an
        ``unknown`` state saying why: it never breaks the measurement."""
        first = self.first if self.first is not None else self.start().first
        end = _recent_reading(first)  # (a reading younger than a tick tells nothing new)
        if end.t - first.t < MIN_WINDOW_S:  # (the long window's start needs no search)
            first = _window_start(first, end)
        self.state = _judged(first, end, self.threads_policy, self.threads_applied)
        return self.state


def _recent_reading(first: Reading | None = None) -> Reading:
    """The newest reading when it is at most :data:`REUSE_S` old, of the kind a new one would
    be, and not older than ``first`` (another thread's reading can be kept after a newer one),
    else a new reading."""
    last = _history[-1] if _history else None
    if (
        last is not None
        and 0.0 <= _monotonic() - last.t <= REUSE_S
        and (first is None or last.t >= first.t)
    ):
        kind = "proc" if _all_cpus_usable() else "proc-cpus"  # what a new reading would be
        if last.source == kind:
            return last
    return read_machine()


def _window_start(first: Reading, end: Reading) -> Reading:
    """The reading a window ending at ``end`` starts from: its own first one when the window is
    long enough, else the newest earlier reading that makes it so, else the oldest one (at most
    :data:`MAX_LOOKBACK_S` old) that at least reaches :data:`SHORTEST_S`."""
    global _anchor
    if end.t - first.t >= MIN_WINDOW_S:
        return first
    history, anchor = _anchor
    if (  # back-to-back short measurements (a sweep's calls): the one found for the last
        history is _history
        and anchor is not None
        and MIN_WINDOW_S <= end.t - anchor.t <= ANCHOR_REUSE_S
        and anchor.source == end.source
    ):
        return anchor
    found = _search_window_start(first, end)
    if end.t - found.t >= MIN_WINDOW_S:
        _anchor = (_history, found)
    return found


REUSE_S = 0.01
"""A watch started or stopped within this long of the newest reading starts or ends at it
(/proc/stat counts in 10-ms ticks, so a new reading would tell nothing more: a window that ends
up to one tick before its measurement does is, to the counters, the same window)."""
ANCHOR_REUSE_S = 0.25
"""A window start found for a short measurement is used again by the next ones while it is at
most this old (their windows then span 0.2-0.25 s: a load that began just before the end is
diluted at most 1.25x, where searching the history again for each cost a few µs)."""
_anchor: tuple[Any, Reading | None] = (None, None)


def _forget_history() -> None:
    """In a forked child: the parent's readings count the parent's CPU time as "own", so a
    window reaching back to one of them would take the child's own work for other processes'."""
    global _anchor, _last_judged
    _history.clear()
    _anchor = (None, None)
    _last_judged = ((), ())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_history)


def _search_window_start(first: Reading, end: Reading) -> Reading:
    history = tuple(_history)  # (a copy: other threads may append while this reads)
    # the newest reading at least MIN_WINDOW_S old: usually a few back (a lone measurement's
    # own readings are the only young ones), found by bisection when a sweep of short points
    # filled the history with young readings
    at = len(history)
    for back in range(min(at, 4)):
        if end.t - history[at - 1 - back].t >= MIN_WINDOW_S:
            at -= back
            break
    else:
        at = bisect.bisect_right(history, end.t - MIN_WINDOW_S, key=_time_of)
    for r in reversed(history[:at]):
        if end.t - r.t > MAX_LOOKBACK_S:
            break
        if r.source == end.source:
            return r
    young = bisect.bisect_right(history, end.t - SHORTEST_S, key=_time_of)
    for r in history[at:young]:  # the oldest between SHORTEST_S and MIN_WINDOW_S old
        if r.source == end.source:
            return r
    return first


def _time_of(reading: Reading) -> float:
    return reading.t


def current_load(window_s: float = 0.1) -> MachineState:
    """The machine's state now: over the window since a recent reading, or, when there is none
    at least ``window_s`` old, over a ``window_s`` pause taken here."""
    end = read_machine()
    earlier = [r for r in tuple(_history) if window_s <= end.t - r.t <= MAX_LOOKBACK_S]
    if earlier:
        start = max(earlier, key=lambda r: r.t)
    else:
        start = end
        time.sleep(window_s)
        end = read_machine()
    return judge(start, end)
