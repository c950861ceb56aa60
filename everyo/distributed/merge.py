"""Merge the events of tasks profiled on several workers into one :class:`DistributedRun`.

Each task comes back as the columns of its own profiler run, timed from that run's start on its
worker's clock. The merge moves every task onto the client's clock (the worker's estimated
offset), gives each worker thread a lane of its own (named after the worker, and grouped in a
process per worker for Chrome traces), re-interns names and shapes, and builds the store the way
loading a file does (``EventStore.from_columns``, which restores the post-order that parents
are derived from). A failed task is marked on its task event; one whose worker died has no
events, so an event is made for it from the note its worker logged when it started.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import numpy as np

from everyo.distributed.clock import ClockOffset
from everyo.machine_state import MachineState, worst
from everyo.profiler.storage.run import Run
from everyo.profiler.storage.store import OPTIONAL_COLUMNS, EventStore

__all__ = ["DistributedRun", "TaskOutcome", "TaskRecord", "WorkerRecord", "merge_tasks"]


@dataclass
class TaskOutcome:
    """What the client learnt about one task.

    ``payload`` is what :func:`~everyo.distributed.task.run_profiled` returned (``None`` when
    no result came back); ``error`` the reason none did (the worker died, a timeout);
    ``worker`` the identity of the worker it was last on when known without a payload;
    ``observed_ns`` the client time at which the outcome was known; ``note`` the start note
    its worker logged, if one arrived.
    """

    index: int
    payload: dict | None = None
    error: str | None = None
    worker: dict | None = None
    observed_ns: int = 0
    note: dict | None = None


@dataclass
class TaskRecord:
    """One task of a merged run. Times in ns from the run's start, on the client's clock.

    ``status`` is ``"ok"`` or ``"failed"`` (``error`` says why: the task's exception, or the
    worker died, or it timed out). ``straggler`` marks a task slower than ``straggler_factor``
    times the median of the tasks that finished; ``slowdown`` is its duration over that median.
    ``row`` is the task's event in the run (``None`` when it has none). ``machine`` is what
    its worker's machine did while it ran (:meth:`MachineState.to_dict
    <everyo.machine_state.MachineState.to_dict>`; ``None`` when no result came back).
    """

    index: int
    worker: str | None
    status: str
    error: str | None = None
    start_ns: int | None = None
    dur_ns: int | None = None
    straggler: bool = False
    slowdown: float | None = None
    row: int | None = None
    machine: dict | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class WorkerRecord:
    """A worker that ran tasks: its lane's process number in Chrome traces, its clock offset
    (``None`` when it could not be estimated), its environment record, and whether it was lost
    during the run."""

    name: str
    process: int
    address: str | None = None
    host: str | None = None
    pid: int | None = None
    clock: ClockOffset | None = None
    environment: dict | None = None
    lost: bool = False

    def to_dict(self) -> dict:
        out = asdict(self)
        out["clock"] = None if self.clock is None else self.clock.to_dict()
        return out


class DistributedRun(Run):
    """A :class:`~everyo.profiler.storage.run.Run` merged from tasks on several workers.

    It opens in the dashboard and exports like any run; ``processes`` groups each worker's
    lanes into a process of its own in Chrome traces.

    Attributes
    ----------
    tasks : list of TaskRecord
        One per input, in input order.
    workers : dict
        Worker name -> :class:`WorkerRecord` (clock offset, environment, lost or not).
    straggler_factor : float
    median_task_ns : int or None
        Median duration of the tasks that finished.
    """

    def __init__(self, store, *, tasks, workers, straggler_factor, median_task_ns, **kwargs):
        super().__init__(store, **kwargs)
        self.tasks: list[TaskRecord] = tasks
        self.workers: dict[str, WorkerRecord] = workers
        self.straggler_factor = straggler_factor
        self.median_task_ns = median_task_ns

    @property
    def stragglers(self) -> list[TaskRecord]:
        return [t for t in self.tasks if t.straggler]

    @property
    def failed(self) -> list[TaskRecord]:
        return [t for t in self.tasks if not t.ok]

    @property
    def lost_workers(self) -> list[str]:
        return [w.name for w in self.workers.values() if w.lost]

    def export_chrome_trace(self, path) -> str:
        """Write a Chrome/Perfetto trace (one process per worker) atomically; return the path."""
        from everyo.profiler.export.chrome import export_chrome_trace

        return export_chrome_trace(self, path)

    def header(self) -> dict:
        header = super().header()
        header["distributed"] = {
            "straggler_factor": self.straggler_factor,
            "median_task_ns": self.median_task_ns,
            "tasks": [t.to_dict() for t in self.tasks],
            "workers": {name: w.to_dict() for name, w in self.workers.items()},
        }
        return header


def merge_tasks(
    outcomes: list[TaskOutcome],
    offsets: dict[str, ClockOffset],
    *,
    origin_ns: int,
    end_ns: int,
    task_name: str,
    label: str | None = None,
    straggler_factor: float = 2.0,
    workers: dict[str, dict] | None = None,
    lost: set[str] = frozenset(),
    environment: dict | None = None,
) -> DistributedRun:
    """Merge task outcomes into one run.

    Parameters
    ----------
    outcomes : list of TaskOutcome
        One per task, in input order.
    offsets : dict
        Worker address (or name, when a worker has no address) -> its clock offset.
    origin_ns, end_ns : int
        Client wall-clock ns when the tasks were submitted and when the last outcome was known.
    task_name : str
        The name of the region around each task (:func:`~everyo.distributed.task.task_name`).
    workers : dict, optional
        Address -> identity (``name``, ``host``, ``pid``) of workers known to the scheduler,
        for workers that appear only through a failure.
    lost : set of str
        Names of workers that left the cluster during the run.
    """
    idents = _identities(outcomes, workers or {})
    names = sorted({i["name"] for i in idents.values()}, key=_natural)
    # processes 2, 3...: process 1 of a Chrome trace is the run's own (its counters)
    records = {n: WorkerRecord(n, process=k + 2) for k, n in enumerate(names)}
    for address, ident in idents.items():
        rec = records[ident["name"]]
        rec.address, rec.host, rec.pid = ident.get("address"), ident.get("host"), ident.get("pid")
        rec.clock = offsets.get(address, rec.clock)
        rec.lost = rec.lost or ident["name"] in lost
    for o in outcomes:
        if o.payload is not None:
            records[o.payload["worker"]["name"]].environment = o.payload["environment"]

    merged = _Merged(task_name)
    tasks = [_place(o, merged, idents, offsets, origin_ns) for o in outcomes]
    median = _flag_stragglers(tasks, straggler_factor)
    store = merged.store()
    rows = {id(meta): row for row, meta in store.metadata.items()}
    for task, meta in zip(tasks, merged.task_meta):
        if meta is not None:
            meta.update(straggler=task.straggler, slowdown=task.slowdown)
            task.row = rows.get(id(meta))
    run = DistributedRun(
        store,
        tasks=tasks,
        workers=records,
        straggler_factor=straggler_factor,
        median_task_ns=median,
        label=label,
        options=merged.options,
        start_time=origin_ns / 1e9,
        environment=environment,
    )
    run.processes = merged.processes(records)
    run.machine = _least_trusted_machine(tasks)
    for name, (t, v) in merged.counters.items():
        run.add_counter(name, t, v)
    failed = [t for t in tasks if not t.ok]
    run.finish(
        None if not failed else _failure_summary(failed, len(tasks)),
        wall_ns=max(int(end_ns - origin_ns), merged.last_end),
    )
    return run


def _identities(outcomes, known: dict) -> dict[str, dict]:
    """Worker identity per address (or per name for workers without one)."""
    out = {a: {**i, "address": a} for a, i in known.items()}
    for o in outcomes:
        for ident in (o.payload and o.payload["worker"], o.worker):
            if ident:
                out.setdefault(ident.get("address") or ident["name"], ident)
        if o.note and o.note.get("address") and o.note["address"] not in out:
            out[o.note["address"]] = {"name": o.note["worker"], "address": o.note["address"]}
    return out


def _natural(name: str):
    return (0, int(name), "") if name.isdigit() else (1, 0, name)


def _offset(offsets, ident: dict) -> ClockOffset:
    found = offsets.get(ident.get("address") or ident["name"])
    return found if found is not None else ClockOffset(0, 0, 0)


def _place(o: TaskOutcome, merged: _Merged, idents, offsets, origin_ns) -> TaskRecord:
    """Add one task's events (or the event of its failure) to ``merged``; its record."""
    if o.payload is not None:
        ident = o.payload["worker"]
        shift = _offset(offsets, ident).to_client(round(o.payload["start_time"] * 1e9)) - origin_ns
        start, dur, meta = merged.add_task(o.payload, ident["name"], shift)
        error = o.payload["error"]
        meta.update(worker=ident["name"], status="failed" if error else "ok")
        if error:
            meta["error"] = error
        merged.task_meta.append(meta)
        status = "failed" if error else "ok"
        record = TaskRecord(o.index, ident["name"], status, error, start, dur)
        record.machine = o.payload.get("machine")  # (payloads of older workers have none)
        return record
    ident = o.worker or (idents.get(o.note["address"]) if o.note else None)
    name = ident["name"] if ident else (o.note or {}).get("worker")
    record = TaskRecord(o.index, name, "failed", o.error)
    if o.note is None or name is None:
        merged.task_meta.append(None)
        return record
    start = _offset(offsets, ident or {"name": name}).to_client(o.note["t_ns"]) - origin_ns
    end = o.observed_ns - origin_ns
    meta = {"task": o.index, "worker": name, "status": "failed", "error": o.error}
    merged.add_event(name, o.note["thread"], o.note["thread_name"], start, end - start, meta)
    merged.task_meta.append(meta)
    record.start_ns, record.dur_ns = start, max(end - start, 0)
    return record


def _least_trusted_machine(tasks: list[TaskRecord]) -> dict | None:
    """The run's machine state: the least trustworthy of its tasks' (each measured on its own
    worker), its reason naming the worker and task, and how many tasks were not quiet."""
    states = [(t, MachineState.from_dict(t.machine)) for t in tasks]
    states = [(t, s) for t, s in states if s is not None]
    chosen = worst(s for _, s in states)
    if chosen is None:
        return None
    task = next(t for t, s in states if s is chosen)
    unquiet = sum(s.verdict != "quiet" for _, s in states)
    reason = f"task {task.index} on worker {task.worker}: {chosen.reason}"
    if unquiet > 1:
        reason += f" ({unquiet} of {len(states)} tasks ran on a machine that was not quiet)"
    extra = {**chosen.extra, "worker": task.worker, "task": task.index, "not_quiet": unquiet}
    return replace(chosen, reason=reason, extra=extra).to_dict()


def _flag_stragglers(tasks: list[TaskRecord], factor: float) -> int | None:
    done = [t for t in tasks if t.ok and t.dur_ns is not None]
    if not done:
        return None
    median = int(np.median([t.dur_ns for t in done]))
    for t in done:
        t.slowdown = t.dur_ns / median if median > 0 else None
        t.straggler = bool(median > 0 and t.dur_ns > factor * median)
    return median


def _failure_summary(failed: list[TaskRecord], total: int) -> str:
    first = failed[0]
    return f"{len(failed)} of {total} tasks failed; task {first.index}: {first.error}"


@dataclass
class _Merged:
    """Columns, name tables and lanes of the merged run, filled task by task."""

    task_name: str
    parts: list[dict] = field(default_factory=list)
    keys: dict[tuple, int] = field(default_factory=dict)
    shapes: dict[str, int] = field(default_factory=dict)
    lanes: dict[tuple, int] = field(default_factory=dict)  # (worker, thread id) -> lane index
    threads: list[tuple[int, str]] = field(default_factory=list)
    lane_worker: list[str] = field(default_factory=list)
    metadata: dict[int, dict] = field(default_factory=dict)
    counters: dict[str, tuple] = field(default_factory=dict)
    task_meta: list = field(default_factory=list)
    options: dict = field(default_factory=dict)
    n: int = 0
    last_end: int = 0

    def lane(self, worker: str, thread: int, thread_name: str) -> int:
        key = (worker, int(thread))
        if key not in self.lanes:
            self.lanes[key] = len(self.threads)
            # lane ids are new numbers: thread ids of different processes may coincide
            self.threads.append((len(self.threads) + 1, f"worker {worker} · {thread_name}"))
            self.lane_worker.append(worker)
        return self.lanes[key]

    def add_task(self, payload: dict, worker: str, shift: int) -> tuple[int, int, dict]:
        """Append a task's rows; return its task event's start, duration and metadata dict."""
        cols = payload["columns"]
        n = len(cols["start_ns"])
        keymap = np.array([self._key(k) for k in payload["keys"]] or [0], np.int32)
        shapemap = np.array([self._shape(s) for s in payload["shapes"]] + [-1], np.int32)
        lanes = np.array([self.lane(worker, t, nm) for t, nm in payload["threads"]] or [0])
        part = {name: np.asarray(col) for name, col in cols.items()}
        part["start_ns"] = part["start_ns"] + shift
        part["key"] = keymap[part["key"]] if n else part["key"]
        part["thread"] = lanes[part["thread"]].astype(np.int16) if n else part["thread"]
        if "shape" in part and n:
            part["shape"] = shapemap[part["shape"]]  # -1 (no shapes) picks the appended -1
        root = self._root(payload, part)
        meta = dict(payload["metadata"].get(root, {"task": payload["index"]})) if root >= 0 else {}
        for row, m in payload["metadata"].items():
            self.metadata[self.n + row] = m if row != root else meta
        if root < 0:  # the task region was not recorded (warmup, schedule): time the whole run
            start, dur = shift, int(payload["wall_ns"])
        else:
            start, dur = int(part["start_ns"][root]), int(part["dur_ns"][root])
            self.metadata[self.n + root] = meta
        self._append(part, n)
        for name, (t, v) in payload["counters"].items():
            self._counter(f"{name} · worker {worker}", np.asarray(t) + shift, np.asarray(v))
        self.options = self.options or dict(payload["options"])
        return start, dur, meta

    def add_event(self, worker, thread, thread_name, start, dur, meta) -> None:
        """One event made on the client (a task whose worker died): depth 0 on its lane."""
        part = {
            "start_ns": np.array([start], np.int64),
            "dur_ns": np.array([max(dur, 0)], np.int64),
            "key": np.array([self._key(("user", self.task_name, ""))], np.int32),
            "thread": np.array([self.lane(worker, thread, thread_name)], np.int16),
            "depth": np.array([0], np.int16),
        }
        self.metadata[self.n] = meta
        self._append(part, 1)

    def _root(self, payload: dict, part: dict) -> int:
        """Row of the task region: the user event named for the task at depth 0 on the
        task's thread (-1 when it was not recorded)."""
        key = self.keys.get(("user", self.task_name, ""))
        lane = self.lanes.get((payload["worker"]["name"], int(payload["thread"])))
        if key is None or lane is None or not len(part["key"]):
            return -1
        hit = np.nonzero((part["key"] == key) & (part["depth"] == 0) & (part["thread"] == lane))[0]
        return int(hit[-1]) if len(hit) else -1

    def _append(self, part: dict, n: int) -> None:
        self.parts.append(part)
        self.n += n
        if n:
            self.last_end = max(self.last_end, int((part["start_ns"] + part["dur_ns"]).max()))

    def _key(self, k) -> int:
        return self.keys.setdefault(tuple(k), len(self.keys))

    def _shape(self, text: str) -> int:
        return self.shapes.setdefault(text, len(self.shapes))

    def _counter(self, name: str, t: np.ndarray, v: np.ndarray) -> None:
        old = self.counters.get(name)
        if old is not None:
            t, v = np.concatenate([old[0], t]), np.concatenate([old[1], v])
            order = np.argsort(t, kind="stable")
            t, v = t[order], v[order]
        self.counters[name] = (t, v)

    def store(self) -> EventStore:
        optional = [c for c in OPTIONAL_COLUMNS if any(c in p for p in self.parts)]
        names = ["start_ns", "dur_ns", "key", "thread", "depth", *optional]
        dtypes = {"start_ns": np.int64, "dur_ns": np.int64, "key": np.int32}
        dtypes.update({"thread": np.int16, "depth": np.int16, **OPTIONAL_COLUMNS})
        cols = {}
        for name in names:
            pieces = [
                p[name] if name in p else np.full(len(p["start_ns"]), -1, dtypes[name])
                for p in self.parts
            ]
            cols[name] = np.concatenate(pieces).astype(dtypes[name]) if pieces else np.empty(0)
        return EventStore.from_columns(
            cols, list(self.keys), list(self.shapes), self.lane_names(), self.metadata
        )

    def lane_names(self) -> list[tuple[int, str]]:
        """The lanes, named ``"worker 0"`` where the worker ran everything on one thread (the
        usual case), ``"worker 0 · <thread name>"`` where it used several."""
        count: dict[str, int] = {}
        for worker in self.lane_worker:
            count[worker] = count.get(worker, 0) + 1
        return [
            (lane, name if count[worker] > 1 else f"worker {worker}")
            for (lane, name), worker in zip(self.threads, self.lane_worker)
        ]

    def processes(self, records: dict[str, WorkerRecord]) -> dict[int, tuple[int, str]]:
        """Lane id -> (process number, process name): one process per worker."""
        out = {}
        for (lane_id, _), worker in zip(self.threads, self.lane_worker):
            rec = records[worker]
            where = f" ({rec.address})" if rec.address else ""
            out[lane_id] = (rec.process, f"worker {worker}{where}")
        return out
