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

from everyo.profiler.export._reading import Builder, Malformed, nesting, number, run_from

# args keys everyo writes itself (the rest of an everyo event's args is its "metadata")
_NUMERIC = (
    ("flops", "flops", 1),
    ("bytes", "bytes", 1),
    ("mem_bytes", "mem_bytes", 1),
    ("device_ns", "device_us", 1e3),
)


class _Threads:
    """``(pid, tid)`` pairs as thread ids of the store, with names from ``"M"`` events."""

    def __init__(self, events: list):
        self.process_names, self.thread_names = {}, {}
        for e in events:
            if e.get("ph") == "M" and isinstance(e.get("args"), dict):
                name = e["args"].get("name")
                where = (_hashable(e.get("pid")), _hashable(e.get("tid")))
                if e.get("name") == "process_name":
                    self.process_names[where[0]] = str(name)
                elif e.get("name") == "thread_name":
                    self.thread_names[where] = str(name)
        self.idents: dict[tuple, int] = {}
        self.pids: set = set()

    def ident(self, event: dict) -> int:
        where = (_hashable(event.get("pid")), _hashable(event.get("tid")))
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
                name = ": ".join(
                    x for x in (self.process_names.get(pid) or _label("process", pid), name) if x
                )
            out.append((ident, name or "trace"))
        return out


def _label(what: str, ident) -> str:
    """``"thread 7"`` for a number, the text itself for a string id (``"stream 7"``)."""
    if ident is None or ident == "":
        return ""
    return f"{what} {ident}" if isinstance(ident, (int, float)) else str(ident)


def _hashable(value):
    return value if isinstance(value, (int, float, str, type(None))) else str(value)


def _intervals(events: list):
    """``(event, start_us, dur_us, args)`` of every timed region, in file order."""
    out, open_b = [], {}
    last_us = None
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            raise Malformed(f"traceEvents[{i}] is {str(e)[:40]!r}, not an event object")
        ph = e.get("ph")
        if ph not in ("X", "B", "E", "i", "I"):
            continue
        where = f"traceEvents[{i}] (ph {ph!r}, name {str(e.get('name', ''))[:60]!r})"
        ts = number(e, "ts", where)
        last_us = ts if last_us is None else max(last_us, ts)
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if ph == "X":
            dur = number(e, "dur", where, default=0, minimum=0)
            last_us = max(last_us, ts + dur)
            out.append((e, ts, dur, args))
        elif ph in ("i", "I"):
            out.append((e, ts, 0, args))
        elif ph == "B":
            open_b.setdefault((_hashable(e.get("pid")), _hashable(e.get("tid"))), []).append(
                (len(out), e)
            )
            out.append(None)  # filled when its "E" arrives, so file order is kept
        else:
            stack = open_b.get((_hashable(e.get("pid")), _hashable(e.get("tid"))))
            if not stack:
                continue  # an end without a begin: the trace started inside the region
            slot, b = stack.pop()
            begin = b["ts"]
            if ts < begin:
                raise Malformed(f"{where} ends at ts={ts}, before its 'B' began at {begin}")
            b_args = b.get("args") if isinstance(b.get("args"), dict) else {}
            out[slot] = (b, begin, ts - begin, {**b_args, **args})
    for stack in open_b.values():  # never closed: as chrome://tracing draws them, to the end
        for slot, b in stack:
            b_args = b.get("args") if isinstance(b.get("args"), dict) else {}
            out[slot] = (b, b["ts"], max(last_us - b["ts"], 0), b_args)
    return [x for x in out if x is not None]


def _counters(events: list, origin_us: float) -> dict:
    counters: dict[str, tuple[list, list]] = {}
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") != "C":
            continue
        ts = number(e, "ts", f"traceEvents[{i}] (ph 'C', name {str(e.get('name'))[:60]!r})")
        values = [v for v in (e.get("args") or {}).values() if isinstance(v, (int, float))]
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
    header = (data.get("otherData") or {}).get("everyo_run") if isinstance(data, dict) else None
    ours = isinstance(header, dict)
    regions = _intervals(events)
    threads = _Threads(events)
    origin = 0.0 if ours or not regions else min(r[1] for r in regions)
    b = Builder()
    start = np.array([r[1] - origin for r in regions], np.float64)
    cols = {
        "start_ns": np.round(start * 1000).astype(np.int64),
        "dur_ns": np.round(np.array([r[2] for r in regions], np.float64) * 1000).astype(np.int64),
    }
    idents = [threads.ident(e) for e, *_ in regions]
    for ident, name in threads.named(prefix=not ours):
        b.tid(ident, name)
    args = [r[3] for r in regions]
    cols["key"] = np.array(
        [
            b.key(e.get("cat", "user"), e.get("name", ""), a.get("path", "") if ours else "")
            for (e, *_), a in zip(regions, args)
        ],
        np.int32,
    )
    cols["tid"] = np.array([b.tid(i) for i in idents], np.int16)
    cols["depth"], _ = nesting(
        cols["tid"].astype(np.int64), cols["start_ns"], cols["start_ns"] + cols["dur_ns"]
    )
    if ours:
        _everyo_columns(cols, args, b)
        meta = {i: a["metadata"] for i, a in enumerate(args) if a.get("metadata")}
    else:
        meta = {i: dict(a) for i, a in enumerate(args) if a}
    if not ours:
        header = {"label": "chrome trace"}
        if len(threads.pids) == 1:
            pid = next(iter(threads.pids))
            if isinstance(pid, int) and not isinstance(pid, bool):
                header["process_id"] = pid
    # file order is not row order: the store puts rows back in post-order (from_columns)
    return run_from(header, b.store(cols, meta), _counters(events, origin))


def _everyo_columns(cols: dict, args: list, b: Builder) -> None:
    """The optional columns everyo writes into ``args`` (shapes, FLOPs, bytes, device time)."""
    if any("shapes" in a for a in args):
        cols["shape"] = np.array([b.shape(a.get("shapes")) for a in args], np.int32)
    for name, src, scale in _NUMERIC:
        if any(src in a for a in args):  # null (unknown) and missing read as -1
            cols[name] = np.array(
                [-1 if a.get(src) is None else round(a[src] * scale) for a in args], np.int64
            )
