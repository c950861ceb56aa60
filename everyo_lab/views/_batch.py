"""Reading runs and event batches: the few facts every view needs, computed once, vectorised."""

from __future__ import annotations

import numpy as np

from everyo_lab.views.colors import color_key

__all__ = [
    "as_batch",
    "as_run",
    "band_offsets",
    "color_codes",
    "key_color_codes",
    "lanes",
    "optional_column",
    "self_ns",
    "thread_name",
]


def as_batch(run_or_batch):
    """Return an ``EventBatch``: a run's snapshot, or the batch itself."""
    snapshot = getattr(run_or_batch, "snapshot", None)
    if callable(snapshot):
        return snapshot()
    return run_or_batch


def as_run(run_or_batch):
    """Return the run when given one (it has ``snapshot()``), else ``None``."""
    return run_or_batch if callable(getattr(run_or_batch, "snapshot", None)) else None


def optional_column(batch, name: str):
    """Return an optional column as a numpy array, or ``None`` when its option was off."""
    value = getattr(batch, name, None)
    if value is None:
        return None
    return value if isinstance(value, np.ndarray) else np.asarray(value, dtype=object)


def self_ns(batch) -> np.ndarray:
    """Self time of each row in nanoseconds (the batch's column, or the profiler's analysis)."""
    value = getattr(batch, "self_ns", None)
    if value is not None:
        return np.asarray(value, dtype=np.int64)
    from everyo.profiler.analysis import (
        run_analysis as analysis,  # lazily: views import fast and stay pure
    )

    return np.asarray(analysis.self_times(batch), dtype=np.int64)


def lanes(batch) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """Return each row's vertical lane and the (first lane, thread name) of every thread.

    One thread: the lane is the depth. Several threads: each thread gets a band of lanes as tall
    as its deepest stack, in order of first appearance, with an empty lane between bands.
    """
    depth = np.asarray(batch.depth, dtype=np.int64)
    tid = np.asarray(batch.tid)
    names = getattr(batch, "thread_names", None) or {}
    if len(tid) == 0:
        return depth, []
    uniq, first, inverse = np.unique(tid, return_index=True, return_inverse=True)
    if len(uniq) == 1:
        return depth, [(0, thread_name(names, int(uniq[0])))]
    max_depth = np.zeros(len(uniq), dtype=np.int64)
    np.maximum.at(max_depth, inverse, depth)
    rank = np.argsort(first, kind="stable")  # thread indices in order of first appearance
    offsets = np.empty(len(uniq), dtype=np.int64)
    offsets[rank] = band_offsets(max_depth[rank])
    bands = [(int(offsets[t]), thread_name(names, int(uniq[t]))) for t in rank]
    return depth + offsets[inverse], bands


def band_offsets(max_depth: np.ndarray) -> np.ndarray:
    """First lane of each thread's band, given each thread's deepest depth (in band order):
    each band as tall as its stack, with an empty lane between bands."""
    return np.concatenate(([0], np.cumsum(max_depth + 2)[:-1]))


def thread_name(names: dict, tid: int) -> str:
    """A thread's name for its band label (``"thread <id>"`` when it has none)."""
    return str(names.get(tid, f"thread {tid}"))


def key_color_codes(table) -> tuple[np.ndarray, list[str]]:
    """Each interned ``(kind, name, path)`` key's colour-key code, and the colour keys (module
    class name, else the kind), numbered in order of first appearance in ``table``."""
    seen: dict[str, int] = {}
    codes = [seen.setdefault(color_key(kind, name), len(seen)) for kind, name, *_ in table]
    return np.array(codes, dtype=np.int64), list(seen)


def color_codes(batch) -> tuple[np.ndarray, list[str]]:
    """Return each row's colour-key code and the keys (module class name, else the kind).

    Keys are numbered in order of first appearance. A profiler ``EventBatch`` carries interned
    ``(kind, name, path)`` ids (``key``/``keys``), so only the few distinct keys are looked at
    (the list may hold keys this batch does not use); other batches take one pass of a dict,
    which still beats sorting a million strings.
    """
    key_ids, table = getattr(batch, "key", None), getattr(batch, "keys", None)
    if isinstance(key_ids, np.ndarray) and isinstance(table, list | tuple) and len(table):
        per_key, keys = key_color_codes(table)
        return per_key[key_ids], keys
    seen = {}
    pairs = zip(np.asarray(batch.kind).tolist(), np.asarray(batch.name).tolist())
    codes = np.fromiter(
        (seen.setdefault(color_key(kind, name), len(seen)) for kind, name in pairs),
        dtype=np.int64,
        count=len(batch.kind),
    )
    return codes, [str(k) for k in seen]
