"""The one aggregation kernel of the summary table: calls, total, self, smallest and largest
duration per group, for the exact summary and the live table alike.

:class:`Aggregates` keeps integer sums per interned ``(key, shape)`` slot. The exact summary
(:func:`everyo.profiler.analysis.run_analysis.summarize`) adds a whole run in one call; the live
dashboard feeds it the new rows of each refresh (:meth:`Aggregates.feed`), which costs O(new rows).
Both read their rows through :meth:`Aggregates.groups` and :meth:`Groups.rows`, so a live table at
the end of a run and the final table cannot disagree on these columns: the final table only adds
what needs every duration or the whole tree (median, standard deviation, FLOPs, bytes, memory,
device time).

Self time needs each event's children. Rows of one thread arrive in post-order (children
before their parent), so within a batch a child's parent is in the batch or still running; a
child whose parent has not finished leaves its duration in a per-(thread, depth) pending sum,
which the next event one level up on that thread takes as (part of) its children's total: the
parent the profiler's ``postorder_parents`` assigns on the whole run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from everyo import _compiled
from everyo.errors import EveryOProfilerError
from everyo.profiler.analysis import schema

LOOPS = _compiled.load("everyo.profiler.storage._cbatch")  # the compiled batch loops, or None

__all__ = ["Aggregates", "Groups", "children_ns"]

_I64_MAX = np.iinfo(np.int64).max
_SHAPE_SPAN = 1 << 23  # more than store.MAX_SHAPES + 1: (key, shape) packs into one int64
_MAX_LOOKUP = 1 << 22  # largest (keys x shapes) lookup table kept
_LANE = 65536  # (thread, depth) packs into thread * _LANE + depth (depth is an int16 column)


def children_ns(dur: np.ndarray, parent_offset: np.ndarray) -> np.ndarray:
    """Each row's children's total duration (int64 ns), its children being the rows whose
    ``parent_offset`` (an index into the same rows, -1: none there) names it. The one rule of
    self time: a row's duration minus this."""
    child = np.zeros(len(dur), np.int64)
    if LOOPS is not None:
        LOOPS.add_at(child, *(np.ascontiguousarray(a, np.int64) for a in (parent_offset, dur)))
    else:
        inside = parent_offset >= 0
        np.add.at(child, parent_offset[inside], np.asarray(dur, np.int64)[inside])
    return child


def share(ns: float, wall_ns: float) -> float:
    """A time over the run's wall time, in [0, 1] (0 without a wall time): the one definition
    of a share (docs/glossary.md), a summary row's (its inclusive time) and a hot spot's (its
    self time) alike."""
    return min(1.0, max(0.0, ns / wall_ns)) if wall_ns > 0 else 0.0


@dataclass(frozen=True)
class Groups:
    """Integer aggregates per group, groups in label order (by the first key interned with
    the label, then by shape id), and each slot's group (``slot_group``)."""

    group_by: str
    labels: list  # per group: (kind, text), text the name or (by path) the path or name
    shape: np.ndarray  # per group: shape id (-1: none, or not grouped by shape)
    slot_group: np.ndarray
    calls: np.ndarray
    total_ns: np.ndarray
    self_ns: np.ndarray
    min_ns: np.ndarray
    max_ns: np.ndarray
    keys_seen: list  # the (kind, name, path) keys with rows

    def __len__(self) -> int:
        return len(self.labels)

    def rows(self, keys, shape_table, wall_ns: int) -> list[dict]:
        """Summary rows (``summarize``'s columns; ``median_ms`` and ``std_ms`` ``None``)."""
        rows = []
        for (kind, text), n, t, s, lo, hi in zip(
            self.labels,
            *(
                a.tolist()
                for a in (self.calls, self.total_ns, self.self_ns, self.min_ns, self.max_ns)
            ),
        ):
            rows.append(
                {
                    "name": text,
                    "kind": kind,
                    "calls": n,
                    "total_ms": t / 1e6,
                    "mean_ms": t / n / 1e6,
                    "max_ms": hi / 1e6,
                    "min_ms": lo / 1e6,
                    "median_ms": None,
                    "std_ms": None,
                    "self_ms": s / 1e6,
                    "share": share(t, wall_ns),
                }
            )
        self._label_columns(rows, keys, shape_table)
        return rows

    def _label_columns(self, rows, keys, shape_table) -> None:
        """``path`` (by name: when the group has one; ``paths`` lists them, ``"0, 2, 4"``, when
        it has several), ``module`` and ``path`` (by path: the outermost module's path is "", its
        row is labelled with its class name), ``shapes``."""
        if self.group_by == "name":
            paths: dict[tuple, set] = {}
            for kind, name, path in self.keys_seen:
                paths.setdefault((kind, name), set()).add(path)
            for row in rows:
                found = paths.get((row["kind"], row["name"]), {""})
                row["path"] = next(iter(found)) if len(found) == 1 else ""
                if len(found) > 1:  # (the text table lists them; a label names one path only)
                    row["paths"] = ", ".join(sorted(found, key=_path_order))
        elif self.group_by == "path":
            origin = {(k[0], k[2] or k[1]): (k[1], k[2]) for k in keys}
            for row in rows:
                row["module"], row["path"] = origin.get(
                    (row["kind"], row["name"]), (row["name"], "")
                )
        else:
            table = list(shape_table) + [""]  # id -1 (no tensors) reads as ""
            for row, sid in zip(rows, self.shape.tolist()):
                row["shapes"] = table[sid]


class Aggregates:
    """Calls, total, self, min and max duration (int64 ns) per ``(key, shape)`` slot.

    Examples
    --------
    >>> import numpy as np
    >>> agg = Aggregates()
    >>> slot = agg.add(np.array([5, 3, 9]), np.array([5, 3, 1]), np.array([0, 0, 1]))
    >>> g = agg.groups([("module", "Linear", "0"), ("module", "Sequential", "")])
    >>> g.calls.tolist(), g.total_ns.tolist(), g.self_ns.tolist()
    ([2, 1], [8, 9], [8, 1])
    """

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
        self._grouping = None  # the last groups' slot -> group mapping, kept while it holds
        self.has_shapes = False

    def add(self, dur, own, key, shape=None) -> np.ndarray:
        """Add rows whose self times ``own`` are known; return each row's slot.

        ``dur``, ``own`` int64 ns; ``key`` interned key ids; ``shape`` shape ids (-1: none) or
        ``None`` (shapes not recorded).
        """
        key = np.asarray(key, np.int64)
        if shape is not None:
            self.has_shapes = True
        if len(key) == 0:
            return np.zeros(0, np.int64)
        shape1 = None if shape is None else np.asarray(shape, np.int64) + 1
        slot = self._slots_of(key, shape1)
        dur = np.asarray(dur, np.int64)
        if LOOPS is not None:  # one pass without the GIL
            LOOPS.table_add(
                *(np.ascontiguousarray(a, np.int64) for a in (slot, dur, own)),
                self.calls, self.total_ns, self.self_ns, self.min_ns, self.max_ns,
            )  # fmt: skip
            return slot
        n_slots = len(self.calls)
        self.calls += np.bincount(slot, minlength=n_slots)
        # float sums of integer ns are exact below 2**53 ns (104 days) per call of add
        self.total_ns += np.rint(np.bincount(slot, dur, n_slots)).astype(np.int64)
        self.self_ns += np.rint(np.bincount(slot, own, n_slots)).astype(np.int64)
        np.minimum.at(self.min_ns, slot, dur)
        np.maximum.at(self.max_ns, slot, dur)
        return slot

    def feed(self, dur, key, thread, depth, parent_offset, shape=None) -> np.ndarray:
        """Add the next rows of a growing run; return each row's self time (ns).

        ``parent_offset`` is each row's parent as an index into these rows (-1: not in them);
        ``thread`` small thread indices; ``shape`` as :meth:`add`'s.
        """
        dur = np.asarray(dur, np.int64)
        own = dur - self._children_ns(dur, thread, depth, parent_offset)
        self.add(dur, own, key, shape)
        return own

    def groups(self, keys, group_by: str = "name") -> Groups:
        """The slots' sums per group label: ``(kind, name)`` by name, ``(kind, path or name)``
        by path, and those of ``(kind, name)`` and shape id by shape. ``keys`` is the run's
        interned key table, which only grows: which slot goes to which group is worked out
        again only when a slot or a key was added."""
        schema.check_choice(group_by, schema.GROUP_BY, "group_by")
        if group_by == "shape" and not self.has_shapes:
            raise EveryOProfilerError(f"group_by='shape': {schema.SHAPES_NOT_RECORDED}")
        ident = (group_by, len(self._slot_pairs), len(keys))
        if self._grouping is None or self._grouping[0] != ident:  # new slots or keys
            self._grouping = (ident, *self._group_slots(keys, group_by))
        _, labels, shape, slot_group, order, starts, seen = self._grouping
        sums = [
            np.add.reduceat(a[order], starts) if len(order) else np.zeros(0, np.int64)
            for a in (self.calls, self.total_ns, self.self_ns)
        ]
        lo, hi = (
            (f.reduceat(a[order], starts) if len(order) else np.zeros(0, np.int64))
            for f, a in ((np.minimum, self.min_ns), (np.maximum, self.max_ns))
        )
        return Groups(group_by, labels, shape, slot_group, *sums, lo, hi, seen)

    def _group_slots(self, keys, group_by: str) -> tuple:
        """Each slot's group, groups in label order (the first key interned with the label,
        then shape id): labels, shape ids, slot -> group, slots by group and group starts."""
        labels = [
            (kind, path or name) if group_by == "path" else (kind, name)
            for kind, name, path in keys
        ]
        first: dict[tuple, int] = {}
        rank = np.array([first.setdefault(lab, k) for k, lab in enumerate(labels)] or [0], np.int64)
        pairs = np.array(self._slot_pairs, np.int64).reshape(-1, 2)
        sid = pairs[:, 1] if group_by == "shape" else np.full(len(pairs), -1, np.int64)
        uniq, slot_group = np.unique(rank[pairs[:, 0]] * _SHAPE_SPAN + sid + 1, return_inverse=True)
        slot_group = slot_group.astype(np.int64)
        order = np.argsort(slot_group, kind="stable")
        starts = (
            np.flatnonzero(np.r_[True, np.diff(slot_group[order]) != 0]) if len(order) else order
        )
        seen = [keys[k] for k in sorted({k for k, _ in self._slot_pairs})]
        by_label = [labels[k] for k in (uniq // _SHAPE_SPAN).tolist()]
        return by_label, uniq % _SHAPE_SPAN - 1, slot_group, order, starts, seen

    # -- slots ---------------------------------------------------------------------------------
    def _slots_of(self, key: np.ndarray, shape1: np.ndarray | None) -> np.ndarray:
        """Slot of each (key, shape id + 1; ``None``: no shapes), through a lookup table."""
        rows, cols = int(key.max()) + 1, 1 if shape1 is None else int(shape1.max()) + 1
        shape1 = 0 if shape1 is None else shape1
        table = self._lookup
        if rows > table.shape[0] or cols > table.shape[1]:
            shape = (max(rows, table.shape[0]), max(cols, table.shape[1]))
            if shape[0] * shape[1] > _MAX_LOOKUP:  # very many shapes: one sort per batch
                uniq, inverse = np.unique(key * _SHAPE_SPAN + shape1, return_inverse=True)
                return np.array([self._slot(p) for p in uniq.tolist()], np.int64)[inverse]
            grown = np.full(shape, -1, np.int64)
            grown[: table.shape[0], : table.shape[1]] = table
            table = self._lookup = grown
        width = table.shape[1]
        flat = key if width == 1 else key * width + shape1
        slot = np.take(table.ravel(), flat)
        missing = slot < 0
        if missing.any():  # pairs seen for the first time: a slot each, in (key, shape) order
            new = flat if missing.all() else flat[missing]
            for f in np.flatnonzero(np.bincount(new, minlength=table.size)).tolist():
                table[f // width, f % width] = self._slot(f // width * _SHAPE_SPAN + f % width)
            slot = np.take(table.ravel(), flat)
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
        child = children_ns(dur, parent_offset)
        lane = np.asarray(thread, np.int64) * _LANE + np.asarray(depth, np.int64)
        # children from earlier batches: the first row one level up on their thread takes them
        # (few entries: the ancestors still running when the last batch was read)
        for (t, d), ns in list(self._pending.items()):
            hit = lane == t * _LANE + d
            row = int(hit.argmax())
            if hit[row]:
                child[row] += ns
                del self._pending[(t, d)]
        orphan = (parent_offset < 0) & (np.asarray(depth) > 0)
        if orphan.any():  # parent still running: wait for it on (thread, depth - 1)
            uniq, inverse = np.unique(lane[orphan] - 1, return_inverse=True)
            sums = np.zeros(len(uniq), np.int64)
            np.add.at(sums, inverse, dur[orphan])
            for packed, ns in zip(uniq.tolist(), sums.tolist()):
                k = divmod(packed, _LANE)
                self._pending[k] = self._pending.get(k, 0) + ns
        return child


def _path_order(path: str) -> tuple:
    """``"2"`` before ``"10"``, and ``"features.3"`` by its parts."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in path.split("."))
