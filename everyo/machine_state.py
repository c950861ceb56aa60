"""What the machine did while something was measured: other processes' CPU use, this process's
involuntary context switches, the BLAS/OpenMP threads in use, and a verdict from them.

A figure measured while other processes used the cores is not the figure of a quiet machine, and
a multi-threaded BLAS call that shares its cores with another process's can be 100x slower (its
worker threads spin waiting for each other while descheduled). So every benchmark result, sweep
point, profiled run and comparison carries a :class:`MachineState`:

- ``quiet``: other processes used (almost) no CPU while it ran;
- ``busy``: they used some, and this process's threads still had cores of their own;
- ``contended``: this process's threads had to share cores with them (others' cores plus our
  BLAS/OpenMP threads exceed the usable cores), the case where multi-threaded BLAS collapses;
- ``unknown``: the platform does not say (the reason says why).

On Linux the readings come from ``/proc/stat`` (only the CPUs this process may run on) less this
process's own CPU time (``getrusage``, which also gives the involuntary context switches), in the
kernel's clock ticks; elsewhere from psutil when it is installed. One reading costs a few µs.

>>> watch = MachineWatch().start()
>>> state = watch.stop()
>>> state.verdict in ("quiet", "busy", "contended", "unknown")
True
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple

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
    ticks, and its involuntary context switches. ``busy``/``own`` are ``None`` where unknown."""

    t: float
    busy: float | None
    own: float | None
    involuntary: int
    source: str


_history: deque[Reading] = deque(maxlen=64)
_history_lock = threading.Lock()


def read_machine() -> Reading:
    """Take one reading (and keep it, so a later short window can reach back to it)."""
    reading = _read()
    with _history_lock:
        _history.append(reading)
    return reading


def _read() -> Reading:
    t = time.monotonic()
    own, involuntary = _own_usage()
    busy = _proc_busy()
    if busy is not None:
        return Reading(t, busy, own, involuntary, "proc")
    busy = _psutil_busy()
    source = "psutil" if busy is not None else "none"
    return Reading(t, busy, own if busy is not None else None, involuntary, source)


def _own_usage() -> tuple[float, int]:
    """This process's CPU time (all its threads) in clock ticks, and its involuntary context
    switches: one getrusage call."""
    if resource is None:  # Windows: the process's CPU time from os.times, no preemptions
        times = os.times()
        return (times.user + times.system) * _HZ, 0
    try:
        usage = resource.getrusage(resource.RUSAGE_SELF)
    except (OSError, ValueError):
        return 0.0, 0
    return (usage.ru_utime + usage.ru_stime) * _HZ, int(usage.ru_nivcsw)


def _usable_cpus() -> set[int] | None:
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def usable_cores() -> int:
    cpus = _usable_cpus()
    return len(cpus) if cpus else (os.cpu_count() or 1)


_stat_fd: int | None = None
_ALL_CPUS = set(range(os.cpu_count() or 1))
_STAT_BYTES = 64 + 96 * (os.cpu_count() or 1)  # (os.cpu_count reads a file: once, here)


def _proc_busy() -> float | None:
    """Busy ticks of the usable CPUs from /proc/stat, read through a descriptor kept open
    (``pread`` from offset 0 regenerates the file: a third of the cost of open, read, close);
    ``None`` where /proc is not there."""
    global _stat_fd
    try:
        if _stat_fd is None:
            _stat_fd = os.open("/proc/stat", os.O_RDONLY)
        head = os.pread(_stat_fd, _STAT_BYTES, 0)  # the cpu lines only
    except (OSError, AttributeError):
        return None
    return parse_proc_stat(head, _usable_cpus())


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
        return f"other processes used {self.others_cores:.1f} of {self.usable_cores} cores"

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
    cores = cores or usable_cores()
    threads = threads if threads is not None else threads_in_use()
    blas, omp = threads.get("blas"), threads.get("openmp")
    ours = max(blas or 1, omp or 1)
    window = max(end.t - start.t, 1e-9)
    common = dict(
        usable_cores=cores,
        blas_threads=blas,
        openmp_threads=omp,
        involuntary_switches=max(end.involuntary - start.involuntary, 0),
        window_s=round(window, 4),
        threads_policy=threads_policy,
        threads_applied=threads_applied,
        source=end.source,
    )
    thread_text = _threads_text(blas, omp, threads_policy, threads_applied)
    if None in (start.busy, end.busy, start.own, end.own):
        reason = "the platform does not report other processes' CPU use"
        return MachineState("unknown", f"{reason}; {thread_text}", **common)
    if window < SHORTEST_S:
        reason = (
            f"read over {window * 1e3:.0f} ms only, too short to tell other processes' load "
            "(the kernel counts CPU time in 10-ms ticks)"
        )
        return MachineState("unknown", f"{reason}; {thread_text}", **common)
    others = max(end.busy - start.busy - (end.own - start.own), 0.0) / _HZ / window
    own = max(end.own - start.own, 0.0) / _HZ / window
    others, own = min(others, float(cores)), min(own, float(cores))
    common.update(others_cores=round(others, 3), own_cores=round(own, 3))
    used = f"other processes used {others:.1f} of {cores} cores"  # as load_text
    if others <= max(QUIET_CORES, 0.1 * cores):
        return MachineState("quiet", f"{used}; {thread_text}", **common)
    # not excused for waiting: OpenBLAS threads starved of a core yield (voluntary switches),
    # so a collapsed call looks as idle as a sleep; with threads="auto" ours is 1 when busy
    if ours > 1 and others + ours > cores + OVERSUBSCRIBED:
        advice = "our threads shared cores with them: use threads='auto' or 1"
        return MachineState("contended", f"{used}; {thread_text}; {advice}", **common)
    return MachineState("busy", f"{used}; {thread_text}", **common)


def _threads_text(blas, omp, policy, applied) -> str:
    parts = []
    if blas is not None:
        parts.append(f"{blas} BLAS thread{'s' if blas != 1 else ''}")
    if omp is not None:
        parts.append(f"{omp} OpenMP thread{'s' if omp != 1 else ''}")
    text = ", ".join(parts) or "BLAS threads unknown (pip install threadpoolctl)"
    if applied is not None:
        text += f", limited by threads={policy!r}"
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
        self.first = read_machine()
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
        """End the window; the state is kept as :attr:`state`."""
        self.state = self.peek()
        return self.state


def _window_start(first: Reading, end: Reading) -> Reading:
    """The reading a window ending at ``end`` starts from: its own first one when the window is
    long enough, else the newest earlier reading that makes it so, else the oldest one (at most
    :data:`MAX_LOOKBACK_S` old) that at least reaches :data:`SHORTEST_S`."""
    if end.t - first.t >= MIN_WINDOW_S:
        return first
    oldest = None
    with _history_lock:
        for r in reversed(_history):  # newest first
            age = end.t - r.t
            if age > MAX_LOOKBACK_S:
                break
            if age < SHORTEST_S or r.source != end.source:
                continue
            if age >= MIN_WINDOW_S:
                return r
            oldest = r
    return oldest or first


def current_load(window_s: float = 0.1) -> MachineState:
    """The machine's state now: over the window since a recent reading, or, when there is none
    at least ``window_s`` old, over a ``window_s`` pause taken here."""
    end = read_machine()
    with _history_lock:
        earlier = [r for r in _history if window_s <= end.t - r.t <= MAX_LOOKBACK_S]
    if earlier:
        start = max(earlier, key=lambda r: r.t)
    else:
        start = end
        time.sleep(window_s)
        end = read_machine()
    return judge(start, end)
