"""Chrome trace JSON (chrome://tracing, Perfetto): complete events, thread names, counters.

The file is written in chunks of rows, so memory stays bounded whatever the number of events.
Per chunk, everything that repeats (event name, category, thread, path, shapes) is formatted once
per distinct combination; each row then costs one ``%``-format of its times.
"""

from __future__ import annotations

import json

import numpy as np

from everyo.profiler.export._atomic import atomic_text
from everyo.profiler.export._checks import check_metadata

CHUNK_ROWS = 100_000
PID = 1


def _combo_tables(cols: dict, keys, shapes, threads):
    """Distinct (key, tid, shape) combos of a chunk -> (prefix, suffix) strings per row."""
    key = cols["key"].astype(np.int64)
    tid = cols["tid"].astype(np.int64)
    shape = cols["shape"].astype(np.int64) + 1 if "shape" in cols else np.zeros_like(key)
    combo = (key * (len(threads) + 1) + tid) * (len(shapes) + 2) + shape
    uniq, inv = np.unique(combo, return_inverse=True)
    prefixes, suffixes = [], []
    for c in uniq.tolist():
        rest, s = divmod(c, len(shapes) + 2)
        k, t = divmod(rest, len(threads) + 1)
        kind, name, path = keys[k]
        prefixes.append(
            f'{{"ph":"X","cat":{json.dumps(kind)},"name":{json.dumps(name)},"pid":{PID},'
            f'"tid":{threads[t][0]},"ts":'
        )
        args = {"path": path} if path else {}
        if s > 0:
            args["shapes"] = shapes[s - 1]
        suffixes.append(json.dumps(args, separators=(",", ":"))[1:-1])
    pre = np.array(prefixes, dtype=object)[inv].tolist()
    suf = np.array(suffixes, dtype=object)[inv].tolist()
    return pre, suf


def _numeric_args(cols: dict) -> list[str] | None:
    """Per-row args that vary per event (FLOPs, bytes, memory, device time), or None."""
    parts = []
    for name in ("flops", "bytes", "mem_bytes", "device_ns"):
        col = cols.get(name)
        if col is None:
            continue
        label = "device_ms" if name == "device_ns" else name
        vals = (col / 1e6).tolist() if name == "device_ns" else col.tolist()
        known = (col >= 0).tolist()
        parts.append([f',"{label}":{v}' if ok else "" for v, ok in zip(vals, known)])
    if not parts:
        return None
    return ["".join(p) for p in zip(*parts)]


def format_chunk(cols: dict, keys, shapes, threads, metadata: dict, first_row: int) -> str:
    """One chunk of rows as comma-separated Chrome trace event objects."""
    pre, suf = _combo_tables(cols, keys, shapes, threads)
    start = np.maximum(cols["start_ns"], 0)
    dur = np.maximum(cols["dur_ns"], 0)
    extra = _numeric_args(cols)
    if extra is not None:
        suf = [s + e if s else e[1:] for s, e in zip(suf, extra)]
    for off in range(len(suf)):
        meta = metadata.get(first_row + off) if metadata else None
        if meta:
            text = json.dumps({"metadata": meta}, separators=(",", ":"))[1:-1]
            suf[off] = f"{suf[off]},{text}" if suf[off] else text
    fmt = '%s%d.%03d,"dur":%d.%03d,"args":{%s}}'.__mod__
    return ",\n".join(
        map(
            fmt,
            zip(
                pre,
                (start // 1000).tolist(),
                (start % 1000).tolist(),
                (dur // 1000).tolist(),
                (dur % 1000).tolist(),
                suf,
            ),
        )
    )


def _metadata_events(run) -> list[str]:
    events = [
        {
            "ph": "M",
            "name": "process_name",
            "pid": PID,
            "tid": 0,
            "args": {"name": f"everyo: {run.label}"},
        }
    ]
    for i, (tid, name) in enumerate(run.store.threads):
        events.append(
            {"ph": "M", "name": "thread_name", "pid": PID, "tid": tid, "args": {"name": name}}
        )
        events.append(
            {
                "ph": "M",
                "name": "thread_sort_index",
                "pid": PID,
                "tid": tid,
                "args": {"sort_index": i},
            }
        )
    return [json.dumps(e) for e in events]


def _counter_events(run) -> list[str]:
    out = []
    for name, (t, v) in run.counters.items():
        for ts, value in zip(t.tolist(), v.tolist()):
            out.append(
                f'{{"ph":"C","name":{json.dumps(name)},"pid":{PID},"tid":0,'
                f'"ts":{ts // 1000}.{ts % 1000:03d},"args":{{"bytes":{value}}}}}'
            )
    return out


def export_chrome_trace(run, path, *, chunk_rows: int = CHUNK_ROWS) -> str:
    """Write ``run`` as a Chrome trace to ``path`` (gzip when it ends in ``.gz``); return it."""
    store = run.store
    check_metadata(store.metadata, path)
    n = len(store)
    header = json.dumps(run.header(), default=str)
    with atomic_text(path) as f:
        f.write('{"traceEvents":[\n')
        f.write(",\n".join(_metadata_events(run)))
        keys, shapes, threads = list(store.keys), list(store.shapes), list(store.threads)
        for lo in range(0, n, chunk_rows):
            cols = store.read(lo, lo + chunk_rows)
            f.write(",\n")
            f.write(format_chunk(cols, keys, shapes, threads, store.metadata, lo))
        counters = _counter_events(run)
        if counters:
            f.write(",\n" + ",\n".join(counters))
        f.write('\n],\n"displayTimeUnit":"ms",\n"otherData":{"everyo_format":"chrome",')
        f.write(f'"everyo_run":{header}}}}}\n')
    return str(path)
