"""``export_json``'s default format: a JSON array of event objects, as the reference EveryO writes.

Each object starts with the reference's six fields, in its order, then everyo's::

    [
    {"name": "Linear", "duration_ns": 5300, "start_ns": 1200, "process_id": 4711,
     "thread_id": 140245, "metadata": {"input_shapes": [[32, 4]]},
     "kind": "module", "path": "0", "depth": 1, "parent": 4, "row": 0, "shapes": "..."},
    ...
    ]

One object per line, in row (completion) order: an inner region comes before its outer region,
as in ``Profiler.events``. The run header, thread names and counters are not in this format:
``export_json(path, format="raw")`` keeps them (see ``raw``). Written in chunks of rows.
"""

from __future__ import annotations

import json
from pathlib import Path

from everyo.errors import EveryOConfigError
from everyo.fileio import atomic_open, dumps
from everyo.profiler.export._checks import check_metadata
from everyo.profiler.export.raw import batches, optional_fields
from everyo.profiler.export.raw import export_json as export_raw

CHUNK_ROWS = 100_000
FORMATS = ("events", "raw")
_OPTIONAL = ("flops", "mem_bytes", "device_ns")


def _metadata_texts(batch) -> list[str]:
    """Each row's ``metadata`` object as JSON text (what ``ProfileEvent.metadata`` holds)."""
    shape_meta = []
    if batch.shape_id is not None:
        shape_meta = [
            "{}" if s is None else dumps({"input_shapes": s}, separators=(",", ":"))
            for s in batch._input_shapes()
        ]
        module = [k[0] == "module" for k in batch.keys]
        none = '{"input_shapes":[]}'
        texts = [
            shape_meta[s] if s >= 0 else (none if module[k] else "{}")
            for s, k in zip(batch.shape_id.tolist(), batch.key.tolist())
        ]
    else:
        texts = ["{}"] * len(batch)
    for off, _ in batch.metadata_items():  # the few rows with metadata of their own
        texts[off] = dumps(batch.metadata_of(off), separators=(",", ":"))
    return texts


def _chunk_lines(batch) -> str:
    names = [json.dumps(name) for _, name, _ in batch.keys]
    tails = [
        f',"kind":{json.dumps(kind)},"path":{json.dumps(path)},' for kind, _, path in batch.keys
    ]
    pid = batch.process_id
    extra = optional_fields(batch, _OPTIONAL)
    return ",\n".join(
        f'{{"name":{names[k]},"duration_ns":{dur},"start_ns":{start},"process_id":{pid},'
        f'"thread_id":{tid},"metadata":{meta}{tails[k]}"depth":{depth},"parent":{parent},'
        f'"row":{row}{ext}}}'
        for k, dur, start, tid, meta, depth, parent, row, ext in zip(
            batch.key.tolist(),
            batch.dur_ns.tolist(),
            batch.start_ns.tolist(),
            batch.tid.tolist(),
            _metadata_texts(batch),
            batch.depth.tolist(),
            batch.parent.tolist(),
            batch.row.tolist(),
            extra,
        )
    )


def export_events(run, path, *, chunk_rows: int = CHUNK_ROWS) -> Path:
    """Write ``run``'s events as a JSON array to ``path`` (gzip when it ends in ``.gz``)."""
    check_metadata(run.store.metadata, path)
    with atomic_open(path, compress=None) as f:
        f.write("[\n")
        for lo, batch in batches(run, chunk_rows):
            f.write((",\n" if lo else "") + _chunk_lines(batch))
        f.write("\n]\n")
    return Path(path)


def export_json(run, path, *, format: str = "events", chunk_rows: int = CHUNK_ROWS) -> Path:
    """Write ``run`` as JSON: ``format="events"`` (the default, the reference's array of events)
    or ``format="raw"`` (everyo's richer file with the run header; see ``raw``)."""
    if format == "raw":
        return export_raw(run, path, chunk_rows=chunk_rows)
    if format != "events":
        raise EveryOConfigError(
            f"export_json(format={format!r}): use 'events' (a JSON array of events, the "
            "default) or 'raw' (everyo's file with the run header, threads and counters)"
        )
    return export_events(run, path, chunk_rows=chunk_rows)
