"""``Profiler``, ``profile`` and ``record_function``: the public face of the profiler.

>>> import everyo.profiler as ep
>>> with ep.profile(label="doc") as p:
...     with ep.record_function("setup", stage="load"):
...         pass
>>> [row["name"] for row in p.summary()]
['setup']
"""

from __future__ import annotations

import functools
import inspect
import numbers
import sys
import threading
import time
from pathlib import Path

import numpy as np

from everyo.errors import EveryOProfilerError
from everyo.profiler.recording import hooks, regions
from everyo.profiler.recording import recorder as _recorder
from everyo.profiler.recording.gpu import CudaTimer
from everyo.profiler.recording.recorder import Recorder
from everyo.profiler.recording.schedule import Schedule
from everyo.profiler.recording.tensor_memory import MemoryTracker
from everyo.profiler.sampling.sampler import Sampler, check_sample
from everyo.profiler.sampling.samples import SampleStore
from everyo.profiler.storage.events_cache import EventsCache
from everyo.profiler.storage.run import Run, runs
from everyo.profiler.storage.store import EventStore

default_clock = time.perf_counter_ns
"""The clock new profilers use (integer nanoseconds); tests pass ``clock=`` instead."""


def _check_warmup(warmup) -> int:
    """A whole number of events >= 0; a fractional one is truncated (as EveryO does)."""
    # NumPy's numbers too (np.int64(3) was refused while np.float64(3.0) passed)
    ok = isinstance(warmup, numbers.Real) and not isinstance(warmup, bool)
    if not ok or warmup != warmup or warmup in (float("inf"), float("-inf")) or warmup < 0:
        raise EveryOProfilerError(
            f"warmup={warmup!r}: use a whole number >= 0 (the number of first recorded events "
            "to skip); for iteration-based windows use schedule=schedule(wait=, warmup=, active=)"
        )
    return int(warmup)


class Profiler:
    """Record module calls, backward passes, optimizer steps, data loading and custom regions.

    Parameters
    ----------
    warmup : int
        Number of first *recorded events* to skip (not iterations; see ``schedule``).
    record_shapes : bool
        Store input and output shapes of module and op events.
    record_ops : bool
        Also record every engine op with its FLOPs and bytes moved.
    profile_memory : bool
        Bytes allocated per event, live tensor bytes over time and their peak.
    schedule : Schedule, optional
        Step-based windows (``schedule(wait=, warmup=, active=, repeat=)``); call ``step()``
        once per iteration.
    label : str, optional
        A name for the run in ``everyo.profiler.runs`` and in exports.
    sample : float or bool, optional
        Also sample the Python stacks of the profiled threads every ``sample`` ms (``True``:
        1 ms), so that any event can say which lines spent its time
        (:func:`everyo.profiler.hot_lines`). ``None`` (default): no sampling.
    sample_mode : str
        ``"wall"`` (default: time spent, waits included) or ``"cpu"`` (CPU time only): how
        :func:`~everyo.profiler.hot_lines` weighs the samples; both are stored.
    clock : callable, optional
        Returns integer nanoseconds; defaults to ``time.perf_counter_ns``.
    registry : RunRegistry, optional
        Where the run is kept (``everyo.profiler.runs`` by default).
    torch : bool
        Record PyTorch's work too (module calls, backward per module, optimizer steps, data
        batches, ``record_function`` blocks) when ``torch`` is imported as the profile starts;
        ``False`` leaves torch alone (see :mod:`everyo.profiler.torch`).
    torch_sync : bool
        Synchronise CUDA at each torch module's start and end, so that its event holds its GPU
        work rather than its kernels' launch (slower; host times otherwise).

    Examples
    --------
    >>> from everyo.profiler import Profiler
    >>> p = Profiler(warmup=0)
    >>> with p:
    ...     with p.record("step", {"batch_size": 32}):
    ...         pass
    >>> p.run.status, p.summary()[0]["calls"]
    ('completed', 1)
    """

    def __init__(
        self,
        *,
        warmup: int = 0,
        record_shapes: bool = True,
        record_ops: bool = False,
        profile_memory: bool = False,
        schedule: Schedule | None = None,
        label: str | None = None,
        clock=None,
        registry=None,
        sample: float | bool | None = None,
        sample_mode: str = "wall",
        torch: bool = True,
        torch_sync: bool = False,
    ):
        self.warmup = _check_warmup(warmup)
        self.sample_ms, self.sample_mode = check_sample(sample, sample_mode)
        if schedule is not None and not isinstance(schedule, Schedule):
            raise EveryOProfilerError("schedule= takes everyo.profiler.recording.schedule(...)")
        self.record_shapes = bool(record_shapes)
        self.record_ops = bool(record_ops)
        self.profile_memory = bool(profile_memory)
        self.schedule = schedule
        self.torch = bool(torch)
        self.torch_sync = bool(torch_sync)
        self._torch = None  # the installed everyo.profiler.torch adapter, while running
        self._torch_watch = None  # stops watching for torch's import (it was not imported)
        self.label = label
        self.registry = runs if registry is None else registry
        self.run: Run | None = None
        self.store: EventStore | None = None
        self.steps = 0
        self._clock = clock or default_clock
        self._stopped = False  # recording has stopped (the run may not be finished yet)
        self._finished = False  # stop() has finished the run
        self._recorder: Recorder | None = None
        self._sampler: Sampler | None = None
        self._over_budget = False

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> Profiler:
        """Start recording. Raises ``RuntimeError`` if another profiler is active.

        A profiler started again after it stopped resumes its run: new events are added to the
        same run (on the same time axis), as EveryO's profiler does when re-entered.
        """
        if self.run is not None and not self._stopped:
            raise EveryOProfilerError("this Profiler is already running; stop it first")
        if self.run is not None and not self._finished:
            self.stop()  # a stop that raised part-way: finish it before resuming
        if hooks.active is not None:  # a running profiler, or a hook object a test installed
            holder = hooks.holder() or hooks.active
        else:
            holder = hooks.claim(self)
        if holder is not None:
            raise RuntimeError(
                f"everyo profilers cannot be nested: {holder!r} is already active; "
                "stop it first, or use record_function() for a sub-region"
            )
        try:
            if self.run is None:
                self._begin()
            else:
                self._resume()
            self._before = (dict(self.run.counters), self.run.skipped)
            self._install_torch()
        except BaseException:
            self._remove_torch()
            hooks.release(self)
            raise
        hooks.set_active(self._recorder)
        self._start_sampler()
        return self

    def _install_torch(self) -> None:
        """The PyTorch adapter, when torch is imported, or as soon as the profiled code imports
        it (never imported here: see :mod:`everyo.profiler.torch`)."""
        if not self.torch:
            return
        if "torch" not in sys.modules:
            from everyo.profiler.recording.imports import when_imported

            self._torch_watch = when_imported("torch", self._torch_imported)
            return
        from everyo.profiler import torch as torch_adapter  # (imports torch: only when it is)

        self._torch = torch_adapter.install(self._recorder, sync=self.torch_sync)
        self.run.options["torch"] = self._torch.notes()

    def _torch_imported(self) -> None:
        """torch has just been imported by the profiled code (the import's own thread)."""
        self._stop_torch_watch()
        # only while this profiler runs: a watch left by one whose stop never came (an
        # interrupt in start) must not install an adapter that no stop would remove
        if hooks.active is self._recorder and not self._stopped and self._torch is None:
            self._install_torch()

    def _stop_torch_watch(self) -> None:
        if self._torch_watch is not None:
            self._torch_watch()  # (again after an interrupt: it does nothing twice)
            self._torch_watch = None

    def _remove_torch(self) -> None:
        """Put torch back as it was; again after an interrupt, what is left."""
        self._stop_torch_watch()
        if self._torch is not None:
            self.run.options["torch"] = self._torch.notes()  # (CUDA may have started meanwhile)
        adapters = sys.modules.get("everyo.profiler.torch")
        if adapters is not None:  # every adapter, even one an interrupt kept from self._torch
            adapters.remove_all()
        self._torch = None

    def _start_sampler(self) -> None:
        if self.sample_ms is None:
            return
        if self.run.samples is None:
            self.run.samples = SampleStore()
        run = self.run
        self._sampler = Sampler(
            run.samples,
            self.sample_ms,
            self.sample_mode,
            self._clock,
            lambda: run.t0_ns,
            self.store,
            on_flush=self._check_budget,
        )
        self._sampler.start()

    def _begin(self) -> None:
        optional = ("shape",) if self.record_shapes else ()
        optional += ("flops", "bytes") if self.record_ops else ()
        optional += ("mem_bytes",) if self.profile_memory else ()
        gpu = CudaTimer.create() if self._uses_cuda_now() else None
        if gpu is not None:
            optional += ("device_ns",)
        self.store = EventStore(optional)
        self._recorder = self._new_recorder(self._clock(), self.warmup, gpu)
        self.run = Run(self.store, label=self.label, options=self.options(), clock=self._clock)
        self._recorder.set_origin(self.run.t0_ns)
        self.registry.add(self.run)
        self._recorder.set_recording(self.schedule is None or self.schedule.action(0) == "active")

    def _new_recorder(self, origin_ns: int, warmup: int, gpu):
        return _recorder.Recorder(  # (a module attribute: tests swap the class)
            self.store,
            clock=self._clock,
            origin_ns=origin_ns,
            record_shapes=self.record_shapes,
            record_ops=self.record_ops,
            warmup=warmup,
            schedule=self.schedule,
            gpu=gpu,
            memory=MemoryTracker() if self.profile_memory else None,
            on_flush=self._check_budget,
        )

    def _resume(self) -> None:
        """Record into the stopped run again (its store, time origin, steps and warmup left)."""
        prev = self._recorder
        gpu = CudaTimer.create() if self._uses_cuda_now() else None
        if gpu is not None:
            self.store.add_column("device_ns")
        self._recorder = self._new_recorder(self.run.t0_ns, prev._skip, gpu)
        self.run.resume()
        if all(r is not self.run for r in self.registry):  # evicted meanwhile
            self.registry.add(self.run)
        self._stopped = self._finished = False
        self._recorder.set_recording(
            self.schedule is None or self.schedule.action(self.steps) == "active"
        )

    @staticmethod
    def _uses_cuda_now() -> bool:
        """CUDA timing from the start when the process already holds CUDA tensors' module
        (CuPy imported); otherwise it starts on the first module call on a CUDA tensor."""
        import sys

        return "cupy" in sys.modules

    def options(self) -> dict:
        """The options of this profiler as a JSON-ready dict (stored in the run)."""
        sched = self.schedule
        return {
            "warmup": self.warmup,
            "record_shapes": self.record_shapes,
            "record_ops": self.record_ops,
            "profile_memory": self.profile_memory,
            "schedule": None
            if sched is None
            else {
                "wait": sched.wait,
                "warmup": sched.warmup,
                "active": sched.active,
                "repeat": sched.repeat,
            },
            "cuda_timing": self._recorder is not None and self._recorder.cuda_timing,
            "sample_ms": self.sample_ms,
            "sample_mode": self.sample_mode,
            "torch_sync": self.torch_sync,
        }

    def stop(self, error: BaseException | str | None = None) -> Run | None:
        """Stop recording, resolve device times and counters, and finish the run.

        A stop that raised part-way (a second Ctrl-C, a ``MemoryError`` while the last events
        move into the run) leaves the run ``running`` with its events still buffered: calling
        ``stop()`` again finishes it, and nothing recorded is lost.
        """
        if self.run is None or self._finished:
            return self.run
        self._stopped = True
        if hooks.active is self._recorder:
            hooks.set_active(None)
        try:
            self._remove_torch()  # first: nothing of the profile stays in torch's path
        finally:
            hooks.release(self)
        if self._sampler is not None:  # first: its samples are taken while the events are
            self._sampler.stop()
            self._sampler = None
        rec = self._recorder
        rec.stop()  # (again after a stop that raised: what is left)
        self._finish(rec, error)
        self._finished = True
        self.registry.enforce_budget()
        return self.run

    def _finish(self, rec, error) -> None:
        """Stop's last part: device times, counters and the run's status."""
        if rec.gpu is not None:
            self.store.add_column("device_ns")  # (present unless CUDA timing began mid-run)
            self.store.set_values("device_ns", *rec.device_times())
        # (from what the run held when this session started: a stop that raised part-way
        # and was called again must not count this session twice)
        counters, skipped = self._before
        if rec.memory is not None:
            for name, (t, v) in rec.memory.counters().items():
                if name in counters:  # a resumed run: after the earlier samples
                    t0, v0 = counters[name]
                    t, v = np.concatenate([t0, t]), np.concatenate([v0, v])
                self.run.add_counter(name, t, v)
            peaks, before = rec.memory.peaks(), self.run.memory or {}
            self.run.memory = {  # a resumed run: the peak over every session
                k: max(v, before[k]) if isinstance(v, (int, float)) and k in before else v
                for k, v in peaks.items()
            }
        self.run.skipped = skipped + rec.skipped
        self.run.options["cuda_timing"] = rec.cuda_timing
        self.run.options["steps"] = self.steps
        self.run.finish(error)

    def flush(self) -> None:
        """Move the calling thread's buffered events into the run now.

        Events reach the run in bulk (every 2,048 events or 50 ms per thread, and at stop);
        a reader on the recording thread (a test, a live view) calls this to see every event
        finished so far.
        """
        if self._recorder is not None and not self._stopped:
            self._recorder.flush()

    def restart_clock(self) -> None:
        """Count the run's time from now (see :meth:`Run.restart_clock`); before any event."""
        if self.run is not None and not self._stopped:
            self.run.restart_clock()
            self._recorder.set_origin(self.run.t0_ns)

    def _check_budget(self) -> None:
        """Hold the registry's memory budget while the run grows, not only at start and stop:
        evict the oldest finished runs, and say once when this run alone is over budget (it
        keeps recording: nothing recorded is dropped)."""
        registry = self.registry
        if registry.nbytes <= registry.budget_bytes:
            return
        registry.enforce_budget()
        if self._over_budget or registry.nbytes <= registry.budget_bytes:
            return
        self._over_budget = True
        import warnings

        from everyo.errors import EveryOProfilerWarning

        run = self.run
        warnings.warn(
            f"everyo profiler: run {run.id} ({run.label!r}) holds {run.nbytes:,} bytes and the "
            f"runs held total more than runs.budget_bytes={registry.budget_bytes:,} while it "
            "is still recording (nothing is dropped). Record less (schedule=, "
            "record_shapes=False, fewer metadata), or raise everyo.profiler.runs.budget_bytes",
            EveryOProfilerWarning,
            stacklevel=2,
        )

    def step(self) -> None:
        """Mark the end of one iteration: drives ``schedule``, and while recording appends the
        time (ns from the run's start) to ``run.step_ns``, which the dashboard reads as steps."""
        self.steps += 1
        if self.run is None or self._stopped:
            return
        self.run.step_ns.append(int(self._clock() - self.run.t0_ns))
        if self.schedule is not None:
            self._recorder.set_recording(self.schedule.action(self.steps) == "active")

    def __enter__(self) -> Profiler:
        return self.start()

    def __exit__(self, exc_type, exc, tb) -> bool:
        clean = exc is None or (isinstance(exc, SystemExit) and exc.code in (0, None))
        self.stop(None if clean else exc)
        return False  # never swallow the exception

    # -- results -------------------------------------------------------------------------------
    def _require_run(self) -> Run:
        if self.run is None:
            raise EveryOProfilerError(
                "this profiler has not run: profile code inside `with profile() as p:` first"
            )
        self.flush()  # this thread's buffered events
        return self.run

    @property
    def events(self) -> list:
        """Every recorded event as a list of :class:`ProfileEvent` (row order: completion);
        built once per state of the run (see :mod:`everyo.profiler.storage.events_cache`)."""
        if self.run is None:
            return []
        if "_events_cache" not in self.__dict__:
            self._events_cache = EventsCache()
        return self._events_cache.events(self._require_run())

    def summary(
        self,
        group_by: str = "name",
        sort_by: str = "total_ms",
        top: int | None = None,
        descending: bool = True,
    ):
        """Aggregated timings, one row (dict) per group; prints as an aligned table.

        See :func:`everyo.profiler.analysis.run_analysis.summarize` for the columns.
        """
        from everyo.profiler.analysis.run_analysis import summarize

        return summarize(
            self._require_run(), group_by=group_by, sort_by=sort_by, top=top, descending=descending
        )

    def export_json(self, path, *, format: str = "events") -> Path:
        """Write the events as JSON (atomically; gzip for ``.gz``); return the path.

        ``format="events"`` (default) writes the reference EveryO's JSON array of events (see
        :class:`ProfileEvent`); ``format="raw"`` writes everyo's file with the run header,
        thread names and counters too. :func:`everyo.profiler.load` reads both.
        """
        from everyo.profiler.export.events import export_json

        return export_json(self._require_run(), path, format=format)

    def export_chrome_trace(self, path) -> Path:
        """Write a Chrome/Perfetto trace (``.json``, or gzip for ``.gz``) atomically; return it."""
        from everyo.profiler.export.chrome import export_chrome_trace

        return export_chrome_trace(self._require_run(), path)

    def record(self, name: str, metadata: dict | None = None):
        """A custom timing region of this (running) profiler: ``with p.record("step"): ...``."""
        if metadata is not None and not isinstance(metadata, dict):
            raise EveryOProfilerError(f"record({name!r}, metadata=...) takes a dict")
        if self._recorder is None or hooks.active is not self._recorder:
            raise EveryOProfilerError(
                f"record({name!r}) needs this profiler running: call it inside `with profiler:`"
            )
        return self._recorder.region(str(name), "user", **(metadata or {}))

    def __repr__(self) -> str:
        state = "idle" if self.run is None else ("stopped" if self._stopped else "running")
        return f"<everyo Profiler {state} label={self.label!r}>"


def step() -> None:
    """Mark the end of one training step of the running profiler (``Profiler.step()``).

    For code that does not hold the profiler, such as a ``%%everyo_profile`` cell.

    Raises
    ------
    EveryOProfilerError
        When no profiler is running.

    Examples
    --------
    >>> import everyo.profiler as ep
    >>> with ep.profile(label="steps") as p:
    ...     for _ in range(3):
    ...         ep.step()
    >>> len(p.run.step_ns)
    3
    """
    p = hooks.holder()
    if not isinstance(p, Profiler):
        raise EveryOProfilerError(
            "everyo.profiler.step() marks a step of the running profiler, and none is running: "
            "call it inside `with everyo.profiler.profile():` or a %%everyo_profile cell"
        )
    p.step()


def profile(**options) -> Profiler:
    """A :class:`Profiler` to use as a context manager: ``with profile() as p: ...``."""
    return Profiler(**options)


class record_function:
    """Record a named region with metadata while a profiler is active; otherwise do nothing.

    Works as a context manager and as a decorator.

    >>> from everyo.profiler import record_function
    >>> with record_function("preprocess", batch_size=64):
    ...     pass
    """

    def __init__(self, name: str, **metadata):
        self.name = str(name)
        self.metadata = metadata
        self._open: dict[int, list] = {}  # per thread: one instance may be entered in several

    def __enter__(self) -> record_function:
        p = hooks.active
        region = None
        if p is not None:
            region = p.region(self.name, "user", **self.metadata)
            caller = sys._getframe(1)
            region.frame = (caller, caller.f_lasti)  # the code that opens it
            t = p._peek_state()
            if t is not None and t.open:  # regions an interrupt left open (see is_abandoned)
                regions.close_abandoned_on(p, t, caller)
            try:
                region.__enter__()
            except BaseException:  # an interrupt as it opened: `with` will not call __exit__
                t = region.t
                if t is not None and t.open and t.open[-1] is region:  # no call in this block
                    t.depth = region.depth
                    del t.open[-1]
                    region.t = region.frame = None
                raise
        self._open.setdefault(threading.get_ident(), []).append(region)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        stack = self._open.get(threading.get_ident())
        region = stack.pop() if stack else None
        if region is not None:
            region.__exit__(exc_type, exc, tb)
        return False

    def __call__(self, fn):
        """Decorate ``fn``: each call is one region.

        A generator function or ``async def`` records one region per resumption: the stretches
        of code it runs between ``yield``/``await`` points, so time spent suspended (the
        consumer's work, other asyncio tasks, I/O waits) is not counted as its own, and events
        of tasks interleaved on one thread stay apart. Async generators are refused.
        """
        name, metadata = self.name, self.metadata
        if inspect.isasyncgenfunction(fn):
            raise EveryOProfilerError(
                f"@record_function({name!r}) cannot time an async generator "
                f"({getattr(fn, '__qualname__', fn)!r}): use `with record_function(...):` "
                "around the work inside it"
            )
        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                return (yield from _resumptions(fn(*args, **kwargs), name, metadata))

            return gen_wrapper
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def coro_wrapper(*args, **kwargs):
                return await _TimedAwaitable(fn(*args, **kwargs), name, metadata)

            return coro_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(name, **metadata):
                return fn(*args, **kwargs)

        return wrapper


def _resumptions(it, name: str, metadata: dict):
    """Drive generator (or coroutine iterator) ``it``, each resumption inside one region.

    Forwards ``send``, ``throw`` and ``close`` and returns ``it``'s return value, like
    ``yield from it`` does.
    """
    send, throw = it.send, it.throw
    value, exc = None, None
    while True:
        p = hooks.active
        region = p.region(name, "user", **metadata) if p is not None else None
        try:
            if region is not None:  # inside the try: an exit of a region not opened does nothing
                region.__enter__()
            item = send(value) if exc is None else throw(exc)
        except StopIteration as stop:
            return stop.value
        finally:
            if region is not None:
                region.__exit__(None, None, None)
        try:
            value, exc = (yield item), None
        except GeneratorExit:
            it.close()
            raise
        except BaseException as e:  # thrown into the wrapper: pass it on
            value, exc = None, e


class _TimedAwaitable:
    """Awaits a coroutine with one region per step (see ``record_function.__call__``)."""

    __slots__ = ("coro", "name", "metadata")

    def __init__(self, coro, name: str, metadata: dict):
        self.coro, self.name, self.metadata = coro, name, metadata

    def __await__(self):
        return (yield from _resumptions(self.coro.__await__(), self.name, self.metadata))
