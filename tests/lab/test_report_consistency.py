"""The Report is the only producer (issue 33): at every live refresh, each number the header,
the steps box, the hot spots and the table show comes from the one report of that refresh, and
they agree with each other (the same events, the same steps, the same self times)."""

from __future__ import annotations

import pytest
from fakes import FakeClock

import everyo as eo
from everyo.profiler import Profiler
from everyo.profiler.storage.run import RunRegistry

pytest.importorskip("anywidget")


def _train_steps(model, opt, n):
    loss_fn = eo.MSELoss()
    x, y = eo.zeros(16, 4), eo.zeros(16, 1)
    for _ in range(n):
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def check_one_report(report: dict, events_sent: int) -> None:
    """The figures of one live report agree with each other, as the glossary defines them."""
    rows = {r["name"]: r for r in report["rows"]}
    assert report["events"] == events_sent == sum(r["calls"] for r in report["rows"])
    assert report["steps"]["count"] == rows["SGD.step"]["calls"]  # optimizer steps
    assert report["hot_spots"]
    for spot in report["hot_spots"]:
        assert spot["self_ms"] == rows[spot["name"]]["self_ms"]
        assert spot["share"] == pytest.approx(spot["self_ms"] / report["wall_ms"])
    for row in report["rows"]:
        assert row["share"] == pytest.approx(row["total_ms"] / report["wall_ms"])
    # the table the widget lays out: the same rows' numbers, spelt once
    table = report["table"]
    keys = [c["key"] for c in table["columns"]]
    assert keys[0] == "label"
    cells = {row["texts"][0]: dict(zip(keys, row["texts"], strict=True)) for row in table["rows"]}
    for row in report["rows"]:
        assert cells[row["label"]]["calls"] == f"{row['calls']:,d}"
        assert cells[row["label"]]["self_ms"] == f"{row['self_ms']:.3f}"
    # the words the widget shows as they are, spelt from the same numbers
    texts = report["texts"]
    assert texts["events"] == f"{report['events']:,} events"
    assert texts["steps"].startswith(f"{report['steps']['count']:,} steps (optimizer): median")
    assert texts["hot_spots"] == [
        f"{s['label']} {cells[s['label']]['self_ms']} ms ({s['share']:.1%})"
        for s in report["hot_spots"]
    ]


def test_every_number_of_each_live_refresh_comes_from_its_one_report():
    from everyo_lab.widgets.dashboard import Dashboard

    model = eo.Sequential(eo.Linear(4, 8, seed=0), eo.ReLU(), eo.Linear(8, 1, seed=1))
    opt = eo.optim.SGD(model.parameters(), lr=0.1)
    p = Profiler(label="consistent", registry=RunRegistry(), clock=FakeClock(1000)).start()
    sent = []
    try:
        board = Dashboard(p.run)
        send = board._send_all
        board._send_all = lambda messages: (sent.extend(messages), send(messages))[1]
        for steps in (3, 1, 5, 2):
            _train_steps(model, opt, steps)
            p.flush()
            board.refresh(live=True)
            report = sent[-1].header["report"]  # what the browser shows for this refresh
            assert report is board.shown_report  # sent once: the kernel keeps that very copy
            check_one_report(report, board._stream.sent)
        assert board.shown_report["steps"]["count"] == 11
    finally:
        p.stop()
    board.refresh()  # the final report holds together too
    check_one_report(board.shown_report, p.run.num_events)
