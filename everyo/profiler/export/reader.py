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

import gzip
import json
from pathlib import Path

import numpy as np

from everyo.errors import EveryOExportError
from everyo.profiler.batch import input_shapes
from everyo.profiler.export._reading import (
    Builder,
    Malformed,
    int64_column,
    nesting,
    run_from,
)
from everyo.profiler.export.chrome_reader import from_chrome
from everyo.profiler.run import Run


def _read_json(path):
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
    except RecursionError:
        raise EveryOExportError(
            f"cannot read {p}: its JSON nests arrays or objects too deeply to be a trace"
        ) from None


def _where(events: list):
    return lambda i: f"event {i} ({str(events[i].get('name', ''))[:60]!r})"


def _from_raw(data: dict) -> Run:
    ev = data.get("events", [])
    if not isinstance(ev, list) or not all(type(e) is dict for e in ev):
        raise Malformed("'events' is not a list of event objects")
    b = Builder(data.get("threads", []))
    n = len(ev)
    where = _where(ev)
    cols = {
        "start_ns": int64_column([e["start_ns"] for e in ev], "start_ns", where),
        "dur_ns": int64_column([e["dur_ns"] for e in ev], "dur_ns", where),
        "key": np.array([b.key(e["kind"], e["name"], e.get("path", "")) for e in ev], np.int32),
        "thread": np.array([b.thread_index(e.get("tid", 0)) for e in ev], np.int16),
        "depth": int64_column([e.get("depth", 0) for e in ev], "depth", where).astype(np.int16),
    }
    if n and "shapes" in ev[0]:
        cols["shape"] = np.array([b.shape(e.get("shapes")) for e in ev], np.int32)
    for name in ("flops", "bytes", "mem_bytes", "device_ns"):
        if n and name in ev[0]:
            cols[name] = int64_column([e.get(name, -1) for e in ev], name, where)
    meta = {i: e["metadata"] for i, e in enumerate(ev) if e.get("metadata")}
    counters = {k: (c["t_ns"], c["values"]) for k, c in (data.get("counters") or {}).items()}
    run = run_from(data.get("run", {}), b.store(cols, meta), counters)
    if data.get("samples") is not None:
        from everyo.profiler.samples import SampleStore

        run.samples = SampleStore.from_json(data["samples"])
    return run


def _checked_events(events: list) -> list[dict]:
    """The events array with its required fields checked (raises :class:`Malformed`)."""
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            raise Malformed(f"item {i} is {str(e)[:40]!r}, not an event object")
        where = f"event {i} ({str(e.get('name', ''))[:60]!r})"
        if not isinstance(e.get("name"), str):
            raise Malformed(f"{where} has no 'name' string")
        if not isinstance(e.get("metadata", {}), dict):
            raise Malformed(f"{where} has a 'metadata' that is not an object")
    return events


def _from_events(events: list, label: str) -> Run:
    """The events array (``export_json``'s default, and the reference EveryO's files)."""
    ev = _checked_events(events)
    n = len(ev)
    b = Builder()
    ours = n > 0 and "row" in ev[0]  # everyo's own: times already count from the run start
    where = _where(ev)
    start = int64_column([e.get("start_ns") for e in ev], "start_ns", where)
    if not ours and n:
        start -= start.min()  # the reference writes perf_counter_ns(): an arbitrary origin
    cols = {
        "start_ns": start,
        "dur_ns": int64_column([e.get("duration_ns") for e in ev], "duration_ns", where),
        "key": np.array(
            [b.key(e.get("kind", "user"), e["name"], e.get("path", "")) for e in ev], np.int32
        ),
        "thread": np.array([b.thread_index(e.get("thread_id", 0)) for e in ev], np.int16),
    }
    if ours:
        depth = int64_column([e.get("depth", 0) for e in ev], "depth", where)
        cols["depth"] = depth.astype(np.int16)
    else:
        tids = cols["thread"].astype(np.int64)
        cols["depth"], _ = nesting(tids, cols["start_ns"], cols["start_ns"] + cols["dur_ns"])
    if any("shapes" in e for e in ev):
        cols["shape"] = np.array([b.shape(e.get("shapes") or None) for e in ev], np.int32)
    for name in ("flops", "mem_bytes", "device_ns"):
        if any(name in e for e in ev):
            values = [-1 if e.get(name) is None else e[name] for e in ev]
            cols[name] = int64_column(values, name, where)
    meta = {}
    for i, e in enumerate(ev):
        m = dict(e.get("metadata") or {})
        if "shapes" in e and m.get("input_shapes") == (input_shapes(e["shapes"] or "") or []):
            del m["input_shapes"]  # derived from the shapes column again when read
        if m:
            meta[i] = m
    header = {"label": label}
    if n and isinstance(ev[0].get("process_id"), int):
        header["process_id"] = ev[0]["process_id"]
    return run_from(header, b.store(cols, meta), {})


def _parse(data, label: str) -> Run:
    if isinstance(data, dict) and data.get("format") == "everyo.raw":
        return _from_raw(data)
    if isinstance(data, dict) and "traceEvents" in data:
        return from_chrome(data)
    if isinstance(data, list):
        first = data[0] if data else {}
        if isinstance(first, dict) and "ph" in first:  # the JSON-array form of Chrome traces
            return from_chrome({"traceEvents": data})
        return _from_events(data, label)
    raise Malformed(
        "neither an events array, an everyo raw export nor a Chrome trace (a JSON "
        "object with 'traceEvents')"
    )


def read_run(path) -> Run:
    """Read a file written by ``export_json`` (either format) or a Chrome trace."""
    data = _read_json(path)
    try:
        return _parse(data, Path(path).name)
    except Malformed as exc:
        raise EveryOExportError(f"cannot read {path}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise EveryOExportError(f"cannot read {path}: the file is damaged ({what})") from exc
