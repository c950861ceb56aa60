"""The dashboard's "why" panel: its data from a planted workload, live and final, bounded.

The planted region ``work`` calls three functions costing about 60 %, 30 % and 10 % of it;
each is also a recorded region, so the truth is measured by the recorder in the same run and
the panel's shares are compared with it within the sampling statistics (a share p from n
effective samples has a standard error of sqrt(p(1-p)/n)), never with a wall-clock threshold.
"""

from __future__ import annotations

import os
import re
import time

import numpy as np
import pytest

import everyo
import everyo.profiler as ep
from everyo.errors import EveryOProfilerError
from everyo.profiler.analysis.run_analysis import summarize
from everyo.profiler.sampling.samples import SampleStore
from everyo.profiler.storage.run import Run
from everyo.profiler.storage.store import EventStore
from everyo_lab.views.live_session import LiveSession
from everyo_lab.views.why import why_panel as why
from everyo_lab.views.why.why_live import LiveWhy


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def heavy():
    with ep.record_function("heavy"):
        spin(0.004)  # the planted hot line


def medium():
    with ep.record_function("medium"):
        spin(0.0025)


def light():
    with ep.record_function("light"):
        spin(0.0015)  # three 0.5-ms samples: one event's frames hold it even when the
        # sampler's thread waits a turn (at 0.5 ms, one sample, and sometimes none)


def planted(seconds: float = 0.6) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        with ep.record_function("work"):
            heavy()
            medium()
            light()


@pytest.fixture(scope="module")
def sampled_run():
    from everyo.profiler import RunRegistry

    with ep.profile(sample=0.5, registry=RunRegistry(), label="planted") as p:
        planted()
    return p.run


def _truth(run) -> dict:
    summary = {r["name"]: r["total_ms"] for r in summarize(run) if r["name"] != "work"}
    work = next(r["total_ms"] for r in summarize(run) if r["name"] == "work")
    return {name: ms / work for name, ms in summary.items()}


def _tolerance(p: float, n: float) -> float:
    return 5 * (p * (1 - p) / n) ** 0.5 + 0.02


def _pct(text: str) -> float:
    assert re.fullmatch(r"\d+\.\d %", text), text
    return float(text[:-2]) / 100


def _row(name: str) -> dict:
    return {"type": "row", "group_by": "name", "kind": "user", "name": name, "label": name}


def test_the_panel_of_a_row_names_the_planted_functions_with_their_shares(sampled_run):
    sel = why.select(sampled_run, _row("work"))
    hot = why.exact_hot_lines(sampled_run, sel, "everyo")
    panel = why.panel(hot, sel)
    assert panel["state"] == "lines" and panel["title"] == "why 'work'"
    truth = _truth(sampled_run)
    functions = {f["function"]: _pct(f["total"]) for f in panel["functions"]}
    for name, fn in (("heavy", "heavy"), ("medium", "medium"), ("light", "light")):
        assert abs(functions[fn] - truth[name]) <= _tolerance(truth[name], hot.effective_samples)
    top = panel["lines"][0]  # the planted hot line: spin's loop, called from heavy
    assert top["function"] == "spin" and "perf_counter" in top["source"]
    assert re.fullmatch(r"test_views_why\.py:\d+", top["where"])
    # the tree: the event, then the planted functions under it, heaviest first
    node = panel["tree"]
    while len(node["children"]) == 1:  # the callers every sample shares (the fixture, planted)
        node = node["children"][0]
    calls = [c["source"] for c in node["children"]]  # the lines of planted() that call them
    assert calls[:3] == ["heavy()", "medium()", "light()"]
    assert [c["children"][0]["function"] for c in node["children"][:3]] == [
        "heavy",
        "medium",
        "light",
    ]
    assert panel["summary"].startswith(f"{hot.calls:,} calls · ")
    assert "samples at 0.5 ms (wall time)" in panel["summary"]
    assert panel["hint"].startswith("select a bar")


def engine_work(seconds: float = 0.3):
    import everyo as eo

    layer, x = eo.nn.Linear(256, 256, seed=0), eo.ones((64, 256))
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        with ep.record_function("engine"):
            layer(x)  # the user's line; the time is inside everyo's Linear


def test_everyo_frames_are_folded_and_one_switch_shows_them():
    from everyo.profiler import RunRegistry

    with ep.profile(sample=0.5, registry=RunRegistry()) as p:
        engine_work()
    sel = why.select(p.run, _row("engine"))
    folded = why.panel(why.exact_hot_lines(p.run, sel, "everyo"), sel)
    shown = why.panel(why.exact_hot_lines(p.run, sel, None), sel)
    assert folded["toggle"] == "show everyo's frames" and shown["toggle"] == "fold everyo's frames"
    assert "folded" in folded["folded"] and shown["folded"] == "every frame shown"
    # folded: the engine's time counts for the user's line that called it
    assert folded["lines"][0]["source"].startswith("layer(x)")
    # (everyo's package folder, not any path with "everyo" in it: a clone into a folder named
    # everyo holds this test file too); a folded frame spends no time itself (one kept above
    # library frames names the operation, with all its time below it)
    assert not any(_in_everyo(line["file"]) and _pct(line["self"]) > 0 for line in folded["lines"])
    assert any(_in_everyo(line["file"]) for line in shown["lines"])


def _in_everyo(place: str) -> bool:
    return place.startswith(os.path.join(os.path.dirname(everyo.__file__), ""))


def test_the_panel_stays_small_whatever_the_tree(sampled_run):
    sel = why.select(sampled_run, _row("work"))
    panel = why.panel(why.exact_hot_lines(sampled_run, sel, None), sel)

    def count(node):
        return 1 + sum(count(c) for c in node["children"])

    assert count(panel["tree"]) <= why.TREE_NODES
    assert len(panel["lines"]) <= why.PANEL_LINES


def test_a_bar_selects_one_event_and_expands_it_into_its_sampled_frames(sampled_run):
    from everyo_lab.widgets.why_link import WhyLink

    batch = sampled_run.snapshot()
    rows = np.flatnonzero(batch.name == "work")
    row = int(rows[len(rows) // 2])
    tid = int(batch.tid[row])
    target = {
        "type": "bar",
        "thread": 0,
        "depth": int(batch.depth[row]),
        "start_ms": float(batch.start_ns[row]) / 1e6 + 0.0004,  # the browser's rounding
        "kind": "user",
        "name": "work",
        "path": "",
        "label": "work",
    }
    panel = WhyLink().select(sampled_run, target, {tid: 0}, "everyo")
    assert panel["title"] == "why 'work' (one event)"
    assert panel["summary"].startswith("1 call · ")
    hot = ep.hot_lines(sampled_run, row)
    assert [line["where"] for line in panel["lines"]][:3] == [why._where(r) for r in hot.lines[:3]]
    bars = panel["expand"]["bars"]
    assert bars and len(bars) <= why.FRAME_BARS
    for bar in bars:
        assert 0 <= bar["left"] and bar["left"] + bar["width"] <= 1 + 1e-6
    # the event's own calls, in the order they ran: heavy, medium, light
    calls = sorted(
        (b for b in bars if b["text"] in ("heavy", "medium", "light")), key=lambda b: b["left"]
    )
    assert [b["text"] for b in calls][:1] == ["heavy"] and "light" in [b["text"] for b in calls]
    assert len({b["row"] for b in calls}) == 1  # one depth: the frames under planted()
    assert re.fullmatch(
        r"heavy · test_views_why\.py:\d+ · [\d.]+ ms \(\d+\.\d %\)", calls[0]["title"]
    )
    # the hot line's frame (spin) under each, one row deeper
    assert {b["row"] for b in bars if b["text"] == "spin"} == {calls[0]["row"] + 1}


def test_a_run_without_samples_says_how_to_get_them():
    from everyo.profiler import RunRegistry
    from everyo_lab.views.report import build_report
    from everyo_lab.widgets.why_link import WhyLink

    with ep.profile(registry=RunRegistry()) as p:
        with ep.record_function("work"):
            spin(0.001)
        p.flush()
        live = WhyLink().live_rows(p.run, build_report(p.run), "everyo")
        assert live["panels"] == [] and "%%everyo_profile --sample" in live["other"]
    panel = WhyLink().select(p.run, _row("work"), {}, "everyo")
    assert panel["state"] == "unsampled"
    assert WhyLink().live_rows(p.run, object(), "everyo") == {}  # ended: the panel above
    assert "%%everyo_profile --sample" in panel["message"] and "'work'" in panel["message"]


def test_a_target_the_browser_never_sends_is_a_clear_error(sampled_run):
    with pytest.raises(EveryOProfilerError, match="select a table row or a flame-chart bar"):
        why.select(sampled_run, {"type": "cell"})
    with pytest.raises(EveryOProfilerError, match="select the row or bar again"):
        why.select(sampled_run, {"type": "bar", "name": "work", "kind": "user"})
    bar = {"type": "bar", "thread": 5, "depth": 0, "start_ms": 1.0, "name": "x", "kind": "user"}
    with pytest.raises(EveryOProfilerError, match="thread"):
        why.select(sampled_run, bar, {})


# -- the live panel: the same answer as hot_lines, reading only what is new ------------------
def _growing_run():
    """A run whose events and samples arrive in chunks (as while a cell records), samples
    of a chunk reaching the store before or after the events that hold them."""
    names = ["outer", "work", "other"]
    store = EventStore.from_columns(
        {
            k: np.zeros(0, d)
            for k, d in (
                ("start_ns", np.int64),
                ("dur_ns", np.int64),
                ("key", np.int32),
                ("thread", np.int16),
                ("depth", np.int16),
            )
        },
        [("user", n, "") for n in names],
        threads=[(7, "main"), (8, "worker")],
    )
    run = Run(store, label="growing", options={"sample_mode": "wall", "sample_ms": 1.0})
    s = SampleStore()
    frames = [s.frame_id(i, "/x/app.py", 10 + i, f"fn{i}") for i in range(4)]
    stacks = [s.stack_id(-1, frames[0])]
    stacks.append(s.stack_id(stacks[0], frames[1]))
    stacks.append(s.stack_id(stacks[1], frames[2]))
    stacks.append(s.stack_id(stacks[0], frames[3]))
    run.samples = s
    return run, stacks


def _events(store, rows):
    """Append ``(name, start, dur, depth, thread index)`` rows to ``store``."""
    names = [k[1] for k in store.keys]
    store.append(
        {
            "start_ns": np.array([r[1] for r in rows], np.int64),
            "dur_ns": np.array([r[2] for r in rows], np.int64),
            "key": np.array([names.index(r[0]) for r in rows], np.int32),
            "thread": np.array([r[4] for r in rows], np.int16),
            "depth": np.array([r[3] for r in rows], np.int16),
        }
    )


def test_the_live_panel_counts_what_hot_lines_counts(monkeypatch):
    run, stacks = _growing_run()
    rng = np.random.default_rng(1)
    session = LiveSession(run)
    live = LiveWhy.following(session, why.select(run, _row("work")))
    t = 0
    for chunk in range(12):
        rows, samples = [], []
        for _ in range(5):  # "work" events nested in "outer", one nested "work" (recursion)
            rows.append(("work", t + 15, 10, 2, 0))
            rows.append(("work", t + 10, 30, 1, 0))
            if chunk % 3 == 0:
                rows.append(("work", t + 5, 50, 1, 1))  # on the worker thread
            rows.append(("outer", t, 100, 0, 0))
            t += 100
        for _ in range(40):
            ts = int(rng.integers(t - 500, t + 50))  # some after the events of this chunk
            samples.append(
                (ts, int(rng.choice([7, 8])), int(rng.choice(stacks)), int(rng.integers(1, 9)))
            )
        if chunk % 2:
            _events(run.store, rows)
        s_cols = {
            "t_ns": [x[0] for x in samples],
            "tid": [x[1] for x in samples],
            "stack": [x[2] for x in samples],
            "wall_ns": [x[3] for x in samples],
            "cpu_ns": [x[3] for x in samples],
        }
        run.samples.append(s_cols)
        if not chunk % 2:
            _events(run.store, rows)
        if chunk == 6:  # a panel opened mid-run catches up from the session's history
            live = LiveWhy.following(session, why.select(run, _row("work")))
        live.feed(session.read(), session.new_samples)
        exact = ep.hot_lines(run, "work", top=why.PANEL_LINES)
        got = live.hot_lines()
        assert (got.calls, got.event_ns, got.samples, got.sampled_ns) == (
            exact.calls,
            exact.event_ns,
            exact.samples,
            exact.sampled_ns,
        )
        assert got.lines == exact.lines and got.tree == exact.tree
        assert got.effective_samples == pytest.approx(exact.effective_samples)
    assert got.samples > 100 and got.calls == 12 * 10 + 4 * 5 and len(got.lines) == 4


def test_each_refresh_reads_the_new_events_and_samples_once_for_every_panel(monkeypatch):
    """One live reader: the table's first rows' panels and the selection's are fed what the
    dashboard's session read, whatever their number; a panel opened mid-run reads the
    session's history once; each panel still counts what ``hot_lines`` counts."""
    pytest.importorskip("anywidget")
    from everyo_lab.widgets import why_link
    from everyo_lab.widgets.dashboard import Dashboard

    run, stacks = _growing_run()
    events, samples = [], []
    since, read_since = run.events_since, run.samples.read_since
    monkeypatch.setattr(run, "events_since", lambda c: events.append(c) or since(c))
    monkeypatch.setattr(run.samples, "read_since", lambda c: samples.append(c) or read_since(c))
    monkeypatch.setattr(why_link, "LIVE_EVERY_S", 0.0)  # every refresh builds the panels
    board = Dashboard(run)
    t = 0
    for chunk in range(6):
        _events(run.store, [("work", t + 10, 30, 1, 0), ("other", t + 50, 20, 1, 0)])
        _events(run.store, [("outer", t, 100, 0, 0)])
        run.samples.append(
            {
                "t_ns": [t + 20, t + 60, t + 90],
                "tid": [7, 7, 7],
                "stack": [stacks[2], stacks[3], stacks[1]],
                "wall_ns": [3, 2, 1],
                "cpu_ns": [3, 2, 1],
            }
        )
        t += 100
        if chunk == 2:
            board.why_target = _row("work")  # a selection mid-run: its history, read once
            assert samples[-1] == 0  # (the history's samples)
            del events[:], samples[:]
        board.refresh(live=True)
        assert events[-1] == board._session.cursor - 3  # from the cursor, not from row 0
        assert len(board.why_live["panels"]) == 3
        if chunk >= 2:
            assert len(events) == len(samples) == chunk - 1  # one read per refresh, all panels

    def exact(name):
        sel = why.select(run, _row(name))
        return why.panel(why.exact_hot_lines(run, sel, "everyo"), sel)

    for panel, name in zip(board.why_live["panels"], ("outer", "work", "other")):
        assert panel["key"]["name"] == name and panel["panel"]["lines"]
        want = exact(name)
        assert (panel["panel"]["lines"], panel["panel"]["functions"]) == (
            want["lines"],
            want["functions"],
        )
    assert board.why["lines"] == exact("work")["lines"]
    board.close()


def test_the_dashboard_answers_a_selection_and_the_fold_button():
    pytest.importorskip("anywidget")
    from everyo.profiler import RunRegistry
    from everyo_lab.widgets.dashboard import Dashboard

    with ep.profile(sample=0.5, registry=RunRegistry()) as p:
        engine_work(0.2)
    board = Dashboard(p.run)
    assert board.why == {}
    board.why_target = _row("engine")
    assert board.why["state"] == "lines" and board.why["hide"] == "everyo"
    board.why_all_frames = True
    assert board.why["hide"] is None and board.why["toggle"] == "fold everyo's frames"
    board.why_target = {"type": "row"}  # not what the browser sends: said in the panel
    assert board.why["state"] == "error" and "select the row or bar again" in board.why["message"]
    board.why_target = {}
    assert board.why == {}
    board.close()


def test_while_live_the_first_rows_panels_are_kept_at_the_tables_pace():
    from everyo.profiler import RunRegistry
    from everyo_lab.views.report import build_report
    from everyo_lab.widgets import why_link

    now = [0.0]
    link = why_link.WhyLink(clock=lambda: now[0])
    with ep.profile(sample=0.5, registry=RunRegistry()) as p:
        link.follow(LiveSession(p.run))
        planted(0.3)
        p.flush()  # the events and samples so far (both reach the run in batches)
        p._sampler.flush()
        link.session.read()  # (a refresh reads, then builds the panels)
        report = build_report(p.run)
        live = link.live_rows(p.run, report, "everyo")
        assert [e["key"] for e in live["panels"]] == [
            {"group_by": "name", "kind": "user", "name": n}
            for n in [r["name"] for r in report.rows[: why_link.LIVE_ROWS]]
        ]
        first = live["panels"][0]["panel"]
        assert first["live"] and first["status"] and first["title"] == "why 'work'"
        assert first["lines"][0]["function"] == "spin"
        assert "first 3 rows" in live["other"]
        assert link.live_rows(p.run, report, "everyo") is None  # not due yet
        now[0] += why_link.LIVE_EVERY_S
        assert link.live_rows(p.run, report, "everyo")["panels"]
    assert link.live_rows(p.run, report, "everyo") == {}  # the run ended: the exact panels


def test_an_events_frames_cover_the_time_their_samples_stand_for():
    run, stacks = _growing_run()  # stacks: fn0, fn0>fn1, fn0>fn1>fn2, fn0>fn3
    sel = why.Selection("work", "bar", ("user", "work"), tid=7, start_ns=0, end_ns=100)
    t = [20, 40, 60, 80, 100]
    seq = [stacks[2], stacks[2], stacks[3], stacks[3], stacks[1]]
    wall = [20, 20, 20, 20, 20]
    out = why.frame_bars(run.samples, sel, t, seq, wall, "everyo")
    got = sorted((b["row"], b["left"], b["width"], b["text"]) for b in out["bars"])
    # fn0 is shared by every sample: the first row; then what ran under it, and when
    assert got == [
        (0, 0.0, 1.0, "fn0"),
        (1, 0.0, 0.4, "fn1"),
        (1, 0.4, 0.4, "fn3"),
        (1, 0.8, 0.2, "fn1"),
        (2, 0.0, 0.4, "fn2"),
    ]
    assert out["rows"] == 3
    # a gap (no sample for 30 ns): what was open ends with the last sample before it
    gap = why.frame_bars(run.samples, sel, [20, 70], [stacks[2], stacks[2]], [20, 20], "everyo")
    assert sorted((b["row"], b["left"], b["width"]) for b in gap["bars"])[:2] == [
        (0, 0.0, 0.2),
        (0, 0.5, 0.2),
    ]
