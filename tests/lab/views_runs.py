"""Real profiler runs for the view tests: made by ``profile()`` with a fake clock and a private
registry (so tests neither depend on timing nor fill ``everyo.profiler.runs``)."""

from __future__ import annotations

import numpy as np
from fakes import FakeClock

import everyo as eo
from everyo.profiler import profile, record_function
from everyo.profiler.storage.run import Run, RunRegistry
from everyo.profiler.storage.store import EventStore


def model_run(
    *, label="mlp", iterations=3, fail=None, record_ops=False, clock_step=1000, record_shapes=True
):
    """Profile ``iterations`` forward passes of the guide's MLP; ``fail`` is raised inside."""
    model = eo.Sequential(eo.Linear(4, 16, seed=0), eo.ReLU(), eo.Linear(16, 2, seed=1))
    x = eo.zeros(32, 4)
    prof = profile(
        label=label,
        record_shapes=record_shapes,
        record_ops=record_ops,
        clock=FakeClock(clock_step),
        registry=RunRegistry(),
    )
    try:
        with prof:
            for _ in range(iterations):
                with record_function("step"):
                    model(x)
                if fail is not None:
                    raise fail
    except BaseException as exc:  # noqa: B036 - KeyboardInterrupt is one of the cases
        if exc is not fail:
            raise
    return prof.run


def train_run(*, label="train", iterations=3, mark_steps=False):
    """Train the guide's MLP for ``iterations`` steps (forward, MSE loss, backward, SGD step);
    ``mark_steps`` also calls ``everyo.profiler.step()`` after each one."""
    import everyo.profiler as ep

    model = eo.Sequential(eo.Linear(4, 8, seed=0), eo.ReLU(), eo.Linear(8, 1, seed=1))
    opt = eo.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = eo.MSELoss()
    x, y = eo.zeros(16, 4), eo.zeros(16, 1)
    prof = profile(label=label, clock=FakeClock(1000), registry=RunRegistry())
    with prof:
        for _ in range(iterations):
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if mark_steps:
                ep.step()
    return prof.run


def empty_run(*, label="empty"):
    """A completed run that recorded nothing."""
    prof = profile(label=label, clock=FakeClock(1000), registry=RunRegistry())
    with prof:
        pass
    return prof.run


def synthetic_run(iterations: int, *, step_ns: int = 10_000) -> Run:
    """A real Run of ``4 * iterations`` events (Sequential > Linear, ReLU, Linear per pass),
    built column-wise: a million events in well under a second."""
    n = iterations
    base = np.arange(n, dtype=np.int64) * step_ns
    durs = np.array([step_ns - 100, 45 * step_ns // 100, 10 * step_ns // 100, 40 * step_ns // 100])
    offs = np.array([0, 10, 10 + durs[1], 10 + durs[1] + durs[2]])
    start = (base[:, None] + offs[None, :]).ravel()
    seq = np.arange(4 * n, dtype=np.int32)
    parent = np.where(seq % 4 == 0, -1, seq - seq % 4).astype(np.int32)
    columns = {
        "start_ns": start,
        "dur_ns": np.tile(durs, n).astype(np.int64),
        "key": np.tile(np.array([0, 1, 2, 3], np.int32), n),
        "seq": seq,
        "parent_seq": parent,
        "thread": np.zeros(4 * n, np.int16),
        "depth": np.tile(np.array([0, 1, 1, 1], np.int16), n),
    }
    keys = [
        ("module", "Sequential", ""),
        ("module", "Linear", "0"),
        ("module", "ReLU", "1"),
        ("module", "Linear", "2"),
    ]
    store = EventStore.from_columns(columns, keys, threads=[(1, "MainThread")])
    run = Run(store, label="synthetic", clock=lambda: 0, environment={})
    run.finish(wall_ns=int(start[-1] + durs[3]))
    return run


def regions_run(*, label="regions", iterations=3, fail=None):
    """A run of nested ``record_function`` regions (no engine needed): step > forward, backward."""
    prof = profile(label=label, clock=FakeClock(1000), registry=RunRegistry())
    try:
        with prof:
            for _ in range(iterations):
                with record_function("step"):
                    with record_function("forward"):
                        pass
                    with record_function("backward"):
                        pass
                if fail is not None:
                    raise fail
    except BaseException as exc:  # noqa: B036 - KeyboardInterrupt is one of the cases
        if exc is not fail:
            raise
    return prof.run


def one_slow_call_run(passes: int = 20) -> Run:
    """Passes of Sequential > Linear (30 µs), ReLU (11 µs), Linear (30 µs), where one ReLU call
    took 1.271 ms (a preemption, a page fault): ReLU has the most self time, all of it that
    one call's."""
    n = passes
    relu = np.full(n, 11_000, np.int64)
    relu[n // 2] = 1_271_000
    durs = np.stack([np.full(n, 30_000), relu, np.full(n, 30_000)], axis=1)
    seq_dur = durs.sum(axis=1) + 200
    gaps = np.concatenate([[0], np.cumsum(seq_dur)[:-1]]) + np.arange(n) * 1000
    starts, all_durs = [], []
    for i in range(n):
        t = gaps[i]
        starts += [t, t + 100, t + 100 + durs[i, 0], t + 100 + durs[i, 0] + durs[i, 1]]
        all_durs += [seq_dur[i], *durs[i]]
    seq = np.arange(4 * n, dtype=np.int32)
    columns = {
        "start_ns": np.array(starts, np.int64),
        "dur_ns": np.array(all_durs, np.int64),
        "key": np.tile(np.array([0, 1, 2, 3], np.int32), n),
        "seq": seq,
        "parent_seq": np.where(seq % 4 == 0, -1, seq - seq % 4).astype(np.int32),
        "thread": np.zeros(4 * n, np.int16),
        "depth": np.tile(np.array([0, 1, 1, 1], np.int16), n),
    }
    keys = [
        ("module", "Sequential", ""),
        ("module", "Linear", "0"),
        ("module", "ReLU", "1"),
        ("module", "Linear", "2"),
    ]
    store = EventStore.from_columns(columns, keys, threads=[(1, "MainThread")])
    run = Run(store, label="one slow call", clock=lambda: 0, environment={})
    run.finish(wall_ns=int(starts[-1] + all_durs[-1]))
    return run
