"""``everyo.profiler.load``: read any export back into a :class:`Run`.

Formats, told apart by their content (gzip or not):

- the events array ``export_json`` writes by default (also the reference EveryO's files:
  ``[{"name", "duration_ns", "start_ns", "process_id", "thread_id", "metadata"}, ...]``);
- everyo's raw file (``export_json(path, format="raw")``: ``{"format": "everyo.raw", ...}``);
- Chrome trace JSON, everyo's or another tool's, object or array form (see ``chrome_reader``).

Content that does not fit its format is an :class:`EveryOExportError` naming the file and the
first problem (which event, which field), never a bare ``KeyError`` or ``TypeError``.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
from pathlib import Path

import numpy as np

from everyo.errors import EveryOExportError
from everyo.profiler.export import _fast
from everyo.profiler.export._columns import Columns
from everyo.profiler.export._reading import (
    Builder,
    Malformed,
    int64_column,
    interned,
    nesting,
    run_from,
)
from everyo.profiler.export._stream import Layout, NotLaidOut, events_of, open_text
from everyo.profiler.export.chrome_reader import from_chrome
from everyo.profiler.storage.batch import input_shapes
from everyo.profiler.storage.run import Run


def _read_json(p: Path):
    try:
        with open_text(p) as f:
            return json.load(f)
    except (ValueError, OSError, EOFError) as exc:
        raise EveryOExportError(f"cannot read {p}: not a valid JSON trace ({exc})") from exc
    except RecursionError:
        raise EveryOExportError(
            f"cannot read {p}: its JSON nests arrays or objects too deeply to be a trace"
        ) from None


def _where(events: list, base: int = 0):
    return lambda i: f"event {base + i} ({str(events[i].get('name', ''))[:60]!r})"


def _key_of(b: Builder):
    return lambda raw: b.key(*raw)


def _optional(cols: Columns, ev: list, name: str, where, *, first_only: bool = False) -> None:
    """Optional column ``name`` of a chunk: -1 (unknown) where an event lacks it or holds null.
    ``first_only``: the first event tells whether the chunk has it (the raw format writes an
    optional column for every event or none)."""
    if name in ev[0] if first_only else any(name in e for e in ev):
        values = [-1 if e.get(name) is None else e[name] for e in ev]
        cols.add(name, int64_column(values, name, where))
    else:
        cols.add(name, len(ev), present=False)


def _field(ev: list, name: str, default=None) -> list:
    """``e.get(name, default)`` of each event, at C speed (no Python code per event)."""
    return list(map(dict.get, ev, itertools.repeat(name, len(ev)), itertools.repeat(default)))


def _add_fast(cols: Columns, meta: dict, b: Builder, c, n: int, tid: str) -> None:
    """A block read by ``_fast`` (its values already checked as the lines below check them)."""
    cols.add("key", interned(c.keys, lambda raw: b.key(*c.key_of[raw]), np.int32))
    cols.add("thread", interned(c.ints[tid].tolist(), b.thread_index, np.int32))
    cols.add("shape", interned(c.shapes, b.shape, np.int32), present=c.shapes_present)
    for name, values in c.optional.items():
        if values is None:
            cols.add(name, c.n, present=False)
        else:
            cols.add(name, values)
    for i, m in c.meta.items():
        meta[n + i] = m


def _from_raw(data: dict, chunks) -> Run:
    # each field of a chunk is read by one `map` of dict.get (no Python code per event: issue
    # 44, loading ran at 55k-145k events/s); blocks in everyo's own line layout without the
    # json module at all (``_fast``)
    b = Builder(data.get("threads", []))
    cols, meta, n = Columns(), {}, 0
    for item in chunks:
        c = _fast.raw_chunk(item)
        if c is not None:
            cols.add("start_ns", c.ints["start_ns"])
            cols.add("dur_ns", c.ints["dur_ns"])
            cols.add("depth", c.ints["depth"].astype(np.int16))
            _add_fast(cols, meta, b, c, n, "tid")
            n += c.n
            continue
        ev = events_of(item)
        if not isinstance(ev, list) or (ev and set(map(type, ev)) != {dict}):
            raise Malformed("'events' is not a list of event objects")
        if not ev:
            continue
        where = _where(ev, n)
        for name in ("start_ns", "dur_ns", "kind", "name"):
            if not all(map(dict.__contains__, ev, itertools.repeat(name, len(ev)))):
                raise KeyError(name)  # ("damaged (missing field 'start_ns')", as before)
        cols.add("start_ns", int64_column(_field(ev, "start_ns"), "start_ns", where))
        cols.add("dur_ns", int64_column(_field(ev, "dur_ns"), "dur_ns", where))
        keys = list(zip(_field(ev, "kind"), _field(ev, "name"), _field(ev, "path", "")))
        cols.add("key", interned(keys, _key_of(b), np.int32))
        cols.add("thread", interned(_field(ev, "tid", 0), b.thread_index, np.int32))
        depth = int64_column(_field(ev, "depth", 0), "depth", where)
        cols.add("depth", depth.astype(np.int16))
        present = "shapes" in ev[0]
        cols.add("shape", interned(_field(ev, "shapes"), b.shape, np.int32), present=present)
        for name in ("flops", "bytes", "mem_bytes", "device_ns"):
            _optional(cols, ev, name, where, first_only=True)
        metadata = _field(ev, "metadata")
        for i in np.flatnonzero(np.fromiter(map(bool, metadata), bool, len(ev))).tolist():
            meta[n + i] = metadata[i]
        n += len(ev)
    counters = {k: (c["t_ns"], c["values"]) for k, c in (data.get("counters") or {}).items()}
    run = run_from(data.get("run", {}), b.store(_complete(cols.columns()), meta), counters)
    if data.get("samples") is not None:  # the stack samples (profile(sample=...))
        from everyo.profiler.sampling.samples import SampleStore

        run.samples = SampleStore.from_json(data["samples"])
    return run


def _complete(cols: dict) -> dict:
    """No events at all: the core columns, empty."""
    if "start_ns" in cols:
        return cols
    return {
        name: np.zeros(0, np.int64) for name in ("start_ns", "dur_ns", "key", "thread", "depth")
    }


def _checked_events(events: list, base: int) -> list[dict]:
    """The events array with its required fields checked (raises :class:`Malformed`)."""
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            raise Malformed(f"item {base + i} is {str(e)[:40]!r}, not an event object")
        where = f"event {base + i} ({str(e.get('name', ''))[:60]!r})"
        if not isinstance(e.get("name"), str):
            raise Malformed(f"{where} has no 'name' string")
        if not isinstance(e.get("metadata", {}), dict):
            raise Malformed(f"{where} has a 'metadata' that is not an object")
    return events


def _from_events(chunks, label: str) -> Run:
    """The events array (``export_json``'s default, and the reference EveryO's files)."""
    b = Builder()
    cols, meta, n = Columns(), {}, 0
    ours, process_id = None, None
    derived: dict[str, list] = {}  # shape text -> the input_shapes it gives (a few distinct)
    for item in chunks:
        c = _fast.events_chunk(item) if ours is not False else None
        if c is not None:  # everyo's own line layout, read without the json module
            if ours is None:
                ours, process_id = True, int(c.ints["process_id"][0])
            cols.add("start_ns", c.ints["start_ns"])
            cols.add("dur_ns", c.ints["duration_ns"])
            cols.add("depth", c.ints["depth"].astype(np.int16))
            _add_fast(cols, meta, b, c, n, "thread_id")
            n += c.n
            continue
        ev = _checked_events(events_of(item), n)
        if ours is None and ev:
            ours = "row" in ev[0]  # everyo's own: times already count from the run start
            process_id = ev[0].get("process_id")
        where = _where(ev, n)
        cols.add("start_ns", int64_column([e.get("start_ns") for e in ev], "start_ns", where))
        durations = [e.get("duration_ns") for e in ev]
        cols.add("dur_ns", int64_column(durations, "duration_ns", where))
        keys = [(e.get("kind", "user"), e["name"], e.get("path", "")) for e in ev]
        cols.add("key", interned(keys, _key_of(b), np.int32))
        tids = [e.get("thread_id", 0) for e in ev]
        cols.add("thread", interned(tids, b.thread_index, np.int32))
        if ours:
            depth = int64_column([e.get("depth", 0) for e in ev], "depth", where)
            cols.add("depth", depth.astype(np.int16))
        shapes = [e.get("shapes") or None for e in ev]
        present = any("shapes" in e for e in ev)
        cols.add("shape", interned(shapes, b.shape, np.int32), present=present)
        for name in ("flops", "mem_bytes", "device_ns"):
            _optional(cols, ev, name, where)
        for i, e in enumerate(ev):
            m = e.get("metadata")
            if m and "shapes" in e:
                text = e["shapes"] or ""
                if text not in derived:
                    derived[text] = input_shapes(text) or []
                if m.get("input_shapes") == derived[text]:
                    m = {k: v for k, v in m.items() if k != "input_shapes"}  # derived again
            if m:
                meta[n + i] = dict(m)
        n += len(ev)
    columns = _complete(cols.columns())
    if not ours and n:
        columns["start_ns"] -= columns["start_ns"].min()  # the reference: an arbitrary origin
        tids = columns["thread"].astype(np.int64)
        start = columns["start_ns"]
        columns["depth"], _ = nesting(tids, start, start + columns["dur_ns"])
    header = {"label": label}
    if isinstance(process_id, int):
        header["process_id"] = process_id
    return run_from(header, b.store(columns, meta), {})


def _parse(data, label: str, chunks=None) -> Run:
    """A run from a parsed document; ``chunks`` are its events in chunks when the document was
    read with its events array left empty (see ``_stream``)."""
    if isinstance(data, dict) and data.get("format") == "everyo.raw":
        return _from_raw(data, [data.get("events", [])] if chunks is None else chunks)
    if isinstance(data, dict) and "traceEvents" in data:
        return from_chrome(data, chunks)
    if isinstance(data, list):
        if chunks is not None:  # the first block tells the events format from Chrome's
            chunks = iter(chunks)
            first = next(chunks, [])
            data = events_of(first)
            chunks = itertools.chain([first], chunks)
        first = data[0] if data else {}
        if isinstance(first, dict) and "ph" in first:  # the JSON-array form of Chrome traces
            return from_chrome({"traceEvents": data if chunks is None else []}, chunks)
        return _from_events([data] if chunks is None else chunks, label)
    raise Malformed(
        "neither an events array, an everyo raw export nor a Chrome trace (a JSON "
        "object with 'traceEvents')"
    )


def _layout(p: Path) -> Layout | None:
    try:
        return Layout(p)
    except (NotLaidOut, ValueError, OSError, EOFError):  # read whole: json.load says what
        return None


def _read(p: Path) -> Run:
    layout = _layout(p)
    if layout is not None:
        try:
            return _parse(layout.skeleton, p.name, layout.parts())
        except NotLaidOut:
            pass
    return _parse(_read_json(p), p.name)


@contextlib.contextmanager
def _cyclic_gc_paused():
    """Parsed events are dicts and lists that hold no cycles, but the millions of them set the
    cyclic collector off again and again (40% of the CPU time of a load of the events format):
    it is paused while a file is read."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_run(path) -> Run:
    """Read a file written by ``export_json`` (either format) or a Chrome trace.

    Files laid out one event per line (everyo's own) are parsed a chunk of events at a time
    (see ``_stream``); others whole.
    """
    p = Path(path)
    if not p.is_file():
        raise EveryOExportError(f"cannot read {p}: no such file")
    try:
        with _cyclic_gc_paused():
            return _read(p)
    except Malformed as exc:
        raise EveryOExportError(f"cannot read {path}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise EveryOExportError(f"cannot read {path}: the file is damaged ({what})") from exc
