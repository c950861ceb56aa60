"""The stack sampler: the Python stacks of the profiled threads, every interval.

Three ways write the same samples into the run's
:class:`~everyo.profiler.sampling.samples.SampleStore`
(time on the recorder's clock, the thread's OS id as the events carry it, the interned stack,
and the wall and CPU time the thread spent since its previous sample):

- the thread that started the profiler, when it is the main thread, is sampled by the compiled
  ``everyo.profiler.sampling._csampler`` where it was built: a C timer thread queues a pending call
  each tick, which Python runs on the main thread at its next eval-breaker check and which walks
  the frames in C (no signal, no Python code per sample; a stack not seen before is interned by
  :meth:`Sampler._intern_stack`, like the other ways). Both modes tick on wall time; CPU mode
  weighs each sample by the CPU time the thread used.
- without the extension (or with ``EVERYO_SAMPLER=signal``), when no one else uses ``SIGALRM``,
  by a wall-clock timer signal whose Python handler runs at the same points: the same samples,
  at several times the cost per sample (the pure-Python fallback).
- every other profiled thread (each thread the recorder has seen), and the starting thread
  where neither can be used, is read by a sampling thread from ``sys._current_frames()``.
  That thread needs the GIL: it gets it soonest where the profiled code releases it (a NumPy
  call), so its samples lean towards such lines; the interpreter's switch interval is lowered
  to a quarter of the sampling interval only while it samples the starting thread, to keep them
  close to the tick. It starts with the first other thread that records an event (the event
  store tells it when the recorder sees a new thread), and sleeps without a timeout (no
  wake-up, no GIL) while it has no thread left to sample.

Samples are attributed to events afterwards, by time (:func:`everyo.profiler.hot_lines`), so
the recorder is not touched. Each sample carries the time it stands for (``wall_ns``), and
readers weight by it rather than counting samples.
"""

from __future__ import annotations

import atexit
import collections
import numbers
import os
import signal
import sys
import threading
import time
import weakref

import numpy as np

from everyo import _compiled
from everyo.errors import EveryOProfilerError, EveryOProfilerWarning
from everyo.profiler.recording.own_errors import OWN_HANDLERS, raised_by_signal_handler
from everyo.profiler.sampling.samples import SampleStore

DEFAULT_INTERVAL_MS = 1.0
MIN_INTERVAL_MS = 0.1
MODES = ("wall", "cpu")
_FLUSH_SAMPLES = 512
_FLUSH_S = 0.5  # and at least this often (a live dashboard reads only the samples flushed)
_IDLE_S = 0.05  # how often the sampling thread looks for threads when it has none to sample
MAX_GAP = 2  # a sampling-thread sample stands for at most this many intervals
# one whole-stack key of the Python look-up: the tuple's header, its slot in the dict (each
# int of it is 8 bytes in the tuple and, above 256, 32 in an int object: counted as 8 + 32)
_KEY_BYTES = 56 + 100
_SIGNAL, _TIMER = "SIGALRM", "ITIMER_REAL"
PATHS = ("c", "signal", "thread")  # how the starting thread is sampled (EVERYO_SAMPLER forces one)
_RUNNING: weakref.WeakSet = weakref.WeakSet()  # stopped at exit: no timer outlives the program


def compiled():
    """The compiled main-thread sampler ``everyo.profiler.sampling._csampler``, or ``None`` where it
    is not in use (:mod:`everyo._compiled` says why)."""
    return _compiled.load("everyo.profiler.sampling._csampler")


def forced_path() -> str:
    """``EVERYO_SAMPLER``: the way to sample the starting thread that the environment forces
    (``""`` when none), checked when the profiler is made."""
    forced = os.environ.get("EVERYO_SAMPLER", "")
    if forced and forced not in PATHS:
        raise EveryOProfilerError(
            f"EVERYO_SAMPLER={forced!r}: use c (the compiled sampler), signal (a timer "
            "signal and a Python handler) or thread (a sampling thread), or leave it unset"
        )
    if forced == "c" and compiled() is None:
        raise EveryOProfilerError(
            "EVERYO_SAMPLER=c: the compiled sampler (everyo.profiler.sampling._csampler) was not "
            "built or EVERYO_PURE_PYTHON is set; build it with a C compiler "
            "(python setup.py build_ext --inplace) or leave EVERYO_SAMPLER unset"
        )
    return forced


def _mono_clock(clock) -> bool:
    """Whether ``clock`` reads what the C sampler reads (CLOCK_MONOTONIC) by itself."""
    info = time.get_clock_info("perf_counter")
    return clock is time.perf_counter_ns and "CLOCK_MONOTONIC" in info.implementation


def check_sample(sample, mode: str = "wall") -> tuple[float | None, str]:
    """``(interval in ms or None, mode)`` from ``profile(sample=..., sample_mode=...)``."""
    if mode not in MODES:
        raise EveryOProfilerError(
            f"sample_mode={mode!r}: use 'wall' (time spent, waits included) or 'cpu' "
            "(CPU time only: a thread that waits adds nothing)"
        )
    if sample is None or sample is False:
        return None, mode
    forced_path()
    if sample is True:
        return DEFAULT_INTERVAL_MS, mode
    # any real number (NumPy's np.int64(2) and np.float32(1.0) too), never a bool
    ok = isinstance(sample, numbers.Real) and not isinstance(sample, (bool, np.bool_))
    if ok:
        sample = float(sample)
    if not ok or sample != sample or not MIN_INTERVAL_MS <= sample <= 10_000:
        raise EveryOProfilerError(
            f"sample={sample!r}: give the sampling interval in milliseconds, from "
            f"{MIN_INTERVAL_MS} to 10000 (True means {DEFAULT_INTERVAL_MS:g} ms; "
            "None or False: no sampling)"
        )
    return float(sample), mode


class Sampler:
    """Samples the stacks of the profiled threads into ``samples`` (see the module doc).

    Parameters
    ----------
    samples : SampleStore
    interval_ms : float
    mode : str
        ``"wall"`` or ``"cpu"`` (recorded with the run; both take the same samples).
    clock : callable
        The recorder's clock (integer ns); sample times are ``clock() - origin()``.
    origin : callable
        The run's time origin now (the magic moves it at the cell's first statement).
    store : EventStore
        The run's events: its ``threads`` (``(OS id, name)`` pairs) are the threads to sample,
        and it calls ``on_new_thread`` when one is added.
    on_flush : callable, optional
        Called after samples move into the store while sampling (the memory budget's check).
    """

    def __init__(
        self,
        samples: SampleStore,
        interval_ms: float,
        mode: str,
        clock,
        origin,
        store,
        *,
        on_flush=None,
    ):
        self.samples = samples
        self.on_flush = on_flush
        self.interval_s = interval_ms / 1000
        # samples are moved into the store every this many: the live why panels draw from
        # them (at 10 ms, 512 samples took 5 s, and a short cell showed none while it ran)
        self._flush_at = max(1, min(_FLUSH_SAMPLES, round(_FLUSH_S / self.interval_s)))
        self.mode = mode
        self._clock, self._origin = clock, origin
        self._events = store
        self._table = store.threads
        self._known = -1  # len(thread_table) when the target list was last built
        self._targets: list[tuple] = []  # (ident, OS id, CPU clock id, the Thread)
        self._main = (threading.get_ident(), threading.get_native_id())
        self._last: dict[int, tuple[int, int]] = {}  # ident -> (time, CPU ns) of last sample
        self._rows: list[tuple] = []  # the sampling thread's samples
        self._signalled = collections.deque()  # the signal handler's (deque: thread-safe)
        self._intern = threading.Lock()  # the handler and the thread both intern stacks
        self._in_handler = False
        self._seen: dict[tuple, int] = {}  # (code id, offset, ...) of a whole stack -> its id
        self._seen_bytes = 0
        self._stop = threading.Event()
        self._wake = threading.Event()  # a thread was added to the table, or stop
        self._starting = threading.Lock()  # the sampling thread starts once, never after stop
        self._flushing = threading.Lock()  # the C sampler's flush on the main thread, the thread's
        self._thread: threading.Thread | None = None
        self._timer = self._saved_handler = self._switch = self._c = None
        self.main_path = self._main_path()
        self.errors = 0  # samples lost (a thread gone mid-read, the C sampler's errors)
        self._c_errors = 0

    def _main_path(self) -> str:
        """How the starting thread is sampled: ``"c"``, ``"signal"`` or ``"thread"``."""
        forced = forced_path()
        if forced == "thread" or threading.current_thread() is not threading.main_thread():
            return "thread"  # (pending calls and signals run on the main thread only)
        if forced in ("", "c") and compiled() is not None:
            return "c"
        return "signal" if self._signal_free() else "thread"

    @property
    def use_signal(self) -> bool:
        return self.main_path == "signal"

    def _signal_free(self) -> bool:
        """Whether the timer signal can be ours: no handler or timer set."""
        if not hasattr(signal, "setitimer") or not hasattr(signal, _SIGNAL):
            return False
        handler = signal.getsignal(getattr(signal, _SIGNAL))
        timer = signal.getitimer(getattr(signal, _TIMER))
        return handler in (signal.SIG_DFL, None) and timer == (0.0, 0.0)

    def start(self) -> None:
        if self.main_path == "c":
            self._c = compiled().MainSampler(
                round(self.interval_s * 1e9),
                self._main[1],
                None if _mono_clock(self._clock) else self._clock,
                self._intern_main,
                self._flush_main,
                self._flush_at,
                round(MAX_GAP * self.interval_s * 1e9),
            )
            self._c.start()
        elif self.main_path == "signal":
            self._saved_handler = signal.signal(getattr(signal, _SIGNAL), self._on_signal)
            self._timer = getattr(signal, _TIMER)
            signal.setitimer(self._timer, self.interval_s, self.interval_s)
        else:  # the starting thread is sampled by the thread: keep the GIL wait short
            self._switch = sys.getswitchinterval()
            self._lowered = min(self._switch, self.interval_s / 4)
            sys.setswitchinterval(self._lowered)
        _RUNNING.add(self)
        self.samples.sampler_bytes = self.lookup_bytes
        self._events.on_new_thread = self._thread_added
        others = any(os_id != self._main[1] for os_id, _ in list(self._table))
        if self.main_path == "thread" or others:
            self._start_thread()

    def _forked(self) -> None:
        """In a child forked while this sampler ran: the timer thread and the sampling thread
        are the parent's, and a lock one of them held at the fork would stay held for ever.
        The child samples nothing (its samples from before the fork stay) and runs on."""
        self._intern, self._flushing = threading.Lock(), threading.Lock()
        self._starting = threading.Lock()
        self.samples._lock = threading.Lock()
        # (so are the locks inside its Events: the sampling thread takes _stop's in each wait,
        # every interval, and a child forked then hung in _stop.set() for ever, seen in CI)
        self._stop, self._wake = threading.Event(), threading.Event()
        self._stop.set()
        self._thread = None
        if self._c is not None:
            self._c.stop()  # (in a child: marks it stopped, joins no thread)
        if self._timer is not None:  # (a child inherits no timer; the handler goes back)
            try:
                signal.signal(getattr(signal, _SIGNAL), self._saved_handler or signal.SIG_DFL)
            except ValueError:  # (not the child's main thread: the handler is never run)
                pass
            self._timer = None

    def _thread_added(self) -> None:
        """The event store's call when the recorder sees a new thread (on that thread): the
        sampling thread starts with the first thread it has to sample, or looks again."""
        if threading.get_native_id() == self._main[1] and self.main_path != "thread":
            return  # (the starting thread's own first event: sampled where it is)
        if self._thread is None:
            self._start_thread()
        self._wake.set()

    def _start_thread(self) -> None:
        with self._starting:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._loop, name="everyo-sampler", daemon=True
                )
                self._thread.start()

    def stop(self) -> None:
        """Stop sampling and move the samples taken into the store (idempotent)."""
        _RUNNING.discard(self)
        if self._c is not None:  # first: no sample may be taken while the store is written
            self._c.stop()
        if self._timer is not None:
            self._give_back_signal()
        if self._events.on_new_thread == self._thread_added:
            self._events.on_new_thread = None
        with self._starting:
            self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        if self._switch is not None and sys.getswitchinterval() == self._lowered:
            sys.setswitchinterval(self._switch)  # (unless the program set its own meanwhile)
        self.flush()
        if self.samples.sampler_bytes == self.lookup_bytes:  # (its tables go with it)
            self.samples.sampler_bytes = None
        if self._c is not None:  # (once: stop may be called again)
            self.errors += self._c.errors - self._c_errors
            self._c_errors = self._c.errors

    def _give_back_signal(self) -> None:
        """Put the timer signal back as it was, unless the program took it meanwhile: then its
        handler and timer stay as it set them, and the run says that the starting thread was
        not sampled from then on (a program's own alarm is never changed by the profiler)."""
        signum, timer, self._timer = getattr(signal, _SIGNAL), self._timer, None
        if signal.getsignal(signum) == self._on_signal:
            signal.setitimer(timer, 0.0)
            signal.signal(signum, self._saved_handler or signal.SIG_DFL)
            return
        import warnings

        warnings.warn(
            f"everyo profiler: the profiled code installed its own {_SIGNAL} handler while the "
            f"sampler used {_SIGNAL} (the pure-Python fallback); the profiler left the signal "
            "and its timer to it, and the starting thread's samples stop where it took it. "
            "Build the compiled sampler or set EVERYO_SAMPLER=thread to sample without a signal",
            EveryOProfilerWarning,
            stacklevel=3,
        )

    def flush(self) -> None:
        """Move the samples taken so far into the store (from the sampling thread, the C
        sampler's pending call on the main thread when its buffer is full, and stop)."""
        with self._flushing:
            rows, self._rows = self._rows, []
            pop = self._signalled.popleft
            for _ in range(len(self._signalled)):
                rows.append(pop())
            parts = []
            if rows:
                cols = list(zip(*rows))
                parts.append((cols[0], cols[1], cols[2], cols[3], cols[4]))
            if self._c is not None and self._c.buffered:
                t, stack, wall, cpu = (
                    np.frombuffer(b, d)
                    for b, d in zip(self._c.drain(), (np.int64, np.int32, np.int64, np.int64))
                )
                parts.append((t, np.full(len(t), self._main[1], np.int64), stack, wall, cpu))
            if not parts:
                return
            origin = self._origin()
            for t, tid, stack, wall, cpu in parts:
                self.samples.append(
                    {
                        "t_ns": np.asarray(t, np.int64) - origin,
                        "tid": tid,
                        "stack": stack,
                        "wall_ns": wall,
                        "cpu_ns": cpu,
                    }
                )
        if self.on_flush is not None and not self._stop.is_set():
            self.on_flush()

    def _intern_main(self, frame) -> int:
        """The C sampler's call for a stack it has not seen (on the main thread); -1: it could
        not be interned (that sample is lost). An exception the program's signal handler raised
        meanwhile is the program's: it goes on, where the thread is."""
        try:
            with self._intern:
                return self._intern_stack(frame)
        except Exception as exc:
            if raised_by_signal_handler(exc):
                raise
            return -1

    def _flush_main(self) -> None:
        """The C sampler's call when its buffer is full (on the main thread)."""
        try:
            self.flush()
        except Exception as exc:
            if raised_by_signal_handler(exc):
                raise
            self.errors += 1

    def _on_signal(self, signum, frame) -> None:
        """The timer signal's handler, on the starting thread: sample that thread."""
        if self._in_handler or frame is None:  # (a handler run inside this one: skip it)
            return
        self._in_handler = True
        try:
            now, cpu = self._clock(), time.thread_time_ns()
            with self._intern:
                sid = self._stack_of(frame)
            self._signalled.append((now, self._main[1], sid, *self._spans(self._main[0], now, cpu)))
            if len(self._signalled) >= self._flush_at and not self._flushing.locked():
                self.flush()  # (the sampling thread runs only with other threads to sample)
        except Exception as exc:  # the sampler's own error loses this sample; the program's
            if raised_by_signal_handler(exc):  # handler's exception goes on (issue 44)
                raise
            self.errors += 1
        finally:
            self._in_handler = False

    def _spans(self, ident: int, now: int, cpu: int, cap: int | None = None) -> tuple[int, int]:
        """(wall ns, CPU ns) since the thread's previous sample (one interval for the first),
        each at most ``cap``."""
        prev = self._last.get(ident)
        self._last[ident] = (now, cpu)
        if prev is None:
            return int(self.interval_s * 1e9), 0
        wall, used = now - prev[0], max(cpu - prev[1], 0)
        return (wall, used) if cap is None else (min(wall, cap), min(used, cap))

    def _loop(self) -> None:
        if self.use_signal and hasattr(signal, "pthread_sigmask"):
            # the timer's signal is for the starting thread: delivered here, it would wake
            # this thread to take the GIL for nothing
            signal.pthread_sigmask(signal.SIG_BLOCK, {getattr(signal, _SIGNAL)})
        # wait for the next tick on a fixed grid: late wake-ups do not add up into a longer
        # interval; a tick missed altogether is skipped, not caught up with a burst
        wait, stopped, now = self._stop.wait, self._stop.is_set, time.monotonic
        step = self.interval_s
        while not stopped():
            self._wake.clear()  # (before reading the table: a thread added from here on wakes it)
            if len(self._table) != self._known:
                self._retarget()
            if not self._targets:  # nothing to sample: sleep until the table grows, or stop
                self._wake.wait()
                continue
            tick = now() + step
            while self._targets and not wait(max(tick - now(), 0.0)):
                tick = max(tick + step, now())
                try:
                    self.take()
                except Exception:  # a thread that vanished mid-read: skip this round
                    self.errors += 1

    def take(self) -> None:
        """Sample every thread the sampling thread covers; move the samples on when many."""
        if len(self._table) != self._known:
            self._retarget()
        if self._targets:
            frames = sys._current_frames()
            now = self._clock()
            rows = self._rows
            # a gap longer than MAX_GAP intervals means this thread was held off (by the OS,
            # on a busy machine): what the sampled thread did meanwhile is unknown, and charging
            # all of it to the line it is on now skews the shares. (The signal's handler runs
            # where the thread was when it was held off itself, so its spans are not capped.)
            cap = int(MAX_GAP * self.interval_s * 1e9)
            gone = False
            with self._intern:
                for ident, os_id, cpu_clock, thread in self._targets:
                    # (a thread that ended may have passed its ident on to a new one, which is
                    # not the one the recorder saw: the ident alone would file it under the
                    # dead thread's id)
                    frame = frames.get(ident) if thread.is_alive() else None
                    if frame is not None:
                        span = self._spans(ident, now, _cpu_ns(cpu_clock), cap)
                        rows.append((now, os_id, self._stack_of(frame), *span))
                    else:
                        gone = True
            del frames  # frames keep their locals alive: drop them before sleeping
            if gone:  # a thread that ended: sample the others, or sleep until a new one
                self._targets = [t for t in self._targets if t[3].is_alive()]
        if len(self._rows) + len(self._signalled) >= self._flush_at:
            self.flush()

    def _stack_of(self, frame) -> int:
        """The interned stack of ``frame``. A stack seen before costs one walk and one dict
        lookup keyed by the frames' code ids and instruction offsets (the code objects are held
        by the store from their first sample on, so an id is never reused)."""
        key = []
        f = frame
        while f is not None:
            key.append(id(f.f_code))
            key.append(f.f_lasti)
            f = f.f_back
        key = tuple(key)
        sid = self._seen.get(key)
        if sid is None:
            sid = self._seen[key] = self._intern_stack(frame)
            self._seen_bytes += _KEY_BYTES + 40 * len(key)  # (the tuple, its ints, the slot)
        return sid

    def lookup_bytes(self) -> int:
        """The bytes of the stack look-up tables (the compiled sampler's and this one's): the
        memory budget counts them with the run's samples while the sampler runs."""
        c = self._c
        return self._seen_bytes + (c.nbytes if c is not None else 0)

    def _intern_stack(self, frame) -> int:
        codes = []
        while frame is not None:
            codes.append((frame.f_code, frame.f_lineno))
            frame = frame.f_back
        store, sid = self.samples, -1
        for code, line in reversed(codes):
            line = line or 0
            fid = store.frame_id((id(code), line), code.co_filename, line, code.co_qualname, code)
            sid = store.stack_id(sid, fid)
        return sid

    def _retarget(self) -> None:
        """The threads the sampling thread covers: those the recorder has seen, and the
        starting one unless the C sampler or the signal samples it."""
        self._known = len(self._table)
        wanted = {os_id for os_id, _ in list(self._table)} | {self._main[1]}
        if self.main_path != "thread":
            wanted.discard(self._main[1])
        targets = []
        for th in threading.enumerate():
            if th.native_id in wanted and th.ident is not None:
                targets.append((th.ident, th.native_id, _cpu_clock(th.ident), th))
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


OWN_HANDLERS.add(Sampler._on_signal.__code__)


def _after_fork_in_child() -> None:
    for sampler in list(_RUNNING):
        sampler._forked()
    _RUNNING.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@atexit.register
def _stop_at_exit() -> None:
    """A profile still running at exit: stop its timer thread before the interpreter ends."""
    for sampler in list(_RUNNING):
        if sampler._c is not None:
            sampler._c.stop()
