"""``Run`` (one profiling session and its events) and ``RunRegistry`` (the in-kernel store).

``everyo.profiler.runs`` is the kernel-wide registry: every profiler adds its run there, the
dashboard lists and reads them, and a memory budget evicts the oldest finished runs.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
import warnings

import numpy as np

from everyo import _compiled
from everyo.errors import EveryOProfilerWarning
from everyo.machine_state import MachineState, MachineWatch, worst
from everyo.profiler.storage.batch import EventBatch
from everyo.profiler.storage.store import EventStore

LOOPS = _compiled.load("everyo.profiler.storage._cbatch")  # the compiled batch loops, or None
DEFAULT_BUDGET_BYTES = 1 << 30
_ids = itertools.count(1)


def _environment() -> dict:
    try:
        from everyo.environment_record import environment

        return environment()
    except Exception:  # a descriptive field must never break a run
        import platform

        return {"python": {"version": platform.python_version()}, "numpy": np.__version__}


def postorder_parents(thread: np.ndarray, depth: np.ndarray, first_row: int = 0) -> np.ndarray:
    """Parent row of each row: the next row of the same thread one level up (-1: none yet).

    ``thread`` is each row's thread index (any per-thread label works).

    Rows of one thread finish in post-order, so after an event the next one to finish at a
    shallower depth is its parent. Vectorised per thread and depth level: the number of rows
    one level up before a row (a running count) indexes its parent among them, in O(rows) per
    level (the live dashboard runs this on every batch it reads). The compiled loop, where it was
    built, does it in one pass from the end without the GIL.
    """
    n = len(depth)
    if LOOPS is not None and n:
        parent = np.empty(n, np.int64)
        try:
            LOOPS.postorder_parents(
                np.ascontiguousarray(thread), np.ascontiguousarray(depth), int(first_row), parent
            )
            return parent
        except (TypeError, ValueError):  # labels it does not take (thread ids, say): NumPy's
            pass
    return _postorder_parents_numpy(thread, depth, first_row)


def _postorder_parents_numpy(thread, depth, first_row: int = 0) -> np.ndarray:
    """:func:`postorder_parents` in NumPy (the specification of the compiled loop)."""
    n = len(depth)
    parent = np.full(n, -1, np.int64)
    if n == 0:
        return parent
    if thread[0] == thread[-1] and (thread == thread[0]).all():  # the usual batch: one thread
        groups: list = [None]
    else:  # each thread's rows, in order: one stable sort (not one scan per thread)
        order = np.argsort(thread, kind="stable")
        cuts = np.flatnonzero(np.diff(np.asarray(thread)[order])) + 1
        groups = np.split(order, cuts)
    for idx in groups:
        d = depth if idx is None else depth[idx]
        for level in range(1, int(d.max()) + 1):
            kids = np.flatnonzero(d == level)
            if not len(kids):
                continue
            is_up = d == level - 1
            ups = np.flatnonzero(is_up)
            pos = np.cumsum(is_up)[kids]  # rows one level up before each kid: its parent is next
            ok = pos < len(ups)
            rows, kids = ups[pos[ok]], kids[ok]
            if idx is not None:
                rows, kids = idx[rows], idx[kids]
            parent[kids] = rows + first_row
    return parent


class Run:
    """One profiling session: header fields plus an :class:`EventStore`.

    Attributes
    ----------
    id, label : str
    start_time : float
        Unix time when the run started.
    options : dict
        The profiler options it was recorded with.
    status : str
        ``"running"``, ``"completed"`` or ``"failed"``.
    error : str or None
        ``"KeyboardInterrupt"`` or ``"ValueError: ..."`` for a failed run.
    step_ns : list of int
        When each ``profiler.step()`` was called, in ns from the run's start (the origin of the
        events' ``start_ns``); empty when the code marked no steps.
    processes : dict
        Thread id -> ``(process number, process name)`` for runs whose threads ran in several
        processes (``everyo.distributed.profile_tasks``: one process per worker); empty for
        a run recorded in one process.
    """

    def __init__(
        self,
        store: EventStore,
        *,
        label: str | None = None,
        options: dict | None = None,
        clock=time.perf_counter_ns,
        run_id: str | None = None,
        start_time: float | None = None,
        environment: dict | None = None,
    ):
        n = next(_ids)
        self.id = run_id or f"run-{n}-{os.getpid():x}{int(time.time() * 1000) & 0xFFFF:04x}"
        # any label becomes text: views, widgets and file names all take strings
        self.label = str(label) if label is not None else f"run {n}"
        self.start_time = time.time() if start_time is None else start_time
        self.options = dict(options or {})
        self.status = "running"
        self.error: str | None = None
        self.store = store
        self.counters: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.skipped = 0  # events dropped by warmup
        self.memory: dict | None = None  # peaks, with profile_memory
        self.step_ns: list[int] = []
        self.samples = None  # a SampleStore when the profiler sampled stacks (sample=)
        # what the machine did while the run recorded (MachineState.to_dict(); a loaded run:
        # the file's); a live run watches from its start to its finish
        self.machine: dict | None = None
        self._watch = MachineWatch().start() if start_time is None else None
        # thread id -> (process number, process name) when the threads came from several
        # processes (a run merged from workers); Chrome traces show one process per number
        self.processes: dict[int, tuple[int, str]] = {}
        self.process_id = os.getpid()  # the recording process (a loaded run: the file's)
        self._environment = environment
        self._clock = clock
        self._t0 = clock()
        self._wall_ns: int | None = None

    # -- header ------------------------------------------------------------------------------
    @property
    def environment(self) -> dict:
        if self._environment is None:
            self._environment = _environment()
        return self._environment

    @property
    def wall_ns(self) -> int:
        """Duration so far while running, the final duration once finished."""
        if self._wall_ns is not None:
            return self._wall_ns
        return int(self._clock() - self._t0)

    @property
    def t0_ns(self) -> int:
        """The origin of the events' ``start_ns``, on the recording clock."""
        return self._t0

    def restart_clock(self) -> None:
        """Count the run's time from now (the magic calls it at a cell's first statement, so
        that its own set-up is not in the wall time). Only meaningful before events are
        recorded: their times are taken relative to this origin."""
        if self._wall_ns is None:
            self._t0 = self._clock()

    def finish(
        self, error: BaseException | str | None = None, *, wall_ns: int | None = None
    ) -> None:
        """Freeze the duration and set the status (``failed`` when ``error`` is given).

        ``wall_ns`` gives the duration instead of reading the clock (a run built from a file,
        or merged from several processes).
        """
        if self._watch is not None and self._wall_ns is None and wall_ns is None:  # live only
            state = worst([MachineState.from_dict(self.machine), self._watch.stop()])
            self.machine = state.to_dict()
        self._wall_ns = int(self._clock() - self._t0) if wall_ns is None else int(wall_ns)
        if error is None:
            self.status = "completed"
            return
        self.status = "failed"
        if isinstance(error, str):
            self.error = error
        elif isinstance(error, KeyboardInterrupt) or not str(error):
            self.error = type(error).__name__
        else:
            self.error = f"{type(error).__name__}: {error}"

    def watch_threads(self, policy, applied: int | None) -> None:
        """Record the ``threads=`` policy the front end applied around the recording (the
        magic's and the CLI's ``--threads``), so that the machine's state names it."""
        if self._watch is not None:
            self._watch.threads_policy, self._watch.threads_applied = policy, applied

    @property
    def machine_state(self) -> MachineState | None:
        """The machine's state while the run recorded: so far while it runs, the least
        trustworthy of its sessions once finished (``None`` for a file without one)."""
        final = MachineState.from_dict(self.machine)
        if self._watch is None or self._wall_ns is not None:
            return final
        return worst([final, self._watch.peek()])

    def resume(self) -> None:
        """Running again after ``finish`` (a profiler started again adds to its run)."""
        self._watch = MachineWatch().start()
        self._wall_ns = None
        self.status = "running"
        self.error = None

    def header(self) -> dict:
        """The run's fields as a JSON-ready dict (what exports store)."""
        return {
            "id": self.id,
            "label": self.label,
            "start_time": self.start_time,
            "options": self.options,
            "status": self.status,
            "error": self.error,
            "wall_ns": self.wall_ns,
            "num_events": self.num_events,
            "skipped_events": self.skipped,
            "memory": self.memory,
            "step_ns": list(self.step_ns),
            "processes": [[t, p, name] for t, (p, name) in self.processes.items()],
            "process_id": self.process_id,
            "environment": self.environment,
            "machine": None if (state := self.machine_state) is None else state.to_dict(),
        }

    # -- events ------------------------------------------------------------------------------
    @property
    def num_events(self) -> int:
        return len(self.store)

    @property
    def nbytes(self) -> int:
        counter_bytes = sum(t.nbytes + v.nbytes for t, v in self.counters.values())
        sample_bytes = self.samples.nbytes if self.samples is not None else 0
        return self.store.nbytes + counter_bytes + sample_bytes

    def events_since(self, cursor: int = 0) -> tuple[EventBatch, int]:
        """Rows recorded since ``cursor`` and the cursor to pass next time.

        Never blocks writers for longer than a pointer copy. A parent always finishes after its
        children, so it lies in this batch or a later one: parents not finished at read time
        show as -1; ``snapshot()`` after the run ends is exact.
        """
        cols = self.store.read(cursor)
        first = min(cursor, len(self.store))
        n = first + len(cols["start_ns"])
        return self._batch(cols, first, n), n

    def rows(self, start: int, stop: int | None = None) -> EventBatch:
        """Rows ``[start, stop)`` as an :class:`EventBatch` (exporters read a run in chunks).

        Parents outside the rows read show as -1, as in :meth:`events_since`.
        """
        cols = self.store.read(start, stop)
        first = min(start, len(self.store))
        return self._batch(cols, first, first + len(cols["start_ns"]))

    def snapshot(self) -> EventBatch:
        """Every row recorded so far."""
        batch, _ = self.events_since(0)
        return batch

    def _batch(self, cols: dict, first: int, n: int) -> EventBatch:
        parent = postorder_parents(cols["thread"], cols["depth"], first)
        s = self.store
        return EventBatch(
            cols,
            list(s.keys),
            list(s.shapes),
            list(s.threads),
            s.metadata,
            first,
            parent,
            process_id=self.process_id,
        )

    def add_counter(self, name: str, t_ns: np.ndarray, values: np.ndarray) -> None:
        """Attach a counter track (memory over time) shown as ``ph:"C"`` in Chrome traces."""
        self.counters[name] = (np.asarray(t_ns, np.int64), np.asarray(values, np.int64))

    def summary(self, **kwargs):
        """Same as :func:`everyo.profiler.analysis.run_analysis.summarize` on this run."""
        from everyo.profiler.analysis.run_analysis import summarize

        return summarize(self, **kwargs)

    def __repr__(self) -> str:
        return f"<Run {self.id} label={self.label!r} status={self.status} events={self.num_events}>"


class RunRegistry:
    """The in-kernel list of runs, oldest first, bounded by ``budget_bytes``."""

    def __init__(self, budget_bytes: int = DEFAULT_BUDGET_BYTES):
        self._runs: list[Run] = []
        self._subscribers: list = []
        self._removal_subscribers: list = []
        self._lock = threading.RLock()
        self.budget_bytes = budget_bytes

    def __iter__(self):
        with self._lock:
            return iter(list(self._runs))

    def __len__(self) -> int:
        return len(self._runs)

    def __contains__(self, item) -> bool:
        """``run in runs`` (that very run is held) or ``"run-3-..." in runs`` (an id or label)."""
        if isinstance(item, Run):
            with self._lock:
                return any(r is item for r in self._runs)
        try:
            self[item]
        except (KeyError, IndexError):
            return False
        return True

    def __getitem__(self, key) -> Run:
        with self._lock:
            if isinstance(key, int):
                return self._runs[key]
            for run in reversed(self._runs):
                if run.id == key:
                    return run
            for run in reversed(self._runs):
                if run.label == key:
                    return run
            known = ", ".join(f"{r.id} ({r.label!r})" for r in self._runs) or "none"
        raise KeyError(f"no run with id or label {key!r}; runs held: {known}")

    @property
    def latest(self) -> Run | None:
        with self._lock:
            return self._runs[-1] if self._runs else None

    def add(self, run: Run) -> Run:
        """Register ``run``, tell subscribers, then enforce the memory budget."""
        with self._lock:
            self._runs.append(run)
            subscribers = list(self._subscribers)
        _notify(subscribers, run, "new run")
        self.enforce_budget()
        return run

    def remove(self, run: Run) -> None:
        """Let ``run`` go (a run not held is ignored); whatever shows it lets it go too."""
        with self._lock:
            gone = [r for r in self._runs if r is run]
            self._runs = [r for r in self._runs if r is not run]
        self._let_go(gone, "removed")

    def clear(self) -> None:
        """Let every run go; whatever shows one lets it go too."""
        with self._lock:
            gone, self._runs = self._runs, []
        self._let_go(gone, "removed")

    @property
    def nbytes(self) -> int:
        return sum(r.nbytes for r in self._runs)

    def enforce_budget(self) -> list[Run]:
        """Evict the oldest finished runs until the total is within budget; return them.

        Running runs and the newest run are never evicted.
        """
        evicted = []
        with self._lock:
            while self.nbytes > self.budget_bytes:
                victim = next((r for r in self._runs[:-1] if r.status != "running"), None)
                if victim is None:
                    break
                self._runs.remove(victim)
                evicted.append(victim)
        for run in evicted:
            warnings.warn(
                f"everyo profiler: evicted run {run.id} ({run.label!r}, {run.nbytes:,} bytes) "
                f"to stay within runs.budget_bytes={self.budget_bytes:,}; raise the budget "
                "(everyo.profiler.runs.budget_bytes = ...) or export runs you want to keep",
                EveryOProfilerWarning,
                stacklevel=3,
            )
        self._let_go(evicted, "evicted")
        return evicted

    def _let_go(self, gone: list, reason: str) -> None:
        """Tell the removal subscribers about each run that left the registry: the one path of
        every removal (``remove``, ``clear``, the budget's evictions)."""
        if not gone:
            return
        with self._lock:
            listeners = list(self._removal_subscribers)
        for run in gone:
            _notify(listeners, run, f"{reason} run", reason)

    def subscribe(self, callback):
        """Call ``callback(run)`` for each new run; returns a function that unsubscribes."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe():
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def subscribe_removals(self, callback):
        """Call ``callback(run, reason)`` for each run that leaves the registry, so that
        whatever shows it (a dashboard, a run picker) lets it go: ``reason`` is ``"evicted"``
        (the memory budget) or ``"removed"`` (``remove()``, ``clear()``). Returns a function
        that unsubscribes.

        The registry holds ``callback``: pass one that holds its owner weakly, or the owner
        lives as long as the registry.
        """
        with self._lock:
            self._removal_subscribers.append(callback)

        def unsubscribe():
            with self._lock:
                if callback in self._removal_subscribers:
                    self._removal_subscribers.remove(callback)

        return unsubscribe

    def __repr__(self) -> str:
        return f"<RunRegistry runs={len(self)} nbytes={self.nbytes:,} budget={self.budget_bytes:,}>"


def _notify(callbacks, run: Run, what: str, *extra) -> None:
    """Call each ``callback(run, *extra)``; one that raises is reported as a warning and the rest
    still run: the run is already registered (or gone), and a listener's fault must not undo it."""
    for callback in callbacks:
        try:
            callback(run, *extra)
        except Exception as exc:  # noqa: BLE001 - any listener's fault, reported below
            warnings.warn(
                f"everyo profiler: a listener of the run registry failed on the {what} "
                f"{run.id} ({type(exc).__name__}: {exc}); the run registry is unchanged",
                EveryOProfilerWarning,
                stacklevel=3,
            )


runs = RunRegistry()
