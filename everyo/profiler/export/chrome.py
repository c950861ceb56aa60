"""Chrome trace JSON (chrome://tracing, Perfetto): complete events, thread names, counters, and
the stack samples as slices of their own (``chrome_samples``).

The file is written in chunks of rows, so memory stays bounded whatever the number of events.
Per chunk, everything that repeats (event name, category, thread, path, shapes) is formatted once
per distinct combination, and the numbers of all rows are formatted at once by NumPy into
fixed-width fields padded with spaces (see ``_fixed``). Rows carrying metadata are written one by
one after their chunk. Events are therefore not in row order in the file; ``load`` restores it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from everyo.fileio import atomic_open, dumps
from everyo.profiler.export._checks import check_metadata
from everyo.profiler.export._fixed import (
    assemble,
    constant,
    exact_durations,
    fixed3,
    int_or_null,
    padded_table,
)
from everyo.profiler.export.chrome_samples import sample_events

CHUNK_ROWS = 100_000
PID = 1


def _combo_tables(cols: dict, keys, shapes, threads, pids):
    """Distinct (key, tid, shape) combos of a chunk: their prefix and args texts, and each row's.

    ``pids`` holds each thread's process id in the trace."""
    key = cols["key"].astype(np.int64)
    tid = cols["thread"].astype(np.int64)
    shape = cols["shape"].astype(np.int64) + 1 if "shape" in cols else np.zeros_like(key)
    combo = (key * (len(threads) + 1) + tid) * (len(shapes) + 2) + shape
    uniq, inv = np.unique(combo, return_inverse=True)
    prefixes, args = [], []
    for c in uniq.tolist():
        rest, s = divmod(c, len(shapes) + 2)
        k, t = divmod(rest, len(threads) + 1)
        kind, name, path = keys[k]
        prefixes.append(
            f'{{"ph":"X","cat":{json.dumps(kind)},"name":{json.dumps(name)},"pid":{pids[t]},'
            f'"tid":{threads[t][0]},"ts":'
        )
        fields = {"path": path} if path else {}
        if s > 0:
            fields["shapes"] = shapes[s - 1]
        args.append(json.dumps(fields, separators=(",", ":"))[1:-1])
    return prefixes, args, inv


NUMERIC_ARGS = (("flops", "flops"), ("bytes", "bytes"), ("mem_bytes", "mem_bytes"))


def format_chunk(cols: dict, keys, shapes, threads, skip=None, pids=None) -> bytes:
    """Rows of one chunk as Chrome trace events, each preceded by ``",\n"``, vectorised.

    Every row has the same byte layout (numbers and texts padded with spaces), so the whole
    chunk is assembled as one uint8 matrix. Rows in ``skip`` (a boolean mask) are left out.
    ``pids`` gives each thread's process (default: all in process ``PID``).
    """
    if skip is not None and skip.any():
        cols = {k: v[~skip] for k, v in cols.items()}
    n = len(cols["start_ns"])
    if n == 0:
        return b""
    pids = [PID] * len(threads) if pids is None else pids
    prefixes, args, inv = _combo_tables(cols, keys, shapes, threads, pids)
    numeric = [(label, cols[name]) for name, label in NUMERIC_ARGS if name in cols]
    parts = [
        constant(",\n", n),
        padded_table(prefixes)[inv],
        fixed3(cols["start_ns"]),
        constant(',"dur":', n),
        exact_durations(cols["start_ns"], cols["dur_ns"]),
        constant(',"args":{', n),
    ]
    sep = ""
    for label, values in numeric:
        parts += [constant(f'{sep}"{label}":', n), int_or_null(values)]
        sep = ","
    if "device_ns" in cols:
        dev = cols["device_ns"]
        parts += [constant(f'{sep}"device_us":', n), fixed3(dev)]
        sep = ","
        known = dev >= 0
        if not known.all():  # unknown device time: null, right-aligned in the same width
            field = parts[-1]
            field[~known] = np.frombuffer(b" " * (field.shape[1] - 4) + b"null", np.uint8)
    tails = [(sep + a if a else "") + "}}" for a in args]
    parts.append(padded_table(tails)[inv])
    return assemble(parts)


def format_rows(
    cols: dict, rows, keys, shapes, threads, metadata: dict, first_row: int, pids=None
) -> str:
    """The few rows with metadata, one JSON object each (each preceded by ``",\n"``)."""
    out = []
    for i in rows:
        kind, name, path = keys[int(cols["key"][i])]
        args = {"path": path} if path else {}
        if "shape" in cols and cols["shape"][i] >= 0:
            args["shapes"] = shapes[int(cols["shape"][i])]
        for col, label in NUMERIC_ARGS:
            if col in cols and cols[col][i] >= 0:
                args[label] = int(cols[col][i])
        if "device_ns" in cols and cols["device_ns"][i] >= 0:
            args["device_us"] = int(cols["device_ns"][i]) / 1000
        args["metadata"] = metadata[first_row + int(i)]  # NaN/inf as strings: see dumps
        start, dur = int(max(cols["start_ns"][i], 0)), int(max(cols["dur_ns"][i], 0))
        event = {
            "ph": "X",
            "cat": kind,
            "name": name,
            "pid": PID if pids is None else pids[int(cols["thread"][i])],
            "tid": threads[int(cols["thread"][i])][0],
        }
        head = json.dumps(event, separators=(",", ":"))[:-1]
        out.append(
            f',\n{head},"ts":{start // 1000}.{start % 1000:03d},'
            f'"dur":{exact_durations([start], [dur]).tobytes().decode().strip()},'
            f'"args":{dumps(args, separators=(",", ":"))}}}'
        )
    return "".join(out)


def thread_pids(run) -> list[int]:
    """Each thread's process in the trace: ``run.processes`` (a run merged from several
    workers: one process per worker), else the run's one process ``PID``."""
    processes = getattr(run, "processes", None) or {}
    return [processes.get(tid, (PID, ""))[0] for tid, _ in run.store.threads]


def _metadata_events(run, pids: list[int]) -> list[str]:
    names = {p: name for p, name in (getattr(run, "processes", None) or {}).values()}
    names[PID] = f"everyo: {run.label}"
    used = sorted(set(pids) | ({PID} if run.counters or not pids else set()))
    events = []
    for i, pid in enumerate(used):
        events.append(
            {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": names[pid]}}
        )
        if len(used) > 1:
            events.append(
                {"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": i}}
            )
    for i, ((tid, name), pid) in enumerate(zip(run.store.threads, pids)):
        events.append(
            {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}}
        )
        events.append(
            {
                "ph": "M",
                "name": "thread_sort_index",
                "pid": pid,
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


def export_chrome_trace(run, path, *, chunk_rows: int = CHUNK_ROWS) -> Path:
    """Write ``run`` as a Chrome trace to ``path`` (gzip when it ends in ``.gz``); return it."""
    store = run.store
    check_metadata(store.metadata, path)
    n = len(store)
    header = dumps(run.header(), default=str)
    with atomic_open(path, compress=None) as f:
        f.write('{"traceEvents":[\n')
        pids = thread_pids(run)
        f.write(",\n".join(_metadata_events(run, pids)))
        keys, shapes, threads = list(store.keys), list(store.shapes), list(store.threads)
        meta_rows = np.array(sorted(store.metadata), np.int64)
        for lo in range(0, n, chunk_rows):
            cols = store.read(lo, lo + chunk_rows)
            hi = lo + len(cols["start_ns"])
            mine = meta_rows[(meta_rows >= lo) & (meta_rows < hi)] - lo
            skip = None
            if len(mine):
                skip = np.zeros(hi - lo, bool)
                skip[mine] = True
            f.flush()
            f.buffer.write(format_chunk(cols, keys, shapes, threads, skip, pids))
            if len(mine):
                f.write(format_rows(cols, mine, keys, shapes, threads, store.metadata, lo, pids))
        counters = _counter_events(run)
        if counters:
            f.write(",\n" + ",\n".join(counters))
        pid_of = {tid: pid for (tid, _), pid in zip(threads, pids)}
        for part in sample_events(run, pid_of, PID):
            f.write(",\n" + ",\n".join(part))
        f.write('\n],\n"displayTimeUnit":"ms",\n"otherData":{"everyo_format":"chrome",')
        f.write(f'"everyo_run":{header}}}}}\n')
    return Path(path)
