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

from everyo.profiler.export import _fast
from everyo.profiler.export._columns import Columns
from everyo.profiler.export._reading import (
    Builder,
    Malformed,
    int64_column,
    interned,
    nesting,
    number,
    run_from,
)
from everyo.profiler.export._stream import events_of

# args keys everyo writes itself (the rest of an everyo event's args is its "metadata")
_NUMERIC = (
    ("flops", "flops", 1),
    ("bytes", "bytes", 1),
    ("mem_bytes", "mem_bytes", 1),
    ("device_ns", "device_us", 1e3),
)


class _Threads:
    """``(pid, tid)`` pairs as thread ids of the store, with names from ``"M"`` events."""

    def __init__(self):
        self.process_names, self.thread_names = {}, {}
        self.idents: dict[tuple, int] = {}
        self.codes: dict[tuple, int] = {}  # the place of each in ``idents``
        self.taken: set[int] = set()  # the thread ids given so far
        self.top = 0  # the largest of them (0 for none)
        self.pids: set = set()

    def add_names(self, meta_events: list) -> None:
        for e in meta_events:
            if isinstance(e.get("args"), dict):
                name = e["args"].get("name")
                where = (_hashable(e.get("pid")), _hashable(e.get("tid")))
                if e.get("name") == "process_name":
                    self.process_names[where[0]] = str(name)
                elif e.get("name") == "thread_name":
                    self.thread_names[where] = str(name)

    def codes_of(self, raws: list[tuple]) -> np.ndarray:
        """The thread of each event from its raw ``(pid, tid)``, as its place in ``idents``
        (int32: half an id's size): one lookup per distinct."""
        try:
            memo = {raw: None for raw in raws}
        except TypeError:  # a list or dict as pid/tid: the slow way
            codes = [self._code((_hashable(p), _hashable(t))) for p, t in raws]
            return np.array(codes, np.int32)
        for raw in memo:
            memo[raw] = self._code((_hashable(raw[0]), _hashable(raw[1])))
        return np.array([memo[raw] for raw in raws], np.int32)

    def _code(self, where: tuple) -> int:
        if where not in self.idents:
            tid = where[1]
            if isinstance(tid, int) and not isinstance(tid, bool) and tid not in self.taken:
                ident = tid
            else:  # a string tid, or the same number in another process: a new number
                ident = self.top + 1
            self.idents[where] = ident
            self.taken.add(ident)
            self.top = max(self.top, ident)
            self.pids.add(where[0])
            self.codes[where] = len(self.codes)
        return self.codes[where]

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


def _where(e: dict, i: int) -> str:
    return f"traceEvents[{i}] (ph {e.get('ph')!r}, name {str(e.get('name', ''))[:60]!r})"


def _by_phase(events: list, base: int) -> dict[str, list[int]]:
    """Indices of the events of each phase; a non-object is :class:`Malformed`."""
    try:
        phs = [e.get("ph") for e in events]
    except AttributeError:
        i, e = next((i, e) for i, e in enumerate(events) if type(e) is not dict)
        raise Malformed(
            f"traceEvents[{base + i}] is {str(e)[:40]!r}, not an event object"
        ) from None
    phs = np.array([p if type(p) is str else "" for p in phs], dtype=object)
    return {
        ph: np.flatnonzero(phs == ph).tolist()
        for ph in ("X", "B", "E", "i", "I", "C", "M")
        if len(phs)
    }


def _column(events: list, idx: list[int], base: int, field: str, *, default=None, minimum=None):
    """``field`` of the indexed events as float64, checked at NumPy speed; the first event
    with a missing, non-number, non-finite or too small value is :class:`Malformed`."""
    values = [events[i].get(field, default) for i in idx]
    arr = np.array(values) if values else np.zeros(0)
    if arr.dtype.kind in "iuf":
        arr = arr.astype(np.float64)
        if np.isfinite(arr).all() and (minimum is None or not (arr < minimum).any()):
            return arr
    for i in idx:  # slow path: name the offender
        where = _where(events[i], base + i)
        number(events[i], field, where, default=default, minimum=minimum)
    return np.array(values, np.float64)


def _args(e: dict) -> dict:
    args = e.get("args")
    return args if type(args) is dict else {}


def _all_args(evs: list[dict]) -> list[dict]:
    args = [e.get("args") for e in evs]
    return [a if type(a) is dict else {} for a in args]


def _begin_end(paired: list[tuple[int, dict]]):
    """``B``/``E`` pairs matched per (pid, tid) as a stack; an unclosed ``B`` gets ``None``
    as its duration (it runs to the end of the trace), a lone ``E`` is skipped."""
    idx, evs, start, dur, args, stacks = [], [], [], [], [], {}
    last = -np.inf
    for i, e in paired:
        ts = number(e, "ts", _where(e, i))
        last = max(last, ts)
        where = (_hashable(e.get("pid")), _hashable(e.get("tid")))
        if e["ph"] == "B":
            stacks.setdefault(where, []).append(len(evs))
            idx.append(i)
            evs.append(e)
            start.append(ts)
            dur.append(None)
            args.append(_args(e))
        elif stacks.get(where):
            slot = stacks[where].pop()
            if ts < start[slot]:
                raise Malformed(
                    f"{_where(e, i)} ends at ts={ts}, before its 'B' began at {start[slot]}"
                )
            dur[slot] = ts - start[slot]
            args[slot] = {**args[slot], **_args(e)}
    return idx, evs, start, dur, args, last


def _counters(counter_events: list[tuple[int, dict]], origin_us: float) -> dict:
    counters: dict[str, tuple[list, list]] = {}
    for i, e in counter_events:
        ts = number(e, "ts", _where(e, i))
        values = [v for v in _args(e).values() if isinstance(v, (int, float))]
        if values:
            t, v = counters.setdefault(str(e.get("name", "counter")), ([], []))
            t.append(round((ts - origin_us) * 1000))
            v.append(values[0])
    return counters


class _Trace:
    """A trace's events folded in a chunk at a time: the timed regions as columns (their
    dicts dropped), and the few events that need the whole trace (``B``/``E``, counters,
    names) kept until :meth:`run`."""

    def __init__(self, ours: bool):
        self.ours = ours
        self.b = Builder()
        self.threads = _Threads()
        # start, dur (µs, float64), codes (threads), keys, index (in the file), shape and the
        # numeric columns: each written into its own growing mapping (no join at the end)
        self.cols = Columns()
        self.index: np.ndarray | None = None  # the file index of each row, once all are in
        self.meta: dict[int, dict] = {}
        self.rows = 0
        self.last_end = -np.inf
        self.paired: list[tuple[int, dict]] = []
        self.counter_events: list[tuple[int, dict]] = []
        self.names: list[dict] = []

    def add(self, events: list, base: int) -> None:
        phases = _by_phase(events, base)
        xs = phases.get("X", [])
        instants = phases.get("i", []) + phases.get("I", [])
        x_ts = _column(events, xs, base, "ts")
        x_dur = _column(events, xs, base, "dur", default=0, minimum=0)
        i_ts = _column(events, instants, base, "ts")
        for end in (x_ts + x_dur, i_ts):
            if len(end):
                self.last_end = max(self.last_end, float(end.max()))
        idx = xs + instants
        evs = [events[i] for i in idx]
        timed = np.concatenate([x_ts, i_ts]), np.concatenate([x_dur, 0 * i_ts])
        self._regions(evs, [base + i for i in idx], *timed)
        self._keep(events, range(base, base + len(events)), phases)

    def _keep(self, events: list, at, phases: dict) -> None:
        """Keep the events that need the whole trace; ``at``: each one's index in the file."""
        paired = sorted(phases.get("B", []) + phases.get("E", []))  # in file order: a stack
        self.paired.extend((at[i], events[i]) for i in paired)
        self.counter_events.extend((at[i], events[i]) for i in phases.get("C", []))
        self.names.extend(events[i] for i in phases.get("M", []))

    def add_fast(self, c: _fast.ChromeChunk, base: int) -> None:
        """A block read by ``_fast.chrome_chunk``: what :meth:`add` and :meth:`_regions` do
        with its events, in the same order (interning order is the run's key and shape ids)."""
        if len(c.ts):
            self.last_end = max(self.last_end, float((c.ts + c.dur).max()))
        cols = self.cols
        cols.add("index", _file_index(base + c.rows))
        cols.add("start", c.ts)
        cols.add("dur", c.dur)
        cols.add("codes", self.threads.codes_of(c.pairs))
        cols.add("key", interned(c.keys, lambda raw: self.b.key(*c.key_of[raw]), np.int32))
        cols.add("shape", interned(c.shapes, self.b.shape, np.int32), present=c.shapes_present)
        for name, src, scale in _NUMERIC:
            values, present = c.numbers[src]
            if present.any():
                known = present == 1
                if scale != 1:  # round(µs * 1000) as the json path: half to even
                    values = np.round(values * scale)
                cols.add(name, np.where(known, values, -1).astype(np.int64))
            else:
                cols.add(name, len(c.ts), present=False)
        self.meta.update((self.rows + i, m) for i, m in c.meta.items())
        self.rows += len(c.ts)
        events = [e for _, e in c.others]
        self._keep(events, [base + i for i, _ in c.others], _by_phase(events, base))

    def _regions(self, evs: list[dict], idx: list[int], start_us, dur_us) -> None:
        """Fold in timed regions: their events, file indices, starts and durations (µs)."""
        args = _all_args(evs)
        cols = self.cols
        cols.add("index", _file_index(np.array(idx, np.int64)))
        cols.add("start", np.asarray(start_us, np.float64))
        cols.add("dur", np.asarray(dur_us, np.float64))
        raws = [(e.get("pid"), e.get("tid")) for e in evs]
        cols.add("codes", self.threads.codes_of(raws))
        cols.add("key", _keys(evs, args if self.ours else None, self.b))
        if self.ours:
            self._everyo_columns(args)
            items = ((i, a["metadata"]) for i, a in enumerate(args) if a.get("metadata"))
        else:
            items = ((i, dict(a)) for i, a in enumerate(args) if a)
        self.meta.update((self.rows + i, m) for i, m in items)
        self.rows += len(evs)

    def _everyo_columns(self, args: list) -> None:
        """The optional columns everyo writes into ``args`` (shapes, FLOPs, bytes, device
        time); null (unknown) and missing read as -1."""
        shapes = np.array([self.b.shape(a.get("shapes")) for a in args], np.int32)
        self.cols.add("shape", shapes, present=any("shapes" in a for a in args))
        for name, src, scale in _NUMERIC:
            if any(src in a for a in args):
                values = [-1 if a.get(src) is None else round(a[src] * scale) for a in args]
                self.cols.add(name, np.array(values, np.int64))
            else:  # none in this chunk: -1 each, made only if another chunk has the column
                self.cols.add(name, len(args), present=False)

    def run(self, header):
        """The :class:`Run` of everything added."""
        if self.paired:
            idx, evs, start, dur, args, last = _begin_end(self.paired)
            last_us = max(self.last_end, last)
            dur = [last_us - s if d is None else d for s, d in zip(start, dur)]
            self.paired = []
            merged = [{**e, "args": a} for e, a in zip(evs, args)]  # the pair's args merged
            start_us, dur_us = np.array(start, np.float64), np.array(dur, np.float64)
            self._regions(merged, idx, start_us, np.maximum(dur_us, 0))
        cols = self.cols
        self.index = cols.pop("index", np.int64)  # (for the errors of the two checks below)
        start_us = cols.pop("start", np.float64)
        origin = 0.0 if self.ours or not len(start_us) else float(start_us.min())
        self.threads.add_names(self.names)
        b = self.b
        for ident, name in self.threads.named(prefix=not self.ours):
            b.thread_index(ident, name)
        index = [b.thread_index(ident) for ident in self.threads.idents.values()]
        out = {"thread": np.array(index, np.int32)[cols.pop("codes", np.int32)]}
        # times become int64 nanoseconds in the memory that held their float microseconds
        start_us -= origin
        start_us *= 1000
        out["start_ns"] = int64_column(start_us, "start_ns", self._where, in_place=True)
        del start_us
        dur_ns = cols.pop("dur", np.float64)
        dur_ns *= 1000
        out["dur_ns"] = int64_column(dur_ns, "dur_ns", self._where, in_place=True)
        del dur_ns
        self.index = None
        out["key"] = cols.pop("key", np.int32)
        end = out["start_ns"] + out["dur_ns"]
        out["depth"], _ = nesting(out["thread"], out["start_ns"], end)
        del end
        out.update(cols.columns())  # shape and the numeric columns some event had
        if not self.ours:
            header = {"label": "chrome trace"}
            if len(self.threads.pids) == 1:
                pid = next(iter(self.threads.pids))
                if isinstance(pid, int) and not isinstance(pid, bool):
                    header["process_id"] = pid
        # file order is not row order: the store puts rows back in post-order (from_columns)
        counters = _counters(self.counter_events, origin)
        store = b.store(out, self.meta)
        del out  # (the store holds the columns now)
        return run_from(header, store, counters)

    def _where(self, row: int) -> str:
        return f"traceEvents[{self.index[row]}]"


def _file_index(index: np.ndarray) -> np.ndarray:
    """Events' places in the file, int32 while they fit (half the memory)."""
    return index.astype(np.int32) if not len(index) or index.max() < 2**31 else index


def from_chrome(data: dict, chunks=None):
    """A :class:`Run` from a parsed Chrome trace (``{"traceEvents": [...]}``); ``chunks`` are
    its events in chunks (lists, or ``_stream.Part`` blocks of lines) when the document was
    read with ``traceEvents`` left empty."""
    events = data.get("traceEvents")
    if not isinstance(events, list):
        raise Malformed(f"'traceEvents' is a {type(events).__name__}, not a list of events")
    header = (data.get("otherData") or {}).get("everyo_run")
    trace = _Trace(ours=isinstance(header, dict))
    base = 0
    for item in [events] if chunks is None else chunks:
        c = _fast.chrome_chunk(item) if trace.ours else None
        if c is not None:  # everyo's own line layout, its X events without the json module
            trace.add_fast(c, base)
            base += c.lines
            continue
        chunk = events_of(item)
        trace.add(chunk, base)
        base += len(chunk)
    return trace.run(header)


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
