"""Read Chrome trace JSON, everyo's own or another tool's (torch.profiler, Perfetto, Chrome).

What becomes an event:

- complete events (``"ph": "X"``);
- ``"B"``/``"E"`` pairs, matched per process and thread as a stack (an ``"E"`` closes the
  latest open ``"B"`` of its thread; the args of both are merged); a ``"B"`` never closed ends
  where the trace ends, an ``"E"`` with no open ``"B"`` is skipped;
- instant events (``"i"``, ``"I"``) as zero-length events.

Metadata events (``"M"``) name processes and threads, counters (``"C"``) become counter tracks;
flow, async and other phases are not timed regions and are left out. Threads are told apart by
``(pid, tid)``, and either may be a string (torch.profiler writes ``"tid": "stream 7"``); a trace
from several processes names each thread after its process too. A trace not written by everyo
is shifted so that its first event starts at 0, and its events' ``args`` become their metadata.
"""

from __future__ import annotations

import numpy as np

from everyo.profiler.export._reading import (
    Builder,
    Malformed,
    int64_column,
    nesting,
    number,
    run_from,
)

# args keys everyo writes itself (the rest of an everyo event's args is its "metadata")
_NUMERIC = (
    ("flops", "flops", 1),
    ("bytes", "bytes", 1),
    ("mem_bytes", "mem_bytes", 1),
    ("device_ns", "device_us", 1e3),
)


class _Threads:
    """``(pid, tid)`` pairs as thread ids of the store, with names from ``"M"`` events."""

    def __init__(self, events: list, meta_idx: list[int]):
        self.process_names, self.thread_names = {}, {}
        for i in meta_idx:
            e = events[i]
            if isinstance(e.get("args"), dict):
                name = e["args"].get("name")
                where = (_hashable(e.get("pid")), _hashable(e.get("tid")))
                if e.get("name") == "process_name":
                    self.process_names[where[0]] = str(name)
                elif e.get("name") == "thread_name":
                    self.thread_names[where] = str(name)
        self.idents: dict[tuple, int] = {}
        self.pids: set = set()

    def idents_of(self, evs: list[dict]) -> list[int]:
        """The thread id of each event: one lookup per distinct raw ``(pid, tid)``."""
        raws = [(e.get("pid"), e.get("tid")) for e in evs]
        try:
            memo = {raw: None for raw in raws}
        except TypeError:  # a list or dict as pid/tid: the slow way
            return [self._ident((_hashable(p), _hashable(t))) for p, t in raws]
        for raw in memo:
            memo[raw] = self._ident((_hashable(raw[0]), _hashable(raw[1])))
        return [memo[raw] for raw in raws]

    def _ident(self, where: tuple) -> int:
        if where not in self.idents:
            tid = where[1]
            taken = set(self.idents.values())
            if isinstance(tid, int) and not isinstance(tid, bool) and tid not in taken:
                self.idents[where] = tid
            else:  # a string tid, or the same number in another process: a new number
                self.idents[where] = max(taken | {0}) + 1
            self.pids.add(where[0])
        return self.idents[where]

    def named(self, prefix: bool) -> list[tuple[int, str]]:
        several = prefix and len(self.pids) > 1
        out = []
        for (pid, tid), ident in self.idents.items():
            name = self.thread_names.get((pid, tid)) or _label("thread", tid)
            if several:
                process = self.process_names.get(pid) or _label("process", pid)
                name = ": ".join(x for x in (process, name) if x)
            out.append((ident, name or "trace"))
        return out


def _label(what: str, ident) -> str:
    """``"thread 7"`` for a number, the text itself for a string id (``"stream 7"``)."""
    if ident is None or ident == "":
        return ""
    return f"{what} {ident}" if isinstance(ident, (int, float)) else str(ident)


def _hashable(value):
    return value if isinstance(value, (int, float, str, type(None))) else str(value)


def _where(events: list, i: int) -> str:
    e = events[i]
    return f"traceEvents[{i}] (ph {e.get('ph')!r}, name {str(e.get('name', ''))[:60]!r})"


def _by_phase(events: list) -> dict[str, list[int]]:
    """Indices of the events of each phase; a non-object is :class:`Malformed`."""
    try:
        phs = [e.get("ph") for e in events]
    except AttributeError:
        i, e = next((i, e) for i, e in enumerate(events) if type(e) is not dict)
        raise Malformed(f"traceEvents[{i}] is {str(e)[:40]!r}, not an event object") from None
    phs = np.array([p if type(p) is str else "" for p in phs], dtype=object)
    return {
        ph: np.flatnonzero(phs == ph).tolist()
        for ph in ("X", "B", "E", "i", "I", "C", "M")
        if len(phs)
    }


def _column(events: list, idx: list[int], field: str, *, default=None, minimum=None):
    """``field`` of the indexed events as float64, checked at NumPy speed; the first event
    with a missing, non-number, non-finite or too small value is :class:`Malformed`."""
    values = [events[i].get(field, default) for i in idx]
    arr = np.array(values) if values else np.zeros(0)
    if arr.dtype.kind in "iuf":
        arr = arr.astype(np.float64)
        if np.isfinite(arr).all() and (minimum is None or not (arr < minimum).any()):
            return arr
    for i in idx:  # slow path: name the offender
        number(events[i], field, _where(events, i), default=default, minimum=minimum)
    return np.array(values, np.float64)


def _args(e: dict) -> dict:
    args = e.get("args")
    return args if type(args) is dict else {}


def _all_args(evs: list[dict]) -> list[dict]:
    args = [e.get("args") for e in evs]
    return [a if type(a) is dict else {} for a in args]


def _intervals(events: list, phases: dict):
    """Every timed region as parallel columns: event index, start and duration (µs), args."""
    xs = phases.get("X", [])
    instants = phases.get("i", []) + phases.get("I", [])
    idx = xs + instants
    x_ts = _column(events, xs, "ts")
    x_dur = _column(events, xs, "dur", default=0, minimum=0)
    i_ts = _column(events, instants, "ts")
    start, dur = [x_ts, i_ts], [x_dur, np.zeros(len(instants))]
    args = _all_args([events[i] for i in idx])
    ends = [x_ts + x_dur, i_ts]
    paired = sorted(phases.get("B", []) + phases.get("E", []))
    if paired:
        b_idx, b_start, b_dur, b_args, last = _begin_end(events, paired)
        ends.append(np.array([last]))
        last_us = max(float(e.max()) for e in ends if len(e))
        b_dur = [last_us - s if d is None else d for s, d in zip(b_start, b_dur)]
        idx += b_idx
        args += b_args
        start.append(np.array(b_start, np.float64))
        dur.append(np.maximum(np.array(b_dur, np.float64), 0))
    return idx, np.concatenate(start), np.concatenate(dur), args


def _begin_end(events: list, paired: list[int]):
    """``B``/``E`` pairs matched per (pid, tid) as a stack; an unclosed ``B`` gets ``None``
    as its duration (it runs to the end of the trace), a lone ``E`` is skipped."""
    idx, start, dur, args, stacks = [], [], [], [], {}
    last = -np.inf
    for i in paired:
        e = events[i]
        ts = number(e, "ts", _where(events, i))
        last = max(last, ts)
        where = (_hashable(e.get("pid")), _hashable(e.get("tid")))
        if e["ph"] == "B":
            stacks.setdefault(where, []).append(len(idx))
            idx.append(i)
            start.append(ts)
            dur.append(None)
            args.append(_args(e))
        elif stacks.get(where):
            slot = stacks[where].pop()
            if ts < start[slot]:
                raise Malformed(
                    f"{_where(events, i)} ends at ts={ts}, before its 'B' began at {start[slot]}"
                )
            dur[slot] = ts - start[slot]
            args[slot] = {**args[slot], **_args(e)}
    return idx, start, dur, args, last


def _counters(events: list, idx: list[int], origin_us: float) -> dict:
    counters: dict[str, tuple[list, list]] = {}
    for i in idx:
        e = events[i]
        ts = number(e, "ts", _where(events, i))
        values = [v for v in _args(e).values() if isinstance(v, (int, float))]
        if values:
            t, v = counters.setdefault(str(e.get("name", "counter")), ([], []))
            t.append(round((ts - origin_us) * 1000))
            v.append(values[0])
    return counters


def from_chrome(data: dict):
    """A :class:`Run` from a parsed Chrome trace (``{"traceEvents": [...]}``)."""
    events = data.get("traceEvents")
    if not isinstance(events, list):
        raise Malformed(f"'traceEvents' is a {type(events).__name__}, not a list of events")
    header = (data.get("otherData") or {}).get("everyo_run")
    ours = isinstance(header, dict)
    phases = _by_phase(events)
    idx, start_us, dur_us, args = _intervals(events, phases)
    origin = 0.0 if ours or not len(start_us) else float(start_us.min())
    threads = _Threads(events, phases.get("M", []))
    evs = [events[i] for i in idx]
    idents = threads.idents_of(evs)
    b = Builder()
    for ident, name in threads.named(prefix=not ours):
        b.thread_index(ident, name)
    key_ids = _keys(evs, args if ours else None, b)

    def where(i):
        return _where(events, idx[i])

    cols = {
        "start_ns": int64_column((start_us - origin) * 1000, "start_ns", where),
        "dur_ns": int64_column(dur_us * 1000, "dur_ns", where),
        "key": key_ids,
        "thread": np.array([b.thread_index(i) for i in idents], np.int16),
    }
    cols["depth"], _ = nesting(
        cols["thread"].astype(np.int64), cols["start_ns"], cols["start_ns"] + cols["dur_ns"]
    )
    if ours:
        _everyo_columns(cols, args, b)
        meta = {i: a["metadata"] for i, a in enumerate(args) if a.get("metadata")}
    else:
        meta = {i: dict(a) for i, a in enumerate(args) if a}
        header = {"label": "chrome trace"}
        if len(threads.pids) == 1:
            pid = next(iter(threads.pids))
            if isinstance(pid, int) and not isinstance(pid, bool):
                header["process_id"] = pid
    # file order is not row order: the store puts rows back in post-order (from_columns)
    counters = _counters(events, phases.get("C", []), origin)
    return run_from(header, b.store(cols, meta), counters)


def _keys(evs: list[dict], args: list[dict] | None, b: Builder) -> np.ndarray:
    """The interned (category, name, path) of each event; paths only in everyo's traces."""
    if args is None:
        raws = [(e.get("cat", "user"), e.get("name", ""), "") for e in evs]
    else:
        raws = [
            (e.get("cat", "user"), e.get("name", ""), a.get("path", "")) for e, a in zip(evs, args)
        ]
    try:
        memo = {raw: None for raw in raws}
    except TypeError:  # an unhashable name or category: the slow way
        return np.array([b.key(*raw) for raw in raws], np.int32)
    for raw in memo:
        memo[raw] = b.key(*raw)
    return np.array([memo[raw] for raw in raws], np.int32)


def _everyo_columns(cols: dict, args: list, b: Builder) -> None:
    """The optional columns everyo writes into ``args`` (shapes, FLOPs, bytes, device time)."""
    if any("shapes" in a for a in args):
        cols["shape"] = np.array([b.shape(a.get("shapes")) for a in args], np.int32)
    for name, src, scale in _NUMERIC:
        if any(src in a for a in args):  # null (unknown) and missing read as -1
            cols[name] = np.array(
                [-1 if a.get(src) is None else round(a[src] * scale) for a in args], np.int64
            )
