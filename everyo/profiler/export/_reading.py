"""What the readers of every format share: interning, checks of values, nesting, the Run."""

from __future__ import annotations

import math

import numpy as np

from everyo.profiler.run import Run
from everyo.profiler.store import EventStore


class Malformed(Exception):
    """A file's content is not what its format says; ``read_run`` adds the path."""


def number(event: dict, field: str, where: str, *, default=None, minimum=None) -> float:
    """``event[field]`` as a finite number, or :class:`Malformed` naming the event and field."""
    value = event.get(field, default)
    if value is None:
        raise Malformed(f"{where} has no {field!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Malformed(f"{where} has {field}={value!r}: a number is expected")
    if minimum is not None and value < minimum:
        raise Malformed(f"{where} has {field}={value!r}: it cannot be below {minimum}")
    return value


class Builder:
    """Collects rows of a loaded file and interns keys, shapes and threads."""

    def __init__(self, threads=()):
        self.keys: dict[tuple, int] = {}
        self.shapes: dict[str, int] = {}
        self.threads = [(int(t), str(n)) for t, n in threads]
        self._index_of = {t: i for i, (t, _) in enumerate(self.threads)}  # thread id -> index

    def key(self, kind, name, path) -> int:
        return self.keys.setdefault((str(kind), str(name), str(path)), len(self.keys))

    def shape(self, text) -> int:
        return -1 if text is None else self.shapes.setdefault(str(text), len(self.shapes))

    def thread_index(self, ident, name: str | None = None) -> int:
        """The thread index (row of the thread table) of thread id ``ident``."""
        ident = int(ident)
        if ident not in self._index_of:
            self._index_of[ident] = len(self.threads)
            self.threads.append((ident, name or f"thread {ident}"))
        return self._index_of[ident]

    def store(self, cols: dict, metadata: dict) -> EventStore:
        return EventStore.from_columns(
            cols, list(self.keys), list(self.shapes), self.threads, metadata
        )


def nesting(tid: np.ndarray, start: np.ndarray, end: np.ndarray):
    """Depth and parent row of each interval, from containment on its thread."""
    n = len(start)
    order = np.lexsort((-np.arange(n), -(end - start), start, tid))
    depth = np.zeros(n, np.int16)
    parent = np.full(n, -1, np.int32)
    stack: list[int] = []
    last_tid = None
    for i in order.tolist():
        if tid[i] != last_tid:
            stack, last_tid = [], tid[i]
        while stack and not (start[stack[-1]] <= start[i] and end[i] <= end[stack[-1]]):
            stack.pop()
        if stack:
            parent[i], depth[i] = stack[-1], len(stack)
        stack.append(i)
    return depth, parent


def run_from(header: dict, store: EventStore, counters: dict) -> Run:
    """A finished :class:`Run` holding ``store``, with the fields a file's header gives.

    Without a header (files of other tools, the events format) the wall time is the span of
    the events and the status ``"completed"``.
    """
    run = Run(
        store,
        label=header.get("label"),
        options=header.get("options") or {},
        run_id=header.get("id"),
        start_time=header.get("start_time"),
        environment=header.get("environment") or {},
    )
    wall = header.get("wall_ns")
    if wall is None and len(store):
        cols = store.read(0)
        wall = int((cols["start_ns"] + cols["dur_ns"]).max() - min(0, cols["start_ns"].min()))
    run.finish(wall_ns=int(wall or 0))
    run.status = header.get("status", "completed")  # as recorded (a file may hold a failed run)
    run.error = header.get("error")
    run.skipped = int(header.get("skipped_events") or 0)
    run.memory = header.get("memory")
    run.machine = header.get("machine") if isinstance(header.get("machine"), dict) else None
    run.step_ns = [int(t) for t in header.get("step_ns") or []]
    run.processes = {int(t): (int(p), str(n)) for t, p, n in header.get("processes") or []}
    if header.get("process_id") is not None:
        run.process_id = int(header["process_id"])
    for name, (t, v) in counters.items():
        run.add_counter(name, t, v)
    return run
