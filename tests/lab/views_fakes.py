"""EventBatch-shaped test data for the view tests: small hand-made batches, big synthetic ones."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

_OPTIONAL = ("shapes", "flops", "bytes", "mem_bytes", "device_ns", "metadata")


def make_batch(events, *, thread_names=None, **optional):
    """Build a batch from ``(start_ns, dur_ns, depth, name, kind, path[, tid])`` tuples.

    Parents are the nearest enclosing event on the same thread; self time is computed here so the
    flame views can be tested before the profiler's analysis exists.
    """
    rows = [tuple(e) + (0,) * (7 - len(e)) for e in events]
    start = np.array([r[0] for r in rows], dtype=np.int64)
    dur = np.array([r[1] for r in rows], dtype=np.int64)
    depth = np.array([r[2] for r in rows], dtype=np.int64)
    tid = np.array([r[6] for r in rows], dtype=np.int64)
    parent = np.full(len(rows), -1, dtype=np.int64)
    for i in range(len(rows)):
        for j in range(len(rows)):
            if (
                tid[j] == tid[i]
                and depth[j] == depth[i] - 1
                and start[j] <= start[i]
                and start[i] + dur[i] <= start[j] + dur[j]
            ):
                parent[i] = j
    self_ns = dur.copy()
    for i in range(len(rows)):
        if parent[i] >= 0:
            self_ns[parent[i]] -= dur[i]
    batch = SimpleNamespace(
        start_ns=start,
        dur_ns=dur,
        self_ns=self_ns,
        depth=depth,
        parent=parent,
        tid=tid,
        kind=np.array([r[4] for r in rows], dtype=object),
        name=np.array([r[3] for r in rows], dtype=object),
        path=np.array([r[5] for r in rows], dtype=object),
        row=np.arange(len(rows), dtype=np.int64),
        thread_names=thread_names or {0: "MainThread"},
    )
    for key in _OPTIONAL:
        setattr(batch, key, optional.get(key))
    return _Batch(batch)


class _Batch(SimpleNamespace):
    """A SimpleNamespace with ``len()``, like an EventBatch."""

    def __init__(self, ns):
        super().__init__(**vars(ns))

    def __len__(self):
        return len(self.start_ns)


def mlp_batch(iterations: int, *, step_ns: int = 10_000, seed: int = 0):
    """``iterations`` forward passes of Sequential(Linear, ReLU, Linear): 4 events each.

    Each pass is ``step_ns`` long; the three children share it 45/10/40 %, with jitter.
    """
    rng = np.random.default_rng(seed)
    n = iterations
    base = np.arange(n, dtype=np.int64) * step_ns
    jitter = rng.integers(0, step_ns // 20, size=n)
    seq_dur = step_ns - step_ns // 20 + jitter // 4
    c1 = (seq_dur * 45) // 100
    c2 = (seq_dur * 10) // 100
    c3 = (seq_dur * 40) // 100
    s1 = base + 1
    s2 = s1 + c1
    s3 = s2 + c2
    start = np.stack([base, s1, s2, s3], axis=1).ravel()
    dur = np.stack([seq_dur, c1, c2, c3], axis=1).ravel()
    depth = np.tile(np.array([0, 1, 1, 1]), n)
    names = np.tile(np.array(["Sequential", "Linear", "ReLU", "Linear"], dtype=object), n)
    paths = np.tile(np.array(["", "0", "1", "2"], dtype=object), n)
    parent = np.stack([np.full(n, -1), base * 0, base * 0, base * 0], axis=1).ravel()
    parent[1::4] = parent[2::4] = parent[3::4] = np.arange(n) * 4
    self_ns = dur.copy()
    self_ns[0::4] = seq_dur - c1 - c2 - c3
    return _Batch(
        SimpleNamespace(
            start_ns=start,
            dur_ns=dur,
            self_ns=self_ns,
            depth=depth,
            parent=parent,
            tid=np.zeros(4 * n, dtype=np.int64),
            kind=np.full(4 * n, "module", dtype=object),
            name=names,
            path=paths,
            row=np.arange(4 * n, dtype=np.int64),
            thread_names={0: "MainThread"},
            **{k: None for k in _OPTIONAL},
        )
    )
