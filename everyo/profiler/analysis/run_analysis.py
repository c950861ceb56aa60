"""Pure analysis of a run: summary, self time, call tree, diff. Vectorised (no per-event loops).

Every function takes a ``Run``, an ``EventBatch`` or a ``Profiler`` and returns plain data.
"""

from __future__ import annotations

import numpy as np

from everyo.errors import EveryOProfilerError
from everyo.profiler.analysis import schema
from everyo.profiler.analysis.aggregates import Aggregates, Groups
from everyo.profiler.analysis.step_stats import StepStats, step_ends, step_spans
from everyo.profiler.analysis.summary_table import SummaryTable
from everyo.profiler.storage.batch import EventBatch

GROUP_BY, SORT_KEYS, TREE_BY = schema.GROUP_BY, schema.SORT_KEYS, schema.TREE_BY  # re-exported


def _resolve(source) -> tuple[EventBatch, int, object]:
    """``(batch, wall_ns, run or None)`` for a Run, an EventBatch or a Profiler."""
    if isinstance(source, EventBatch):
        wall = (
            int((source.start_ns + source.dur_ns).max() - source.start_ns.min())
            if len(source)
            else 0
        )
        return source, wall, None
    run = getattr(source, "run", source)  # a Profiler holds its run
    if run is None or not hasattr(run, "snapshot"):
        raise EveryOProfilerError(f"expected a Run, EventBatch or Profiler, got {source!r}")
    return run.snapshot(), int(run.wall_ns), run


def self_times(batch: EventBatch) -> np.ndarray:
    """Self time of each row: its duration minus its children's (int64 ns;
    ``batch.self_ns``)."""
    return batch.self_ns.copy()


def inclusive(batch: EventBatch, values: np.ndarray | None, ops_fixed: bool = True):
    """Sum values up the tree (inclusive totals per row).

    With ``ops_fixed`` an op with a known value keeps it and does not add its sub-ops (an op
    implemented with other ops would otherwise count twice). Negative values count as unknown.
    """
    if values is None:
        return None
    n = len(batch)
    if ops_fixed:
        is_op = np.array([k[0] == "op" for k in batch.keys] or [False])[batch.key]
        fixed = is_op & (values >= 0)
    else:
        fixed = np.zeros(n, bool)
    incl = np.maximum(values, 0).astype(np.float64)
    idx, ok = batch.parent_index()
    for d in range(int(batch.depth.max()) if n else 0, 0, -1):
        rows = np.nonzero(ok & (batch.depth == d))[0]
        if len(rows):
            add = np.bincount(idx[rows], weights=incl[rows], minlength=n)
            incl += np.where(fixed, 0.0, add)
    return incl


def _aggregate(batch: EventBatch, group_by: str) -> tuple[Groups, np.ndarray]:
    """The batch through the aggregation kernel (the live table's): its groups and each row's
    group index."""
    agg = Aggregates()  # slots per key, and per shape only where the groups need them
    slot = agg.add(
        batch.dur_ns, batch.self_ns, batch.key, batch.shape_id if group_by == "shape" else None
    )
    groups = agg.groups(batch.keys, group_by)
    return groups, groups.slot_group[slot]


def _medians(g: np.ndarray, dur: np.ndarray, calls: np.ndarray) -> np.ndarray:
    """Median duration per group, from one sort of (group, duration) keys."""
    dur = np.maximum(dur, 0)
    span = int(dur.max()) + 1 if len(dur) else 1
    if span * (int(g.max()) + 1) < (1 << 62):
        sd = np.sort(g * span + dur) % span  # one int64 sort instead of a lexsort
    else:
        sd = dur[np.lexsort((dur, g))]
    starts = np.cumsum(calls) - calls
    return (sd[starts + (calls - 1) // 2] + sd[starts + calls // 2]) / 2.0


_check = schema.check_choice


def summarize(
    source,
    group_by: str = "name",
    sort_by: str = "total_ms",
    descending: bool = True,
    top: int | None = None,
) -> SummaryTable:
    """Aggregate events into rows: one per (kind, name), (kind, path) or (kind, name, shapes).

    Rows hold ``name, kind, calls, total_ms, mean_ms, max_ms, min_ms, median_ms, std_ms,
    self_ms, share`` (``total_ms`` / the run's wall time, in [0, 1]; see
    :mod:`everyo.profiler.analysis.schema`), plus ``path`` (name grouping, when one path),
    ``shapes`` (shape grouping), ``flops``/``gflops`` (``record_ops``), ``mem_bytes``
    (``profile_memory``) and ``device_ms``/``host_only`` (CUDA timing).
    """
    _check(group_by, GROUP_BY, "group_by")
    _check(sort_by, SORT_KEYS, "sort_by")
    if top is not None and (not isinstance(top, int) or top < 1):
        raise EveryOProfilerError(f"top={top!r}: use a whole number >= 1 or None")
    batch, wall, run = _resolve(source)
    notes = run_notes(run)
    if len(batch) == 0:
        return SummaryTable([], group_by=group_by, wall_ms=wall / 1e6, notes=notes, run=run)
    groups, g = _aggregate(batch, group_by)
    rows = groups.rows(batch.keys, batch.shape_table, wall)
    _spread_columns(batch.dur_ns, g, groups, rows)
    _extra_columns(batch, g, len(groups), rows, notes)
    if rows and sort_by not in rows[0]:
        raise EveryOProfilerError(
            f"sort_by={sort_by!r} needs a column this run lacks "
            f"(use record_ops/profile_memory); have {', '.join(rows[0])}"
        )
    rows.sort(key=lambda r: r[sort_by], reverse=descending)
    return SummaryTable(
        rows[:top] if top else rows, group_by=group_by, wall_ms=wall / 1e6, notes=notes, run=run
    )


def _spread_columns(dur, g, groups: Groups, rows: list[dict]) -> None:
    """``median_ms`` and ``std_ms``: what needs every duration, so only the exact table has."""
    calls = groups.calls
    mean = groups.total_ns / np.maximum(calls, 1)
    var = np.bincount(g, weights=(dur - mean[g]) ** 2, minlength=len(calls))
    std = np.sqrt(var / np.maximum(calls, 1))
    for row, med, sd in zip(rows, (_medians(g, dur, calls) / 1e6).tolist(), (std / 1e6).tolist()):
        row["median_ms"], row["std_ms"] = med, sd


def _extra_columns(batch, g, G, rows, notes) -> None:
    flops = inclusive(batch, batch.flops)
    if flops is not None:
        f = np.bincount(g, weights=flops, minlength=G)
        moved = np.bincount(g, weights=inclusive(batch, batch.bytes), minlength=G)
        for i, row in enumerate(rows):
            row["flops"] = int(f[i])
            row["bytes"] = int(moved[i])
            row["gflops"] = float(f[i]) / (row["total_ms"] * 1e6) if row["total_ms"] > 0 else 0.0
    if batch.mem_bytes is not None:
        # each array is counted once, by the innermost event that returned it
        inner = inclusive(batch, batch.mem_bytes, ops_fixed=False)
        mem = np.bincount(g, weights=inner, minlength=G)
        for i, row in enumerate(rows):
            row["mem_bytes"] = int(mem[i])
    if batch.device_ns is not None:
        _device_columns(batch, g, G, rows, notes)


def _device_columns(batch, g, G, rows, notes) -> None:
    dev = batch.device_ns
    timed = dev >= 0
    dev_ms = np.bincount(g, weights=np.where(timed, dev, 0), minlength=G) / 1e6
    has = np.bincount(g, weights=timed, minlength=G) > 0
    gpu_used = bool(timed.any())
    for i, row in enumerate(rows):
        row["device_ms"] = float(dev_ms[i]) if has[i] else None
        row["host_only"] = gpu_used and not has[i]
    if gpu_used:
        notes.append(
            "* host time only: GPU work launched in these events may finish later "
            "(device_ms is measured with CUDA events for module calls)"
        )


def run_notes(run) -> list[str]:
    """What a reader of the run's numbers should know: skipped warmup events, a failure, a
    machine that was busy or contended while it recorded (a quiet one goes without saying,
    unless a thread limit was set, or the threads outnumbered the usable cores: the figures are
    then those of that many threads, taking turns in the second case), and that PyTorch's events
    on CUDA are host times."""
    notes = []
    state = getattr(run, "machine_state", None)
    limited = state is not None and (
        state.threads_applied is not None
        or max(state.blas_threads or 1, state.openmp_threads or 1) > state.usable_cores
    )
    if state is not None and (state.verdict in ("busy", "contended") or limited):
        notes.append(
            state.line()
            + (": times are slower than on a quiet machine" if state.verdict == "busy" else "")
            + (": these times are not to be trusted" if state.verdict == "contended" else "")
        )
    if run is not None and getattr(run, "skipped", 0):
        notes.append(f"{run.skipped} first events skipped by warmup={run.options.get('warmup')}")
    if run is not None and run.status == "failed":
        notes.append(f"the profiled code failed ({run.error}); events up to the failure are shown")
    framework = (getattr(run, "options", None) or {}).get("torch")
    if isinstance(framework, dict) and framework.get("cuda"):  # (everyo.profiler.torch's notes)
        notes.append(str(framework.get("times")))
    return notes


def top_self(source, k: int = 3) -> SummaryTable:
    """The ``k`` groups (by name) with the most self time: where the time really goes."""
    return summarize(source, sort_by="self_ms", top=k)


def step_bounds(source) -> tuple[np.ndarray, np.ndarray, str]:
    """Start and end (ns from the run's start) of each training step, and where they came from.

    Explicit marks win: a run whose code called ``profiler.step()`` has ``run.step_ns``, and
    step ``k`` runs from mark ``k - 1`` to mark ``k`` (source ``"profiler.step()"``). Otherwise
    each optimizer event (``SGD.step``, kind ``"optimizer"``) ends a step, which starts where
    the previous one ended (source ``"optimizer"``). The first step starts at the first
    recorded event (0 when there is none, never after its own end). No steps: two empty arrays
    and ``""``. An ``EventBatch`` has no marks, only optimizer events.

    Examples
    --------
    >>> import everyo.profiler as ep
    >>> with ep.profile(label="step_bounds") as p:
    ...     for _ in range(2):
    ...         p.step()
    >>> starts, ends, source = ep.analysis.step_bounds(p.run)
    >>> len(ends), source
    (2, 'profiler.step()')
    """
    batch, _, run = _resolve(source)
    first = int(batch.start_ns.min()) if len(batch) else 0
    ends, origin = step_ends(batch, getattr(run, "step_ns", None) if run is not None else None)
    return (*step_spans(ends, first), origin)


def step_summary(starts_ns, ends_ns, source: str) -> dict | None:
    """Count, mean, median and p95 duration of the steps, and the typical and extreme ones.

    Returns ``None`` when there are no steps, else ``count``, ``source``, ``mean_ms``,
    ``median_ms``, ``p95_ms`` (nearest rank: each is an actual step's duration),
    ``first_start_ms`` (where step 0 starts; step ``k`` starts where step ``k - 1`` ends) and four
    steps, each ``index`` (0-based), ``start_ms``, ``end_ms``, ``dur_ms``: ``median`` and
    ``p95`` (the step of that duration; the first on ties), ``slowest`` and ``fastest``.
    Plain Python numbers.

    >>> step_summary([0, 10_000_000], [10_000_000, 30_000_000], "optimizer")["slowest"]
    {'index': 1, 'start_ms': 10.0, 'end_ms': 30.0, 'dur_ms': 20.0}
    """
    return StepStats().add_spans(starts_ns, ends_ns).summary(source)


def call_tree(source, by: str = "path") -> list[dict]:
    """The call tree aggregated by label, as a flat list of nodes for an icicle chart.

    Each node: ``id`` (``"Sequential/0"``), ``parent`` (an id, ``""`` for roots), ``label``,
    ``name``, ``path``, ``kind``, ``total_ns``, ``self_ns``, ``calls``. Children are listed
    after their parents. With ``by="path"`` a module's label is its path (class name at the root).
    """
    _check(by, TREE_BY, "by")
    batch, _, _ = _resolve(source)
    n = len(batch)
    if n == 0:
        return []
    # one label per (kind, text); a node is (parent node, label), its fields from a key
    texts: dict[tuple[str, str], int] = {}
    rep: list[int] = []
    key_label = []
    for k, (kind, name, path) in enumerate(batch.keys):
        text = (path or name) if by == "path" else name
        if kind == "backward" and by == "path" and path:
            text += " (backward)"  # distinct from the forward node of the same path
        if (kind, text) not in texts:
            texts[(kind, text)] = len(rep)
            rep.append(k)
        key_label.append(texts[(kind, text)])
    label_text = [t for _, t in texts]
    lab = np.array(key_label or [0], np.int64)[batch.key]
    idx, has_parent = batch.parent_index()
    node = np.full(n, -1, np.int64)
    pairs: dict[tuple[int, int], int] = {}
    nodes: list[tuple[int, int]] = []  # node -> (parent node, label id)
    for d in range(int(batch.depth.max()) + 1):
        rows = np.nonzero(batch.depth == d)[0]
        if not len(rows):
            continue
        pnode = np.where(has_parent[rows], node[np.where(has_parent[rows], idx[rows], 0)], -1)
        combined = (pnode + 1) * (len(rep) + 1) + lab[rows]
        uc, inv = np.unique(combined, return_inverse=True)
        ids = []
        for c in uc.tolist():
            pair = (c // (len(rep) + 1) - 1, c % (len(rep) + 1))
            if pair not in pairs:
                pairs[pair] = len(nodes)
                nodes.append(pair)
            ids.append(pairs[pair])
        node[rows] = np.array(ids, np.int64)[inv]
    N = len(nodes)
    total = np.bincount(node, weights=batch.dur_ns, minlength=N)
    selfs = np.bincount(node, weights=batch.self_ns, minlength=N)
    calls = np.bincount(node, minlength=N)
    out, id_text = [], []
    for i, (parent, label) in enumerate(nodes):
        kind, name, path = batch.keys[rep[label]]
        text = label_text[label]
        ident = text if parent < 0 else f"{id_text[parent]}/{text}"
        id_text.append(ident)
        out.append(
            {
                "id": ident,
                "parent": "" if parent < 0 else id_text[parent],
                "label": text,
                "name": name,
                "path": path,
                "kind": kind,
                "total_ns": int(total[i]),
                "self_ns": int(selfs[i]),
                "calls": int(calls[i]),
            }
        )
    return out


def _row_key(row: dict) -> tuple:
    """A summary row's group: ``(kind, name)``, with the input shapes when grouped by shape."""
    return (
        (row["kind"], row["name"], row["shapes"]) if "shapes" in row else (row["kind"], row["name"])
    )


def call_durations(source, group_by: str = "name") -> dict[tuple, np.ndarray]:
    """Every call's duration (int64 ns, sorted) per group, keyed as :func:`diff` keys rows:
    ``(kind, name)``, or ``(kind, name, shapes)`` by shape. What a noise-aware verdict on a
    group's per-call time is computed from (``everyo_lab.compare``)."""
    _check(group_by, GROUP_BY, "group_by")
    batch, _, _ = _resolve(source)
    if len(batch) == 0:
        return {}
    groups, g = _aggregate(batch, group_by)
    order = np.lexsort((batch.dur_ns, g))
    parts = np.split(np.asarray(batch.dur_ns, np.int64)[order], np.cumsum(groups.calls)[:-1])
    if group_by != "shape":
        return {tuple(label): part for label, part in zip(groups.labels, parts)}
    table = batch.shape_table + [""]
    return {
        (*label, table[sid]): part
        for label, sid, part in zip(groups.labels, groups.shape.tolist(), parts)
    }


def diff(run_a, run_b, by: str = "name") -> SummaryTable:
    """Compare two runs group by group (``by="name"``, ``"path"`` or ``"shape"``); biggest
    change of total time first.

    Rows: ``name, kind, calls_a, calls_b, total_ms_a, total_ms_b, delta_ms, ratio`` (b / a),
    ``self_ms_a, self_ms_b, mean_ms_a, mean_ms_b``, and ``path`` (the module path, when one) or
    ``shapes`` (by shape).
    """
    _check(by, GROUP_BY, "by")
    a = {_row_key(r): r for r in summarize(run_a, group_by=by)}
    b = {_row_key(r): r for r in summarize(run_b, group_by=by)}
    rows = []
    for key in list(a) + [k for k in b if k not in a]:
        ra, rb = a.get(key, {}), b.get(key, {})
        ta, tb = ra.get("total_ms", 0.0), rb.get("total_ms", 0.0)
        row = {
            "name": key[1],
            "kind": key[0],
            "calls_a": ra.get("calls", 0),
            "calls_b": rb.get("calls", 0),
            "total_ms_a": ta,
            "total_ms_b": tb,
            "delta_ms": tb - ta,
            "ratio": tb / ta if ta > 0 else None,
            "self_ms_a": ra.get("self_ms", 0.0),
            "self_ms_b": rb.get("self_ms", 0.0),
            "mean_ms_a": ra.get("mean_ms", 0.0),
            "mean_ms_b": rb.get("mean_ms", 0.0),
        }
        if by == "shape":
            row["shapes"] = key[2]
        else:
            row["path"] = rb.get("path") or ra.get("path") or ""
        rows.append(row)
    rows.sort(key=lambda r: abs(r["delta_ms"]), reverse=True)
    cols = [
        "name",
        "kind",
        "calls_a",
        "calls_b",
        "total_ms_a",
        "total_ms_b",
        "delta_ms",
        "ratio",
        "self_ms_a",
        "self_ms_b",
    ]
    return SummaryTable(rows, group_by=by, columns=cols)
