"""Read raw-JSON and Chrome-trace exports back into a :class:`Run` (``everyo.profiler.load``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from everyo.errors import EveryOExportError
from everyo.profiler.run import Run
from everyo.profiler.store import EventStore


def _read_json(path) -> dict:
    p = Path(path)
    if not p.is_file():
        raise EveryOExportError(f"cannot read {p}: no such file")
    with open(p, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    try:
        with opener(p, "rt", encoding="utf-8") as f:
            return json.load(f)
    except (ValueError, OSError, EOFError) as exc:
        raise EveryOExportError(f"cannot read {p}: not a valid JSON trace ({exc})") from exc


class _Builder:
    """Collects rows of a loaded file and interns keys, shapes and threads."""

    def __init__(self, threads):
        self.keys: dict[tuple, int] = {}
        self.shapes: dict[str, int] = {}
        self.threads = [(int(t), str(n)) for t, n in threads]
        self.tid_index = {t: i for i, (t, _) in enumerate(self.threads)}

    def key(self, kind, name, path) -> int:
        return self.keys.setdefault((kind, name, path), len(self.keys))

    def shape(self, text) -> int:
        return -1 if text is None else self.shapes.setdefault(text, len(self.shapes))

    def tid(self, ident) -> int:
        ident = int(ident)
        if ident not in self.tid_index:
            self.tid_index[ident] = len(self.threads)
            self.threads.append((ident, f"thread {ident}"))
        return self.tid_index[ident]

    def store(self, cols: dict, metadata: dict) -> EventStore:
        return EventStore.from_columns(
            cols, list(self.keys), list(self.shapes), self.threads, metadata
        )


def _run_from(header: dict, store: EventStore, counters: dict) -> Run:
    run = Run(
        store,
        label=header.get("label"),
        options=header.get("options") or {},
        run_id=header.get("id"),
        start_time=header.get("start_time"),
        environment=header.get("environment") or {},
    )
    run.status = header.get("status", "completed")
    run.error = header.get("error")
    run._wall_ns = int(header.get("wall_ns") or 0)
    run.skipped = int(header.get("skipped_events") or 0)
    run.memory = header.get("memory")
    run.step_ns = [int(t) for t in header.get("step_ns") or []]
    for name, (t, v) in counters.items():
        run.add_counter(name, t, v)
    return run


def _from_raw(data: dict) -> Run:
    ev = data.get("events", [])
    b = _Builder(data.get("threads", []))
    n = len(ev)
    cols = {
        "start_ns": np.array([e["start_ns"] for e in ev], np.int64),
        "dur_ns": np.array([e["dur_ns"] for e in ev], np.int64),
        "key": np.array([b.key(e["kind"], e["name"], e.get("path", "")) for e in ev], np.int32),
        "tid": np.array([b.tid(e.get("tid", 0)) for e in ev], np.int16),
        "depth": np.array([e.get("depth", 0) for e in ev], np.int16),
    }
    if n and "shapes" in ev[0]:
        cols["shape"] = np.array([b.shape(e.get("shapes")) for e in ev], np.int32)
    for name in ("flops", "bytes", "mem_bytes", "device_ns"):
        if n and name in ev[0]:
            cols[name] = np.array([e.get(name, -1) for e in ev], np.int64)
    meta = {i: e["metadata"] for i, e in enumerate(ev) if e.get("metadata")}
    counters = {k: (c["t_ns"], c["values"]) for k, c in (data.get("counters") or {}).items()}
    return _run_from(data.get("run", {}), b.store(cols, meta), counters)


def _nesting(tid: np.ndarray, start: np.ndarray, end: np.ndarray):
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


def _from_chrome(data: dict) -> Run:
    events = data.get("traceEvents", [])
    names = {
        e["tid"]: e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    b = _Builder(names.items())
    xs = [e for e in events if e.get("ph") == "X"]
    args = [e.get("args") or {} for e in xs]
    cols = {
        "start_ns": np.array([round(e["ts"] * 1000) for e in xs], np.int64),
        "dur_ns": np.array([round(e.get("dur", 0) * 1000) for e in xs], np.int64),
        "key": np.array(
            [b.key(e.get("cat", "user"), e["name"], a.get("path", "")) for e, a in zip(xs, args)],
            np.int32,
        ),
        "tid": np.array([b.tid(e.get("tid", 0)) for e in xs], np.int16),
    }
    tids = cols["tid"].astype(np.int64)
    cols["depth"], _ = _nesting(tids, cols["start_ns"], cols["start_ns"] + cols["dur_ns"])
    if any("shapes" in a for a in args):
        cols["shape"] = np.array([b.shape(a.get("shapes")) for a in args], np.int32)
    for name, src, scale in (
        ("flops", "flops", 1),
        ("bytes", "bytes", 1),
        ("mem_bytes", "mem_bytes", 1),
        ("device_ns", "device_us", 1e3),
    ):
        if any(src in a for a in args):  # null (unknown) and missing read as -1
            cols[name] = np.array(
                [-1 if a.get(src) is None else round(a[src] * scale) for a in args], np.int64
            )
    # file order is not row order: the store puts rows back in post-order (from_columns)
    meta = {i: a["metadata"] for i, a in enumerate(args) if a.get("metadata")}
    counters: dict[str, tuple[list, list]] = {}
    for e in events:
        if e.get("ph") == "C":
            t, v = counters.setdefault(e["name"], ([], []))
            t.append(round(e["ts"] * 1000))
            v.append(next(iter(e.get("args", {0: 0}).values())))
    header = (data.get("otherData") or {}).get("everyo_run") or {"label": "chrome trace"}
    return _run_from(header, b.store(cols, meta), counters)


def read_run(path) -> Run:
    data = _read_json(path)
    if isinstance(data, dict) and data.get("format") == "everyo.raw":
        return _from_raw(data)
    if isinstance(data, dict) and "traceEvents" in data:
        return _from_chrome(data)
    if isinstance(data, list):  # the JSON-array flavour of the Chrome format
        return _from_chrome({"traceEvents": data})
    raise EveryOExportError(f"cannot read {path}: neither an everyo raw export nor a Chrome trace")
