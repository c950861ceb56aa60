"""The stack sampler: a thread that reads the Python stacks of the profiled threads.

Every ``interval`` it reads ``sys._current_frames()`` and, for each profiled thread (the one
that started the profiler and every thread the recorder has seen), appends one sample to the
run's :class:`~everyo.profiler.samples.SampleStore`: the time on the recorder's clock, the
thread's OS id (the id the events carry), the interned stack, and the wall and CPU time the
thread spent since its previous sample. Samples are attributed to events afterwards, by time
(:func:`everyo.profiler.hot_lines`), so the recorder is not touched.

The thread waits for the GIL like any other: while the profiled code runs Python bytecode, a
waiting thread gets it only after the interpreter's switch interval (5 ms by default), so while
sampling the switch interval is lowered to a quarter of the sampling interval (and restored at
stop). A sample may still come late, so each carries the time it stands for (``wall_ns``) and
readers weight by it rather than counting samples.
"""

from __future__ import annotations

import sys
import threading
import time

from everyo.errors import EveryOProfilerError
from everyo.profiler.samples import SampleStore

DEFAULT_INTERVAL_MS = 1.0
MIN_INTERVAL_MS = 0.1
MODES = ("wall", "cpu")
_FLUSH_SAMPLES = 512


def check_sample(sample, mode: str = "wall") -> tuple[float | None, str]:
    """``(interval in ms or None, mode)`` from ``profile(sample=..., sample_mode=...)``."""
    if mode not in MODES:
        raise EveryOProfilerError(
            f"sample_mode={mode!r}: use 'wall' (time spent, waits included) or 'cpu' "
            "(CPU time only: a thread that waits adds nothing)"
        )
    if sample is None or sample is False:
        return None, mode
    if sample is True:
        return DEFAULT_INTERVAL_MS, mode
    ok = isinstance(sample, (int, float)) and not isinstance(sample, bool)
    if not ok or sample != sample or not MIN_INTERVAL_MS <= sample <= 10_000:
        raise EveryOProfilerError(
            f"sample={sample!r}: give the sampling interval in milliseconds, from "
            f"{MIN_INTERVAL_MS} to 10000 (True means {DEFAULT_INTERVAL_MS:g} ms; "
            "None or False: no sampling)"
        )
    return float(sample), mode


class Sampler:
    """Samples the stacks of ``store_threads``' threads and ``main_ident`` into ``samples``.

    Parameters
    ----------
    samples : SampleStore
    interval_ms : float
    clock : callable
        The recorder's clock (integer ns); sample times are ``clock() - origin()``.
    origin : callable
        The run's time origin now (the magic moves it at the cell's first statement).
    thread_table : list
        The event store's ``threads`` (``(OS id, name)`` pairs), read as it grows.
    """

    def __init__(self, samples: SampleStore, interval_ms: float, clock, origin, thread_table):
        self.samples = samples
        self.interval_s = interval_ms / 1000
        self._clock, self._origin = clock, origin
        self._table = thread_table
        self._known = -1  # len(thread_table) when the target list was last built
        self._targets: list[tuple[int, int, object]] = []  # (ident, OS id, CPU clock id)
        self._main = (threading.get_ident(), threading.get_native_id())
        self._last: dict[int, tuple[int, int]] = {}  # ident -> (time, CPU ns) of last sample
        self._rows: list[tuple] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.errors = 0

    def start(self) -> None:
        self._switch = sys.getswitchinterval()
        self._lowered = min(self._switch, self.interval_s / 4)
        sys.setswitchinterval(self._lowered)
        self._thread = threading.Thread(target=self._loop, name="everyo-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling and move the samples taken into the store (idempotent)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        if self._thread is not None and sys.getswitchinterval() == self._lowered:
            sys.setswitchinterval(self._switch)  # (unless the program set its own meanwhile)
        self.flush()

    def flush(self) -> None:
        rows, self._rows = self._rows, []
        if rows:
            origin = self._origin()
            cols = list(zip(*rows))
            self.samples.append(
                {
                    "t_ns": [t - origin for t in cols[0]],
                    "tid": cols[1],
                    "stack": cols[2],
                    "wall_ns": cols[3],
                    "cpu_ns": cols[4],
                }
            )

    def _loop(self) -> None:
        # wait for the next tick on a fixed grid: late wake-ups do not add up into a longer
        # interval; a tick missed altogether is skipped, not caught up with a burst
        wait, stopped, now = self._stop.wait, self._stop.is_set, time.monotonic
        step = self.interval_s
        tick = now() + step
        while not wait(max(tick - now(), 0.0)):
            tick = max(tick + step, now())
            try:
                self.take()
            except Exception:  # a thread that vanished mid-read: skip this round, keep going
                self.errors += 1
                if stopped():
                    break

    def take(self) -> None:
        """Take one sample of every profiled thread (the sampling thread calls it)."""
        if len(self._table) != self._known:
            self._retarget()
        frames = sys._current_frames()
        now = self._clock()
        rows, last, stack_of = self._rows, self._last, self._stack_of
        for ident, os_id, cpu_clock in self._targets:
            frame = frames.get(ident)
            if frame is None:
                continue
            cpu = _cpu_ns(cpu_clock)
            prev = last.get(ident)
            if prev is None:
                wall_ns, cpu_ns = int(self.interval_s * 1e9), 0
            else:
                wall_ns, cpu_ns = now - prev[0], max(cpu - prev[1], 0)
            last[ident] = (now, cpu)
            rows.append((now, os_id, stack_of(frame), wall_ns, cpu_ns))
        del frames  # frames keep their locals alive: drop them before sleeping
        if len(rows) >= _FLUSH_SAMPLES:
            self.flush()

    def _stack_of(self, frame) -> int:
        codes = []
        while frame is not None:
            codes.append((frame.f_code, frame.f_lineno))
            frame = frame.f_back
        store, sid = self.samples, -1
        frame_ids, stack_ids = store._frame_ids, store._stack_ids
        for key in reversed(codes):
            fid = frame_ids.get(key)
            if fid is None:
                code = key[0]
                fid = store.frame_id(key, code.co_filename, key[1] or 0, code.co_qualname)
            nxt = stack_ids.get((sid, fid))
            sid = store.stack_id(sid, fid) if nxt is None else nxt
        return sid

    def _retarget(self) -> None:
        """The threads to sample: the starting one and those the recorder has seen."""
        self._known = len(self._table)
        wanted = {os_id for os_id, _ in list(self._table)} | {self._main[1]}
        targets = []
        for th in threading.enumerate():
            if th.native_id in wanted and th.ident is not None:
                targets.append((th.ident, th.native_id, _cpu_clock(th.ident)))
        self._targets = targets


def _cpu_clock(ident: int):
    try:
        return time.pthread_getcpuclockid(ident)
    except (AttributeError, OSError):  # not on this platform: CPU time is not measured
        return None


def _cpu_ns(clock_id) -> int:
    if clock_id is None:
        return 0
    try:
        return time.clock_gettime_ns(clock_id)
    except OSError:  # the thread ended
        return 0
