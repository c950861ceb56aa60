"""What the dashboard sends to the browser: binary columns decoded back, only what is new."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("anywidget")

import everyo as eo  # noqa: E402
from everyo.profiler import Profiler, record_function  # noqa: E402
from everyo.profiler.storage.run import RunRegistry  # noqa: E402
from everyo_lab.widgets.stream import EventStream  # noqa: E402
from everyo_lab.widgets.wire import MIXED, encode_events  # noqa: E402


def decode(msg) -> dict:
    """The browser's reading of a message (as js/src documents it), in NumPy."""
    h, bufs = msg.header, msg.buffers
    kdt = np.uint16 if h["key_bytes"] == 2 else np.uint32
    start = np.frombuffer(bufs[0], np.uint32).astype(np.float64)
    dur = np.frombuffer(bufs[1], np.uint32).astype(np.float64)
    key = np.frombuffer(bufs[4], kdt).astype(np.int64)
    out = {
        "start_ms": h["t0_ms"] + start * h["tick_ns"] / 1e6,
        "dur_ms": dur * h["tick_ns"] / 1e6,
        "depth": np.frombuffer(bufs[2], np.uint16),
        "thread": np.frombuffer(bufs[3], np.uint16),
        "key": np.where(key == np.iinfo(kdt).max, MIXED, key),
        "steps": np.frombuffer(bufs[-1], np.float64),
    }
    if h["type"] == "events":  # the kernel's self times, in ticks
        out["self_ns"] = np.frombuffer(bufs[5], np.uint32).astype(np.int64) * h["tick_ns"]
    if h["type"] == "bars":
        out["count"] = np.frombuffer(bufs[5], np.uint32)
        dom = np.frombuffer(bufs[6], kdt).astype(np.int64)
        out["dom"] = np.where(dom == np.iinfo(kdt).max, MIXED, dom)
    assert all(len(out[k]) == h["n"] for k in ("start_ms", "dur_ms", "depth", "thread", "key"))
    assert len(out["steps"]) == h["steps"]
    return out


def train(steps, model, opt, x):
    for _ in range(steps):
        opt.zero_grad()
        out = model(x)
        eo.sum(out * out).backward()
        opt.step()


@pytest.fixture
def setup():
    model = eo.Sequential(eo.Linear(8, 16, seed=0), eo.ReLU(), eo.Linear(16, 2, seed=1))
    return model, eo.optim.SGD(model.parameters(), lr=0.01), eo.ones(4, 8)


def test_raw_events_round_trip_and_only_new_rows_are_sent(setup):
    p = Profiler(label="wire", registry=RunRegistry()).start()
    stream = EventStream(p.run)
    train(3, *setup)
    p.flush()
    first = stream.update(stream.read())
    train(2, *setup)
    p.stop()
    second = stream.update(stream.read(), final=True)
    assert [m.header["type"] for m in first + second] == ["events", "events"]
    assert first[0].header["reset"] and not second[0].header["reset"]
    assert second[0].header["complete"] and not first[0].header["complete"]
    batch = p.run.snapshot()
    got = [decode(m) for m in first + second]
    start = np.concatenate([g["start_ms"] for g in got])
    dur = np.concatenate([g["dur_ms"] for g in got])
    np.testing.assert_allclose(start, batch.start_ns / 1e6, atol=1e-6)
    # starts round down and ends up: never shorter, at most one tick longer
    assert (dur >= batch.dur_ns / 1e6 - 1e-9).all()
    assert (dur <= batch.dur_ns / 1e6 + 2 * first[0].header["tick_ns"] / 1e6).all()
    np.testing.assert_array_equal(np.concatenate([g["depth"] for g in got]), batch.depth)
    key = np.concatenate([g["key"] for g in got])
    np.testing.assert_array_equal(key, batch.key)
    # keys are sent once: the second message only adds the ones the first lacked
    keys = first[0].header["keys"] + second[0].header["keys"]
    assert second[0].header["key0"] == len(first[0].header["keys"])
    assert [k[:3] for k in keys] == [list(k) for k in batch.keys]
    assert all(k[3].startswith("#") for k in keys)
    # step ends: the end of each optimizer event, each sent once
    opt = np.array([k[0] == "optimizer" for k in batch.keys])[batch.key]
    ends = np.sort((batch.start_ns + batch.dur_ns)[opt]) / 1e6
    np.testing.assert_allclose(np.concatenate([g["steps"] for g in got]), ends)
    assert len(ends) == 5


def test_a_run_past_the_raw_limit_is_sent_as_bounded_bars(setup):
    p = Profiler(label="big", registry=RunRegistry()).start()
    train(30, *setup)
    p.stop()
    stream = EventStream(p.run, raw_limit=100)
    (msg,) = stream.update(stream.read(), final=True)
    assert msg.header["type"] == "bars" and msg.header["window"] is None
    got = decode(msg)
    assert got["count"].sum() == p.run.num_events  # every event is in exactly one bar
    assert len(got["steps"]) == 30
    # a zoom window: bars at full detail there, one per event when they are a pixel wide
    span = p.run.wall_ns / 1e6
    detail = decode(stream.detail(0.0, span / 30, 100_000))
    assert stream.detail(0.0, span / 30, 100_000).header["window"] == [0.0, span / 30]
    assert (detail["count"] == 1).all()
    assert len(detail["key"]) < p.run.num_events


def test_mixed_bars_carry_the_mixed_key():
    relu, tanh, x = eo.ReLU(), eo.Tanh(), eo.ones(2, 2)
    p = Profiler(label="mixed", registry=RunRegistry()).start()
    for _ in range(1000):  # two classes, two colours, side by side at depth 0
        relu(x)
        tanh(x)
    p.stop()
    stream = EventStream(p.run, raw_limit=10)
    got = decode(stream.update(stream.read(), final=True)[0])
    mixed = got["key"] == MIXED
    assert mixed.any() and (got["count"][mixed] > 1).all()
    # each mixed bar names the class with the most time in it; a uniform bar its own key
    names = {i: k[1] for i, k in enumerate(p.run.snapshot().keys)}
    assert {names[d] for d in got["dom"][mixed]} <= {"ReLU", "Tanh"}
    assert (got["dom"][~mixed] == got["key"][~mixed]).all()


def test_resend_sends_everything_again_from_the_start(setup):
    p = Profiler(label="again", registry=RunRegistry()).start()
    train(2, *setup)
    p.stop()
    stream = EventStream(p.run)
    stream.update(stream.read(), final=True)
    (again,) = stream.resend()
    assert again.header["reset"] and again.header["complete"]
    assert again.header["n"] == p.run.num_events and again.header["key0"] == 0
    assert len(decode(again)["steps"]) == 2


def test_threads_are_numbered_by_first_appearance_and_named_once():
    import threading

    p = Profiler(label="threads", registry=RunRegistry()).start()
    stream = EventStream(p.run)

    def work():
        with record_function("in-thread"):
            pass

    with record_function("main"):
        pass
    t = threading.Thread(target=work, name="worker")
    t.start()
    t.join()
    p.stop()
    (msg,) = stream.update(stream.read(), final=True)
    got = decode(msg)
    assert sorted(set(got["thread"].tolist())) == [0, 1]
    assert "worker" in msg.header["threads"].values()


def test_key_width_grows_past_65535_keys():
    class Batch:
        keys = [("user", f"k{i}", "") for i in range(70000)]
        start_ns = np.array([0, 10], np.int64)
        dur_ns = np.array([5, 5], np.int64)
        depth = np.array([0, 0])
        key = np.array([1, 69999])
        tid = np.array([1, 1])
        self_ns = np.array([5, 5], np.int64)

    msg = encode_events("r", Batch(), np.zeros(2, np.int64), reset=True, key0=0, threads={})
    assert msg.header["key_bytes"] == 4
    assert decode(msg)["key"].tolist() == [1, 69999]


def test_each_event_carries_the_kernels_self_time_across_refreshes(setup):
    """Self time is sent, not worked out in the browser: a parent read in a later refresh
    than its children, the final remainder and a resend all carry the exact self times."""
    from everyo_lab.views.live_session import LiveState

    p = Profiler(label="self", registry=RunRegistry()).start()
    stream, state = EventStream(p.run), LiveState()
    sent = {}

    def take(msgs):
        for msg in msgs:
            got = decode(msg)
            first = stream.sent - msg.header["n"]
            sent.update(zip(range(first, stream.sent), got["self_ns"].tolist()))

    def refresh():
        p.flush()
        batch = stream.read()
        state.feed(batch)
        take(stream.update(batch, state=state))

    with record_function("outer"):
        train(2, *setup)
        refresh()  # the children now, their parent "outer" in the next live read
    refresh()
    with record_function("last"):
        train(1, *setup)
    p.stop()
    take(stream.update(stream.read(), final=True))  # the final remainder: no state
    exact = p.run.snapshot().self_ns.tolist()
    assert len(sent) == len(exact) > 10 and [sent[i] for i in range(len(exact))] == exact
    (again,) = stream.resend()
    assert decode(again)["self_ns"].tolist() == exact


def test_step_ends_are_sent_once_with_their_place(setup):
    from everyo_lab.views.live_session import LiveState

    p = Profiler(label="steps", registry=RunRegistry()).start()
    stream, state = EventStream(p.run, raw_limit=10), LiveState()

    def refresh():
        p.flush()
        batch = stream.read()
        state.feed(batch)
        (msg,) = stream.update(batch, state=state)
        return msg.header

    train(3, *setup)
    first = refresh()
    train(2, *setup)
    second = refresh()
    p.stop()
    assert (first["type"], first["step0"], first["steps"]) == ("bars", 0, 3)
    assert (second["step0"], second["steps"]) == (3, 2)  # live bars: only the new step ends
    (again,) = stream.resend()
    assert (again.header["step0"], again.header["steps"]) == (0, 5)


def test_detail_of_a_window_without_events_is_an_empty_message(setup):
    """A zoom window where nothing ran (after the run's end) gives no bars, not an error."""
    p = Profiler(label="big", registry=RunRegistry()).start()
    train(30, *setup)
    p.stop()
    stream = EventStream(p.run, raw_limit=100)
    stream.update(stream.read(), final=True)
    end = p.run.wall_ns / 1e6
    got = decode(stream.detail(end + 1.0, end + 2.0, 100_000))
    assert len(got["count"]) == 0


@pytest.fixture
def recording():
    """A profiler to start; stopped after the test even when an assertion failed first."""
    started = []

    def start(label):
        started.append(Profiler(label=label, registry=RunRegistry()).start())
        return started[-1]

    yield start
    for p in started:
        if p.run.status == "running":
            p.stop()


def live_refresh(p, stream, state):
    p.flush()
    batch = stream.read()
    state.feed(batch)
    return stream.update(batch, state=state)


def test_a_fast_run_goes_to_bars_at_once_and_ends_with_every_event(setup, recording):
    """A live refresh bringing more than a quarter of raw_limit sends bars (the run would
    outgrow the limit soon); a finished run that fits after all gets every event at the end."""
    from everyo_lab.views.live_session import LiveState

    p = recording("fast")
    stream, state = EventStream(p.run, raw_limit=400), LiveState()
    train(1, *setup)  # 11 events: fewer than 400 // 4
    (slow,) = live_refresh(p, stream, state)
    assert slow.header["type"] == "events" and slow.header["reset"]
    train(3, *setup)  # 33 more: still raw
    (more,) = live_refresh(p, stream, state)
    assert more.header["type"] == "events" and not more.header["reset"]
    train(12, *setup)  # 132 new events in one refresh: more than 100
    (fast,) = live_refresh(p, stream, state)
    assert fast.header["type"] == "bars" and fast.header["window"] is None
    assert decode(fast)["count"].sum() == p.run.num_events  # the bars hold every event
    train(2, *setup)
    (live_bars,) = live_refresh(p, stream, state)
    assert live_bars.header["type"] == "bars"  # bars from then on, though the batch is small
    p.stop()
    assert p.run.num_events <= 400
    (final,) = stream.update(stream.read(), final=True)
    assert final.header["type"] == "events"
    assert final.header["reset"] and final.header["complete"] and final.header["key0"] == 0
    got, batch = decode(final), p.run.snapshot()
    np.testing.assert_array_equal(got["key"], batch.key)  # every event, from the first
    np.testing.assert_allclose(got["start_ms"], batch.start_ns / 1e6, atol=1e-6)
    assert len(got["steps"]) == 18  # the browser's steps were reset with its store: all again


def test_a_fast_run_past_the_limit_ends_with_bars(setup, recording):
    from everyo_lab.views.live_session import LiveState

    p = recording("fast-big")
    stream, state = EventStream(p.run, raw_limit=100), LiveState()
    train(4, *setup)  # 44 events: more than 100 // 4
    (fast,) = live_refresh(p, stream, state)
    assert fast.header["type"] == "bars"
    train(10, *setup)
    p.stop()
    (final,) = stream.update(stream.read(), final=True)
    assert final.header["type"] == "bars"  # 154 events: past the limit, as for a slower run
    assert decode(final)["count"].sum() == p.run.num_events
