"""The dashboard's "why" panel: the hot lines of a selected table row or flame-chart bar.

A selection comes from the browser as a plain dict (a row: its grouping and key; a bar: its
thread, depth, name and times) and is resolved here against the run into a :class:`Selection`.
:func:`panel` turns a :class:`~everyo.profiler.sampling.sampled_lines.HotLines` into what the panel
shows, every figure and label already written out (the browser lays it out and formats
nothing), bounded in size whatever the run: the top lines, the call tree pruned to the nodes
worth reading, and for one event the bars of its sampled frames over time.

>>> sel = Selection("work", kind="row", key=("user", "work"), group_by="name")
>>> unsampled_panel(sel)["state"]
'unsampled'
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from everyo.errors import EveryOProfilerError
from everyo.profiler.analysis.schema import GROUP_BY
from everyo.spelling import duration_text

__all__ = [
    "FRAME_BARS",
    "PANEL_LINES",
    "TREE_NODES",
    "Selection",
    "exact_hot_lines",
    "frame_bars",
    "tree_bars",
    "outside_selection",
    "outside_target",
    "panel",
    "row_key",
    "row_selection",
    "select",
    "unsampled_panel",
]

PANEL_LINES = 10
"""Hot lines the panel lists."""
TREE_NODES = 60
"""Call-tree nodes the panel holds at most (the heaviest first, each with its ancestors)."""
TREE_MIN_SHARE = 0.01
TREE_DEPTH = 16
FRAME_BARS = 400
"""Bars of an expanded event's sampled frames, at most (the widest)."""
FRAME_ROWS = 12
FRAME_SAMPLES = 4000  # drawn into an expansion at most: above, every k-th sample
TREE_BAR_MIN = 0.002
"""Call-tree nodes narrower than this share of the run are left out of its flame chart."""
LIVE_STATUS = "live: updated while the cell runs"
SAMPLE_HINT = (
    "This run has no stack samples, so it cannot say which lines made {what} slow. Profile "
    "the cell with %%everyo_profile --sample (in Python: profile(sample=1); on the command "
    "line: python -m everyo profile --sample) and select it again."
)


def share_text(share: float) -> str:
    """A share in [0, 1] as the dashboard writes it: ``"45.7 %"``."""
    return f"{share * 100:.1f} %"


@dataclass
class Selection:
    """What a row or bar selects in a run.

    ``key``: ``(kind, name)`` (rows grouped by name), ``(kind, path or name)`` (by path), with
    ``shape`` the shape text when grouped by shape; for one event (a bar) ``tid``, ``start_ns``,
    ``end_ns`` and ``row`` (its row in the run).
    """

    label: str
    kind: str = "row"
    key: tuple = ()
    group_by: str = "name"
    shape: str | None = None
    tid: int = -1
    start_ns: int = 0
    end_ns: int = 0
    row: int = -1

    @property
    def is_event(self) -> bool:
        return self.kind == "bar"

    @property
    def is_outside(self) -> bool:
        """The time outside every event (of a run without events: the whole run)."""
        return self.kind == "outside"

    def key_mask(self, keys: list) -> np.ndarray:
        """Which of a store's interned keys (``(kind, name, path, ...)``) the selection holds."""
        if self.group_by == "path":  # a path row: its module path, or the name without one
            return np.array([(k[0], k[2] or k[1]) == self.key for k in keys] or [False])
        return np.array([(k[0], k[1]) == self.key for k in keys] or [False])

    def rows(self, batch) -> np.ndarray:
        """Boolean mask of ``batch``'s rows the selection holds."""
        if not len(batch):
            return np.zeros(0, bool)
        mask = self.key_mask(batch.keys)[batch.key]
        if self.shape is not None:
            table = list(batch.shape_table) + [""]  # id -1 (no tensors) reads as ""
            ok = np.array([t == self.shape for t in table])
            sid = batch.shape_id if batch.shape_id is not None else np.full(len(batch), -1)
            mask &= ok[sid]
        return mask


def outside_selection(run) -> Selection:
    """The :class:`Selection` of the time outside every event of ``run`` (all of a run without
    events): what the panel opens on by itself when the run recorded no events."""
    from everyo.profiler.sampling.sampled_lines import OUTSIDE_LABEL, RUN_LABEL

    return Selection(RUN_LABEL if run.num_events == 0 else OUTSIDE_LABEL, "outside")


def outside_target(sel: Selection) -> dict:
    """The ``why_target`` of :func:`outside_selection` (what :func:`select` reads back)."""
    return {"type": "outside", "label": sel.label}


def row_selection(row: dict, group_by: str) -> Selection:
    """The :class:`Selection` of a report row (its table grouped by ``group_by``)."""
    shape = str(row.get("shapes") or "") if group_by == "shape" else None
    key = (str(row.get("kind") or ""), str(row["name"]))
    return Selection(str(row.get("label") or row["name"]), "row", key, group_by, shape)


def row_key(sel: Selection) -> dict:
    """What the browser matches a row selection by (its ``why_target``'s fields)."""
    key = {"group_by": sel.group_by, "kind": sel.key[0], "name": sel.key[1]}
    if sel.shape is not None:
        key["shapes"] = sel.shape
    return key


def select(run, target: dict, thread_ids: dict | None = None) -> Selection:
    """The :class:`Selection` of ``target``, what the browser sends when a row or bar is
    clicked: ``{"type": "row", "group_by", "kind", "name", "label", "shapes"?}`` or
    ``{"type": "bar", "thread", "depth", "start_ms", "kind", "name", "path", "label"}``
    (``thread``: the browser's thread index, ``thread_ids`` maps it to the OS id).

    Raises
    ------
    EveryOProfilerError
        For a target that is not one of these, or a bar whose event the run does not hold.
    """
    if not isinstance(target, dict) or target.get("type") not in ("row", "bar", "outside"):
        raise EveryOProfilerError(
            f"why_target={target!r}: select a table row or a flame-chart bar "
            '({"type": "row", "kind": ..., "name": ...} or {"type": "bar", ...})'
        )
    if target["type"] == "outside":
        return outside_selection(run)
    try:
        kind, name = str(target["kind"]), str(target["name"])
        label = str(target.get("label") or name)
        if target["type"] == "row":
            group_by = str(target.get("group_by") or "name")
            if group_by not in GROUP_BY:
                raise ValueError(group_by)
            shape = str(target.get("shapes") or "") if group_by == "shape" else None
            return Selection(label, "row", (kind, name), group_by, shape)
        thread, depth = int(target["thread"]), int(target["depth"])
        start_ms, path = float(target["start_ms"]), str(target.get("path") or "")
    except (KeyError, TypeError, ValueError) as exc:
        raise EveryOProfilerError(
            f"why_target={target!r} lacks or mangles {exc}: select the row or bar again"
        ) from None
    tids = {i: t for t, i in (thread_ids or {}).items()}
    if thread not in tids:
        raise EveryOProfilerError(f"the selected bar's thread ({thread}) is not in this run")
    return _event(run, label, (kind, name, path), tids[thread], depth, start_ms)


def _event(run, label: str, key: tuple, tid: int, depth: int, start_ms: float) -> Selection:
    """The event a bar shows: of its key, thread and depth, the one starting nearest."""
    batch = run.snapshot()
    ok = np.array([tuple(k[:3]) == key for k in batch.keys] or [False])
    rows = np.flatnonzero(ok[batch.key] & (batch.tid == tid) & (batch.depth == depth))
    if not len(rows):
        raise EveryOProfilerError(
            f"the selected bar ({label}) is not among this run's events: select it again"
        )
    row = int(rows[np.argmin(np.abs(batch.start_ns[rows] - start_ms * 1e6))])
    start = int(batch.start_ns[row])
    sel = Selection(label, "bar", key[:2], tid=tid, start_ns=start, row=row)
    sel.end_ns = start + int(batch.dur_ns[row])
    return sel


def exact_hot_lines(run, sel: Selection, hide: str | None):
    """:func:`everyo.profiler.hot_lines` of the selection, from the whole run."""
    from everyo.profiler.sampling.sampled_lines import hot_lines

    if sel.is_outside:
        return hot_lines(run, None, hide=hide, top=PANEL_LINES, outside=True)
    if sel.is_event:
        event = sel.row
    elif sel.group_by == "name" and sel.key[0] and _one_kind(run, sel.key[1]):
        event = sel.key[1]  # every event of that name: the vectorised selection
    else:
        rows = np.flatnonzero(sel.rows(run.snapshot())).tolist()
        if not rows:
            raise EveryOProfilerError(f"no event of {sel.label!r} in this run")
        event = rows
    return hot_lines(run, event, hide=hide, top=PANEL_LINES)


def _one_kind(run, name: str) -> bool:
    return len({k[0] for k in run.store.keys if k[1] == name}) <= 1


# -- the panel ----------------------------------------------------------------------------------
def unsampled_panel(sel: Selection) -> dict:
    """The panel of a run recorded without stack samples: how to get them."""
    return {
        **_head(sel),
        "state": "unsampled",
        "message": SAMPLE_HINT.format(what=repr(sel.label)),
    }


def error_panel(message: str) -> dict:
    return {"state": "error", "title": "why", "summary": "", "message": message}


def panel(hot, sel: Selection, *, live: bool = False, expand: dict | None = None) -> dict:
    """What the panel shows of ``hot`` (a :class:`HotLines` of ``sel``): plain data, every
    text written out. ``expand``: :func:`frame_bars` of one event."""
    from everyo.profiler.sampling.sampled_lines_text import plural, uneven_text

    every = f" at {hot.interval_ms:g} ms" if hot.interval_ms else ""
    calls = f"{plural(hot.calls, 'call')} · " if hot.scope == "event" else ""
    summary = (
        f"{calls}{duration_text(hot.event_ns)} · {plural(hot.samples, 'sample')}{every} "
        f"({hot.mode} time)"
    )
    uneven = uneven_text(hot)
    if uneven:
        summary += f"; {uneven}"
    out = {
        **_head(sel),
        "state": "lines" if hot.lines else "empty",
        "live": bool(live),
        "status": LIVE_STATUS if live else "",
        "summary": summary,
        "hide": hot.hide,
        "toggle": "fold everyo's frames" if hot.hide is None else "show everyo's frames",
        "folded": (
            "every frame shown"
            if hot.hide is None
            else "everyo's own frames folded (torch's too): time inside them counts for the line "
            "that called them"
        ),
        "headers": ["self", "total", "line", "source"],
        "function_headers": ["total", "self", "function"],
        "lines": [_line(r) for r in hot.lines],
        "functions": _functions(hot.tree) if hot.tree is not None else [],
        "tree": _tree(hot.tree) if hot.tree is not None else None,
        "expand": expand,
        "message": "",
    }
    if not hot.lines:
        out["message"] = (
            "no samples inside it yet"
            if live
            else "no samples inside it: it ran for less "
            "than the sampling interval; sample more often (--sample 0.2) or profile a longer run"
        )
    elif not sel.is_event and not sel.is_outside:
        out["hint"] = "select a bar of the flame chart to expand one event into its sampled frames"
    return out


def _head(sel: Selection) -> dict:
    if sel.is_outside:
        title = f"where the time went: {sel.label} (sampled call tree)"
    else:
        title = f"why {sel.label!r}" + (" (one event)" if sel.is_event else "")
    return {"title": title, "target": sel.label}


def _where(row: dict) -> str:
    from everyo.profiler.sampling.sampled_lines import place

    if not row["file"]:
        return row["function"]
    return place(row["file"], row["line"])


def _line(row: dict) -> dict:
    return {
        "self": share_text(row["self_share"]),
        "total": share_text(row["total_share"]),
        "where": _where(row),
        "function": row["function"],
        "source": row.get("source") or "",
        "file": f"{row['file']}:{row['line']}" if row["file"] else "",
        "bar": round(float(row["self_share"]), 4),
    }


def _functions(root: dict, top: int = 5) -> list[dict]:
    """The functions with the most time inside them (each counted once per call stack, so a
    recursive one is not counted twice), from the whole call tree."""
    from everyo.profiler.sampling.sampled_lines import place

    total: dict[tuple, int] = {}
    own: dict[tuple, int] = {}
    context = set()  # the callers every sample shares (the cell, the loop around the event)
    node = root
    while len(node["children"]) == 1 and node["children"][0]["total_ns"] == root["total_ns"]:
        node = node["children"][0]
        if node["self_ns"]:
            break
        context.add(id(node))

    def walk(node, seen: frozenset) -> None:
        key = (node["file"], node["function"])
        if node["file"] and id(node) not in context:
            own[key] = own.get(key, 0) + node["self_ns"]
            if key not in seen:
                total[key] = total.get(key, 0) + node["total_ns"]
                seen = seen | {key}
        for child in node["children"]:
            walk(child, seen)

    walk(root, frozenset())
    whole = max(root["total_ns"], 1)
    ranked = sorted(total, key=lambda k: -total[k])[:top]
    return [
        {
            "function": function,
            "where": place(file, None),
            "file": file,
            "total": share_text(total[(file, function)] / whole),
            "self": share_text(own.get((file, function), 0) / whole),
            "bar": round(total[(file, function)] / whole, 4),
        }
        for file, function in ranked
    ]


def _tree(root: dict) -> dict:
    """The call tree pruned to at most ``TREE_NODES`` nodes: those of ``TREE_MIN_SHARE`` or
    more, the heaviest kept first (a kept node's parent always is)."""
    keep: set[int] = set()
    frontier = [(-root["share"], 0, id(root), root, 0)]
    order = 0
    while frontier and len(keep) < TREE_NODES:
        _, _, key, node, depth = heapq.heappop(frontier)
        keep.add(key)
        if depth >= TREE_DEPTH:
            continue
        for child in node["children"]:
            if child["share"] >= TREE_MIN_SHARE:
                order += 1
                heapq.heappush(frontier, (-child["share"], order, id(child), child, depth + 1))

    def out(node) -> dict:
        kids = [out(c) for c in node["children"] if id(c) in keep]
        hidden = sum(1 for c in node["children"] if id(c) not in keep)
        return {
            "share": share_text(node["share"]),
            "where": _where(node),
            "function": node["function"],
            "source": node.get("source") or "",
            "bar": round(float(node["share"]), 4),
            "children": kids,
            "more": f"{hidden} smaller call{'s' if hidden != 1 else ''} not shown"
            if hidden
            else "",
        }

    return out(root)


# -- an event's sampled frames over time ---------------------------------------------------
def frame_bars(samples, sel: Selection, t_ns, stacks, wall_ns, hide: str | None) -> dict:
    """The expansion of one event: its samples' frames as nested bars over its time span.

    ``t_ns``, ``stacks``, ``wall_ns``: the event's samples (its thread, inside its span) in time
    order. A sample stands for the time since its thread's previous one (``wall_ns``); while
    consecutive samples share a frame it is one bar (as in the Chrome trace's sampled slices).
    The bars start at the deepest frame every sample shares (its callers are left out).
    Positions are fractions of the event's span; texts are written out.
    """
    from everyo.profiler.sampling.sampled_lines import Folding, place

    t_ns, stacks = np.asarray(t_ns, np.int64), np.asarray(stacks)
    span = max(sel.end_ns - sel.start_ns, 1)
    # above FRAME_SAMPLES samples, every k-th, standing for the time since the previous kept one
    every = max(1, -(-len(t_ns) // FRAME_SAMPLES))
    since = t_ns - np.asarray(wall_ns, np.int64)
    t_ns, stacks, since = t_ns[::every], stacks[::every], since[::every]
    if every > 1:
        since[1:] = t_ns[:-1]
    if not len(t_ns):
        return {"caption": "", "rows": 0, "bars": []}
    folding = Folding(samples.frames, hide)
    cache: dict[int, list] = {}
    for sid in np.unique(stacks).tolist():
        cache[sid] = folding.visible(samples.frames_of(sid))
    # from the deepest frame every sample shares (as hot_lines' tree): its callers are the
    # event's context, the same for every sample
    common = max(_common_prefix(list(cache.values())) - 1, 0)
    raw = _slices(since.tolist(), t_ns.tolist(), stacks.tolist(), cache, common)
    raw = [b for b in raw if b[0] < FRAME_ROWS]
    raw.sort(key=lambda b: b[1] - b[2])  # the widest first
    bars = []
    for depth, lo, hi, fid in raw[:FRAME_BARS]:
        lo, hi = max(lo, sel.start_ns), min(hi, sel.end_ns)
        if hi <= lo:
            continue
        file, line, function = samples.frames[fid]
        where = place(file, line)
        took = f"{duration_text(hi - lo)} ({share_text((hi - lo) / span)})"
        bars.append(
            {
                "row": depth,
                "left": round((lo - sel.start_ns) / span, 5),
                "width": round((hi - lo) / span, 5),
                "text": function,
                "title": f"{function} · {where} · {took}",
            }
        )
    bars.sort(key=lambda b: (b["row"], b["left"]))
    rows = 1 + max((b["row"] for b in bars), default=-1)
    return {
        "caption": (
            f"its sampled frames ({duration_text(span)}) are drawn in the flame chart, "
            "under its thread"
        ),
        "rows": rows,
        "bars": bars,
    }


def _common_prefix(stacks: list) -> int:
    if not stacks:
        return 0
    first, shortest = stacks[0], min(len(s) for s in stacks)
    n = 0
    while n < shortest and all(s[n] == first[n] for s in stacks):
        n += 1
    return n


def _slices(since, times, sids, cache, common) -> list:
    """``(depth, start, end, frame)`` of the bars: sample ``i`` covers ``[since[i], times[i]]``;
    a frame opens where the first sample it is in begins and closes where the first one it is
    not in begins (or at the end of the last sample before a gap)."""
    opened: list[tuple[int, int]] = []  # (frame, start) of the open bars, outermost first
    out = []
    last = None

    def close(keep: int, at: int) -> None:
        while len(opened) > keep:
            fid, begun = opened.pop()
            out.append((len(opened), begun, at, fid))

    for lo, t, sid in zip(since, times, sids):
        frames = cache[sid][common:]
        if last is not None and lo > last:  # a gap: what was open ended with the last sample
            close(0, last)
        lo = lo if last is None else max(lo, last)
        keep = 0
        while keep < len(opened) and keep < len(frames) and opened[keep][0] == frames[keep]:
            keep += 1
        close(keep, lo)
        opened.extend((fid, lo) for fid in frames[keep:])
        last = t
    if last is not None:
        close(0, last)
    return out


# -- the sampled call tree of a run without events, as a flame chart ------------------------
def tree_bars(tree: dict, wall_ns: int) -> dict:
    """The call tree of a run without events (``hot.tree`` of its panel) as the bars of its
    flame chart, in the expansion's form (:func:`frame_bars`) over the run's time ``[0,
    wall_ns]``: as pyinstrument draws it, each function as wide as its share of the samples,
    under its caller, the heaviest callee first (left), not in time order. Rows start with the
    root's children (the deepest frame every sample shares); at most :data:`FRAME_ROWS` rows and
    :data:`FRAME_BARS` bars (the widest kept), none narrower than :data:`TREE_BAR_MIN`.
    """
    whole = max(int(tree["total_ns"]), 1)
    raw = []  # (row, left share, node)

    def walk(node, row: int, left: float) -> None:
        for child in sorted(node["children"], key=lambda c: -c["total_ns"]):
            width = child["total_ns"] / whole
            if width >= TREE_BAR_MIN and row < FRAME_ROWS:
                raw.append((row, left, child))
                walk(child, row + 1, left)
            left += width

    walk(tree, 0, 0.0)
    raw.sort(key=lambda b: -b[2]["total_ns"])  # the widest first
    bars = []
    for row, left, node in raw[:FRAME_BARS]:
        where = _where(node)
        took = f"{duration_text(node['total_ns'])} ({share_text(node['total_ns'] / whole)})"
        bars.append(
            {
                "row": row,
                "left": round(left, 5),
                "width": round(node["total_ns"] / whole, 5),
                "text": node["function"],
                "title": f"{node['function']} · {where} · {took}",
            }
        )
    bars.sort(key=lambda b: (b["row"], b["left"]))
    return {
        "caption": (
            "its sampled call tree is drawn in the flame chart: each function as wide as its "
            "share of the samples, under its caller (the heaviest first, not in time order)"
        ),
        "rows": 1 + max((b["row"] for b in bars), default=-1),
        "bars": bars,
        "start_ms": 0.0,
        "end_ms": round(max(int(wall_ns), 1) / 1e6, 6),
    }
