"""Raw event export: the run header plus one JSON object per event, streamed in chunks.

Layout::

    {"format": "everyo.raw", "version": 1, "run": {...header...},
     "threads": [[tid, name], ...], "counters": {name: {"t_ns": [...], "values": [...]}},
     "samples": {"frames": [[file, line, function], ...], "stacks": [[parent, frame], ...],
                 "columns": {"t_ns": [...], "tid": [...], "stack": [...], ...}},  (sample=)
     "events": [{"row": 0, "name": "Linear", "kind": "module", "path": "0",
                 "start_ns": 1200, "dur_ns": 5300, "depth": 1, "parent": 4, "tid": 140, ...}]}
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from everyo.fileio import atomic_open, dumps
from everyo.profiler.export._checks import check_metadata

FORMAT = "everyo.raw"
VERSION = 1
CHUNK_ROWS = 100_000
_OPTIONAL = ("flops", "bytes", "mem_bytes", "device_ns")


def _json_fields(**fields) -> str:
    # "%" is doubled: the text becomes part of a %-format template
    text = "".join(f"{json.dumps(k)}:{json.dumps(v)}," for k, v in fields.items())
    return text.replace("%", "%%")


def batches(run, chunk_rows: int):
    """``(first row, EventBatch)`` of at most ``chunk_rows`` rows each: memory stays bounded."""
    for lo in range(0, run.num_events, chunk_rows):
        yield lo, run.rows(lo, lo + chunk_rows)


def optional_fields(batch, names=_OPTIONAL) -> list[str]:
    """Each row's ``,"shapes":...`` and ``,"flops":...`` (etc.) text, for the columns recorded."""
    extra = [""] * len(batch)
    shapes = batch.shapes
    if shapes is not None:
        extra = [f',"shapes":{json.dumps(s)}' for s in shapes]
    for name in names:
        col = getattr(batch, name)
        if col is not None:
            extra = [f'{e},"{name}":{v}' for e, v in zip(extra, col.tolist())]
    return extra


def _chunk_lines(batch) -> str:
    keys = ['{"row":%d,' + _json_fields(name=n, kind=k, path=p) for k, n, p in batch.keys]
    head = np.array(keys or [""], dtype=object)[batch.key].tolist()
    fmt = '%s"start_ns":%d,"dur_ns":%d,"depth":%d,"parent":%d,"tid":%d%s}'.__mod__
    extra = optional_fields(batch)
    for off, meta in batch.metadata_items():
        extra[off] += ',"metadata":' + dumps(meta)
    rows = batch.row.tolist()
    return ",\n".join(
        map(
            fmt,
            zip(
                [h % r for h, r in zip(head, rows)],
                batch.start_ns.tolist(),
                batch.dur_ns.tolist(),
                batch.depth.tolist(),
                batch.parent.tolist(),
                batch.tid.tolist(),
                extra,
            ),
        )
    )


def export_json(run, path, *, chunk_rows: int = CHUNK_ROWS) -> Path:
    """Write ``run``'s header and raw events to ``path`` (gzip when it ends in ``.gz``)."""
    check_metadata(run.store.metadata, path)
    counters = {
        name: {"t_ns": t.tolist(), "values": v.tolist()} for name, (t, v) in run.counters.items()
    }
    with atomic_open(path, compress=None) as f:
        f.write(f'{{"format":"{FORMAT}","version":{VERSION},\n')
        f.write(f'"run":{dumps(run.header(), default=str)},\n')
        f.write(f'"threads":{json.dumps(run.store.threads)},\n')
        f.write(f'"counters":{json.dumps(counters)},\n')
        if getattr(run, "samples", None) is not None:
            f.write(f'"samples":{json.dumps(run.samples.to_json())},\n')
        f.write('"events":[\n')
        for lo, batch in batches(run, chunk_rows):
            f.write((",\n" if lo else "") + _chunk_lines(batch))
        f.write("\n]}\n")
    return Path(path)
