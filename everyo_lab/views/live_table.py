"""Summary-table aggregates kept up to date batch by batch while a run records.

:class:`LiveTable` keeps, per interned ``(kind, name, path)`` key and shape, the calls, total,
self, smallest and largest durations of every event fed so far. Feeding a batch costs
O(batch); reading rows costs O(distinct keys), whatever the number of events already seen.

Self time needs each event's children. Rows of one thread arrive in post-order (children
before their parent), so a child whose parent has not finished yet leaves its duration in a
per-(thread, depth) pending sum, which the next event one level up on that thread takes as
(part of) its children's total: the same parent the profiler's ``postorder_parents`` assigns
on the whole run, so the sums equal ``summarize`` on the snapshot exactly.

Median and standard deviation need every duration (or a second pass), so live rows carry
``None`` for ``median_ms`` and ``std_ms``; the final, exact table has them. Per-op FLOPs, bytes,
memory and device times are inclusive sums up the call tree and are likewise left to the final
table.
"""

from __future__ import annotations

import numpy as np

from everyo.errors import EveryOProfilerError
from everyo.profiler.loops import LOOPS

__all__ = ["LiveTable"]

_I64_MAX = np.iinfo(np.int64).max
_SHAPE_SPAN = 1 << 23  # more than store.MAX_SHAPES + 1: (key, shape) packs into one int64
_MAX_LOOKUP = 1 << 22  # largest (keys x shapes) lookup table kept


class LiveTable:
    """Incremental per-(key, shape) duration aggregates of a growing run."""

    def __init__(self):
        self._slots: dict[int, int] = {}  # packed (key, shape + 1) -> slot
        self._lookup = np.full((0, 0), -1, np.int64)  # [key, shape + 1] -> slot
        self._slot_pairs: list[tuple[int, int]] = []  # slot -> (key id, shape id or -1)
        self.calls = np.zeros(0, np.int64)
        self.total_ns = np.zeros(0, np.int64)
        self.self_ns = np.zeros(0, np.int64)
        self.min_ns = np.zeros(0, np.int64)
        self.max_ns = np.zeros(0, np.int64)
        self._pending: dict[tuple[int, int], int] = {}  # (thread, depth) -> children's ns
        self.has_shapes = False

    def feed(self, dur, key, thread, depth, parent_offset, shape=None) -> np.ndarray:
        """Add a batch; return each row's self time (ns).

        ``parent_offset`` is each row's parent as an index into this batch (-1: not in it);
        ``thread`` small thread indices; ``shape`` shape ids (-1: none) or ``None``.
        """
        own = dur - self._children_ns(dur, thread, depth, parent_offset)
        if shape is not None:
            self.has_shapes = True
        slot = self._slots_of(key, np.zeros_like(key) if shape is None else shape + 1)
        if LOOPS is not None:  # one pass without the GIL
            LOOPS.table_add(
                *(np.ascontiguousarray(a, np.int64) for a in (slot, dur, own)),
                self.calls, self.total_ns, self.self_ns, self.min_ns, self.max_ns,
            )  # fmt: skip
            return own
        n_slots = len(self.calls)
        self.calls += np.bincount(slot, minlength=n_slots)
        # float sums of integer ns are exact below 2**53 ns (104 days) per batch
        self.total_ns += np.rint(np.bincount(slot, dur, n_slots)).astype(np.int64)
        self.self_ns += np.rint(np.bincount(slot, own, n_slots)).astype(np.int64)
        np.minimum.at(self.min_ns, slot, dur)
        np.maximum.at(self.max_ns, slot, dur)
        return own

    def _slots_of(self, key: np.ndarray, shape1: np.ndarray) -> np.ndarray:
        """Slot of each (key, shape id + 1), through a lookup table (no sort per batch)."""
        rows, cols = int(key.max()) + 1, int(shape1.max()) + 1
        table = self._lookup
        if rows > table.shape[0] or cols > table.shape[1]:
            shape = (max(rows, table.shape[0]), max(cols, table.shape[1]))
            if shape[0] * shape[1] > _MAX_LOOKUP:  # very many shapes: one sort per batch
                uniq, inverse = np.unique(key * _SHAPE_SPAN + shape1, return_inverse=True)
                return np.array([self._slot(p) for p in uniq.tolist()], np.int64)[inverse]
            grown = np.full(shape, -1, np.int64)
            grown[: table.shape[0], : table.shape[1]] = table
            table = self._lookup = grown
        slot = table[key, shape1]
        missing = slot < 0
        if missing.any():
            for p in np.unique(key[missing] * _SHAPE_SPAN + shape1[missing]).tolist():
                table[p // _SHAPE_SPAN, p % _SHAPE_SPAN] = self._slot(p)
            slot = table[key, shape1]
        return slot

    def _slot(self, packed: int) -> int:
        slot = self._slots.get(packed)
        if slot is None:
            slot = self._slots[packed] = len(self._slot_pairs)
            self._slot_pairs.append((packed // _SHAPE_SPAN, packed % _SHAPE_SPAN - 1))
            self.calls = np.append(self.calls, 0)
            self.total_ns = np.append(self.total_ns, 0)
            self.self_ns = np.append(self.self_ns, 0)
            self.min_ns = np.append(self.min_ns, _I64_MAX)
            self.max_ns = np.append(self.max_ns, -1)
        return slot

    def _children_ns(self, dur, thread, depth, parent_offset) -> np.ndarray:
        n = len(dur)
        child = np.zeros(n, np.int64)
        inside = parent_offset >= 0
        if LOOPS is not None:
            LOOPS.add_at(child, *(np.ascontiguousarray(a, np.int64) for a in (parent_offset, dur)))
        else:
            np.add.at(child, parent_offset[inside], dur[inside])
        lane = thread.astype(np.int64) * 65536 + depth
        # children from earlier batches: the first row one level up on their thread takes them
        # (few entries: the ancestors still running when the last batch was read)
        for (t, d), ns in list(self._pending.items()):
            hit = lane == t * 65536 + d
            row = int(hit.argmax())
            if hit[row]:
                child[row] += ns
                del self._pending[(t, d)]
        orphan = ~inside & (depth > 0)
        if orphan.any():  # parent still running: wait for it on (thread, depth - 1)
            uniq, inverse = np.unique(lane[orphan] - 1, return_inverse=True)
            sums = np.zeros(len(uniq), np.int64)
            np.add.at(sums, inverse, dur[orphan])
            for packed, ns in zip(uniq.tolist(), sums.tolist()):
                k = (packed // 65536, packed % 65536)
                self._pending[k] = self._pending.get(k, 0) + ns
        return child

    def aggregates(self, keys, group_by: str = "name") -> dict[tuple, dict]:
        """Integer aggregates per group label (the labels ``summarize`` groups by).

        Labels: ``(kind, name)`` by name, ``(kind, path or name)`` by path and
        ``((kind, name), shape id)`` by shape. Values: ``calls``, ``total_ns``, ``self_ns``,
        ``min_ns``, ``max_ns``.
        """
        if group_by == "shape" and not self.has_shapes:
            from everyo.profiler.schema import SHAPES_NOT_RECORDED

            raise EveryOProfilerError(f"group_by='shape': {SHAPES_NOT_RECORDED}")
        out: dict[tuple, dict] = {}
        for slot, (k, sid) in enumerate(self._slot_pairs):
            kind, name, path = keys[k]
            if group_by == "path":
                label = (kind, path or name)
            elif group_by == "shape":
                label = ((kind, name), sid)
            else:
                label = (kind, name)
            agg = out.setdefault(
                label, {"calls": 0, "total_ns": 0, "self_ns": 0, "min_ns": _I64_MAX, "max_ns": -1}
            )
            agg["calls"] += int(self.calls[slot])
            agg["total_ns"] += int(self.total_ns[slot])
            agg["self_ns"] += int(self.self_ns[slot])
            agg["min_ns"] = min(agg["min_ns"], int(self.min_ns[slot]))
            agg["max_ns"] = max(agg["max_ns"], int(self.max_ns[slot]))
        return out

    def rows(self, keys, shape_table, *, group_by: str = "name", wall_ns: int = 0) -> list[dict]:
        """Summary rows shaped like ``summarize``'s (median and std are ``None`` while live)."""
        rows = []
        for label, agg in self.aggregates(keys, group_by).items():
            kind, text = label[0] if group_by == "shape" else label
            calls, total = agg["calls"], agg["total_ns"]
            row = {
                "name": text,
                "kind": kind,
                "calls": calls,
                "total_ms": total / 1e6,
                "mean_ms": total / calls / 1e6,
                "max_ms": agg["max_ns"] / 1e6,
                "min_ms": agg["min_ns"] / 1e6,
                "median_ms": None,
                "std_ms": None,
                "self_ms": agg["self_ns"] / 1e6,
                "share": min(1.0, total / wall_ns) if wall_ns > 0 else 0.0,
            }
            if group_by == "shape":
                row["shapes"] = shape_table[label[1]] if label[1] >= 0 else ""
            rows.append(row)
        seen = sorted({k for k, _ in self._slot_pairs})
        _label_columns(rows, keys, group_by, [keys[k] for k in seen])
        return rows


def _label_columns(rows: list[dict], keys, group_by: str, seen: list) -> None:
    """``path`` (by name) or ``module`` and ``path`` (by path), as ``summarize`` labels them."""
    if group_by == "name":
        paths: dict[tuple, set] = {}
        for kind, name, path in seen:  # keys with events so far
            paths.setdefault((kind, name), set()).add(path)
        for row in rows:
            found = paths.get((row["kind"], row["name"]), {""})
            row["path"] = next(iter(found)) if len(found) == 1 else ""
    elif group_by == "path":
        origin = {(k[0], k[2] or k[1]): (k[1], k[2]) for k in keys}
        for row in rows:
            row["module"], row["path"] = origin.get((row["kind"], row["name"]), (row["name"], ""))
