"""The why panel, the static outputs and the magic for code that records no events (issue 42
item 3): the sampled call tree of the run (or of the time outside every event) shows by itself;
the magic samples a cell that records nothing else."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("IPython")
pytest.importorskip("anywidget")

from IPython.utils.capture import capture_output  # noqa: E402

import everyo.profiler as ep  # noqa: E402
from everyo.profiler import runs  # noqa: E402
from everyo.profiler.sampling.samples import SampleStore  # noqa: E402
from everyo.profiler.storage.run import Run  # noqa: E402
from everyo.profiler.storage.store import EventStore  # noqa: E402
from everyo_lab import Dashboard  # noqa: E402
from everyo_lab.magic import AUTO_SAMPLE_MS, cell_place  # noqa: E402
from everyo_lab.views.static import render_html  # noqa: E402
from everyo_lab.views.text import render_text  # noqa: E402
from everyo_lab.views.why import why_panel as why  # noqa: E402

PLAIN_CELL = """
import time

def slow_squares(n):
    s = 0
    for v in range(n):
        s += v * v
    return s

end = time.perf_counter() + 0.3
while time.perf_counter() < end:
    slow_squares(20000)
"""


def _run(events=(), samples=(), *, running: bool = False) -> Run:
    """A finished run on a fake clock: ``events`` ``(start, dur)`` on thread 7; ``samples``
    ``(t_ns, function index)`` of thread 7, 10 ns each, in ``/x/app.py``. ``running``: still
    recording, at 1000 ns."""
    cols = {
        "start_ns": np.array([e[0] for e in events], np.int64),
        "dur_ns": np.array([e[1] for e in events], np.int64),
        "key": np.zeros(len(events), np.int32),
        "thread": np.zeros(len(events), np.int16),
        "depth": np.zeros(len(events), np.int16),
    }
    store = EventStore.from_columns(cols, [("user", "work", "")], threads=[(7, "main")])
    now = [0]
    options = {"sample_mode": "wall", "sample_ms": 1.0}
    run = Run(store, label="planted", options=options, clock=lambda: now[0])
    now[0] = 1000
    if not running:
        run.finish(wall_ns=1000)
    s = SampleStore()
    root = s.stack_id(-1, s.frame_id("m", "/x/app.py", 1, "<module>"))
    stacks = [s.stack_id(root, s.frame_id(i, "/x/app.py", 10 + i, f"fn{i}")) for i in range(3)]
    s.append(
        {
            "t_ns": [t for t, _ in samples],
            "tid": [7] * len(samples),
            "stack": [stacks[f] for _, f in samples],
            "wall_ns": [10] * len(samples),
            "cpu_ns": [10] * len(samples),
        }
    )
    run.samples = s
    return run


def test_the_panel_of_a_run_without_events_is_its_sampled_call_tree():
    run = _run(samples=[(t, 1) for t in range(10, 310, 10)] + [(t, 2) for t in range(310, 410, 10)])
    sel = why.select(run, {"type": "outside", "label": "anything"})
    assert sel.is_outside and sel.label == "the run"
    panel = why.panel(why.exact_hot_lines(run, sel, "everyo"), sel)
    assert panel["state"] == "lines" and "where the time went" in panel["title"]
    assert "call" not in panel["summary"].split("·")[0]  # no "1 calls": the run is no call
    assert "40 samples" in panel["summary"]
    assert [(line["function"], line["self"]) for line in panel["lines"][:2]] == [
        ("fn1", "75.0 %"),
        ("fn2", "25.0 %"),
    ]
    assert panel["lines"][0]["where"] == "app.py:11"
    assert panel["tree"]["children"][0]["function"] == "<module>"
    assert "hint" not in panel  # (no bar to select: the run has none)


def test_the_panel_of_the_time_outside_events_leaves_out_their_samples():
    inside = [(t, 0) for t in range(110, 400, 10)]
    run = _run(events=[(100, 300)], samples=inside + [(t, 1) for t in range(500, 900, 10)])
    sel = why.outside_selection(run)
    assert sel.label == "time outside every event"
    hot = why.exact_hot_lines(run, sel, "everyo")
    assert {line["function"] for line in hot.lines} == {"fn1", "<module>"}


def test_a_dashboard_of_a_sampled_run_without_events_opens_the_panel_by_itself():
    run = _run(samples=[(t, 1) for t in range(10, 310, 10)])
    board = Dashboard(run)
    assert board.why_target == {"type": "outside", "label": "the run"}
    assert board.why["state"] == "lines" and board.why["lines"][0]["function"] == "fn1"
    # a run with events: nothing opens by itself (its rows and bars are there to select)
    assert (
        Dashboard(_run(events=[(0, 900)], samples=[(t, 1) for t in range(10, 990, 10)])).why == {}
    )


def test_the_static_outputs_of_a_run_without_events_show_where_the_time_went():
    run = _run(samples=[(t, 1) for t in range(10, 310, 10)] + [(t, 2) for t in range(310, 410, 10)])
    text = render_text(run)
    assert "no events recorded; where the time went" in text and "app.py:11  fn1" in text
    assert "call tree" in text
    page = render_html(run)
    assert "fn1" in page and "everyo-static-tree" in page
    assert "the stack samples show where the time went" in page  # the note, not "wrap code"


def test_a_cell_that_records_nothing_is_sampled_by_default(shell, fresh_runs):
    with capture_output() as cap:
        result = shell.run_cell(f"%%everyo_profile --no-live --label plain\n{PLAIN_CELL}")
    assert result.success
    run = runs["plain"]
    assert run.num_events == 0 and run.samples is not None and len(run.samples) > 0
    assert run.options["sample_ms"] == AUTO_SAMPLE_MS and "sample_auto" not in run.options
    final = [o.data for o in cap.outputs if "text/html" in o.data][-1]
    assert "slow_squares" in final["text/plain"] and "where the time went" in final["text/plain"]
    assert "Cell In[" in final["text/plain"]  # IPython's name for the cell, not its temp file
    board_why = why.panel(ep.hot_lines(run, None), why.outside_selection(run))
    assert board_why["functions"][0]["where"].startswith("Cell In[")
    hot = ep.hot_lines(run, None)
    assert hot.top_line["function"] == "slow_squares"


def test_a_cell_with_events_keeps_none_of_the_samples_it_did_not_ask_for(shell, fresh_runs):
    body = "from everyo.profiler import record_function\nwith record_function('w'):\n"
    body += "    sum(i * i for i in range(200_000))\n"
    with capture_output():
        assert shell.run_cell(f"%%everyo_profile --no-live --label ev\n{body}").success
        assert shell.run_cell(f"%%everyo_profile --no-live --no-sample --label off\n{PLAIN_CELL}")
    assert runs["ev"].num_events == 1 and runs["ev"].samples is None
    assert runs["ev"].options["sample_ms"] is None
    assert runs["off"].samples is None


def test_sample_and_no_sample_together_are_a_usage_message(shell, fresh_runs):
    with capture_output() as cap:
        shell.run_cell("%%everyo_profile --sample 1 --no-sample\npass\n")
    assert "--sample and --no-sample contradict each other" in cap.stdout
    assert len(runs) == 0


def test_a_cell_is_named_as_ipython_names_it(shell):
    shell.run_cell("x = 1\n", store_history=True)
    count = shell.execution_count - 1
    files = [f for f, n in shell.compile._filename_map.items() if n == count]
    assert files and cell_place(files[0], 11) == f"Cell In[{count}], line 11"
    assert cell_place(files[0], None) == f"Cell In[{count}]"  # the cell alone: a function's
    assert cell_place("/home/me/train.py", 3) is None


# -- the flame chart of the run's call tree; the link to the outside panel -------------------
def _node(function, total, children=(), line=1):
    return {
        "file": "/x/app.py",
        "line": line,
        "function": function,
        "total_ns": total,
        "self_ns": total - sum(c["total_ns"] for c in children),
        "share": 0.0,
        "children": list(children),
    }


def test_tree_bars_lay_the_call_tree_out_by_shares_heaviest_first_under_the_caller():
    small = _node("small", 10)
    big = _node("big", 60, [_node("inner", 30)])
    root = _node("<module>", 100, [small, big])
    tree = {**_node("the run", 100, [root]), "file": ""}
    out = why.tree_bars(tree, wall_ns=2_000_000)
    got = [(b["row"], b["left"], b["width"], b["text"]) for b in out["bars"]]
    assert got == [
        (0, 0.0, 1.0, "<module>"),
        (1, 0.0, 0.6, "big"),  # the heaviest callee first, though listed second
        (1, 0.6, 0.1, "small"),
        (2, 0.0, 0.3, "inner"),
    ]
    assert out["rows"] == 3 and (out["start_ms"], out["end_ms"]) == (0.0, 2.0)
    assert out["bars"][1]["title"] == "big · app.py:1 · 0.000060 ms (60.0 %)"


def test_tree_bars_leave_out_what_is_too_narrow_or_too_deep():
    deep = _node("leaf", 100)
    for k in range(why.FRAME_ROWS + 3):
        deep = _node(f"f{k}", 100, [deep])
    tiny = _node("tiny", 1)
    tree = {**_node("the run", 1001, [deep, tiny]), "file": ""}
    out = why.tree_bars(tree, wall_ns=1000)
    assert out["rows"] == why.FRAME_ROWS
    assert "tiny" not in {b["text"] for b in out["bars"]}  # 0.1 %: below TREE_BAR_MIN


def test_the_dashboard_of_a_run_without_events_sends_its_call_tree_to_the_flame_chart():
    run = _run(samples=[(t, 1) for t in range(10, 310, 10)] + [(t, 2) for t in range(310, 410, 10)])
    board = Dashboard(run)
    expand = board.why["expand"]
    got = [(b["row"], b["left"], b["width"], b["text"]) for b in expand["bars"]]
    assert got == [(0, 0.0, 1.0, "<module>"), (1, 0.0, 0.75, "fn1"), (1, 0.75, 0.25, "fn2")]
    assert expand["end_ms"] == run.wall_ns / 1e6
    assert "drawn in the flame chart" in board.why["expand"]["caption"]
    # shares as the panel's tree writes them (one producer of figures)
    assert "75.0 %" in expand["bars"][1]["title"] and board.why["tree"]["share"] == "100.0 %"
    # the fold button rebuilds the panel: the expansion comes with it
    board.why_all_frames = True
    assert board.why["expand"]["bars"][0]["text"] == "<module>"
    # the link opens it again once closed (the browser hides it while the panel is open)
    assert board.why_outside["target"] == board.why_target
    assert board.why_outside["text"] == "where the time went: the run's sampled call tree"


def test_a_run_with_much_time_outside_its_events_links_to_that_panel():
    inside = [(t, 0) for t in range(110, 400, 10)]  # 29 samples inside the event
    outside = [(t, 1) for t in range(500, 900, 10)]  # 40 outside
    board = Dashboard(_run(events=[(100, 300)], samples=inside + outside))
    link = board.why_outside
    assert link["target"] == {"type": "outside", "label": "time outside every event"}
    assert link["text"].startswith("58.0 % of the sampled time is outside every event")
    assert board.why == {}  # nothing opens by itself: the link does
    board.why_target = link["target"]
    assert board.why["state"] == "lines" and "time outside every event" in board.why["title"]
    assert board.why["expand"] is None  # its events are drawn: no call tree over them


def test_no_link_when_little_time_is_outside_the_events_or_there_are_no_samples():
    inside = [(t, 0) for t in range(110, 400, 10)]
    board = Dashboard(_run(events=[(100, 300)], samples=inside + [(450, 1)]))
    assert board.why_outside == {}  # 1 of 30 samples: under OUTSIDE_MIN_SHARE
    run = _run(events=[(100, 300)])
    run.samples = None
    assert Dashboard(run).why_outside == {}


def test_the_static_html_of_a_run_without_events_draws_its_call_tree_as_a_flame_chart():
    run = _run(samples=[(t, 1) for t in range(10, 310, 10)] + [(t, 2) for t in range(310, 410, 10)])
    page = render_html(run)
    assert 'class="everyo-static-tree-flame"' in page
    chart = page.split('class="everyo-static-tree-flame"', 1)[1]
    # the dashboard's bars: fn2 beside fn1, a quarter of the width, under <module>
    assert 'title="fn2 · app.py:12 · ' in chart and "(25.0 %)" in chart
    assert "left:75.000%;top:16px;width:25.000%" in chart
    assert "left:0.000%;top:0px;width:100.000%" in chart  # <module>: the whole run
    assert "<svg" not in page and "<script" not in page
    # a run with events: its own flame chart, no call tree drawn as one
    inside = [(t, 0) for t in range(110, 400, 10)]
    busy = _run(events=[(100, 300)], samples=inside + [(t, 1) for t in range(500, 900, 10)])
    assert "everyo-static-tree-flame" not in render_html(busy)


def test_while_a_run_without_events_records_the_chart_draws_its_call_tree_so_far():
    run = _run(samples=[(t, 1) for t in range(10, 310, 10)], running=True)
    board = Dashboard(run)
    assert board.why_target == {}  # (the first refresh is not a live one)
    board.refresh(live=True)
    assert board.why_target == {"type": "outside", "label": "the run"}
    assert board.why["live"] and board.why["status"] == why.LIVE_STATUS
    bars = [(b["row"], b["width"], b["text"]) for b in board.why["expand"]["bars"]]
    assert bars == [(0, 1.0, "<module>"), (1, 1.0, "fn1")]
    assert board.why["expand"]["end_ms"] == 0.001  # the run so far
    # the magic's own samples (sample_auto) are what a cell without events has: shown too
    auto = _run(samples=[(t, 2) for t in range(10, 110, 10)], running=True)
    auto.options["sample_auto"] = True
    board = Dashboard(auto)
    board.refresh(live=True)
    assert board.why["expand"]["bars"][1]["text"] == "fn2"
    # no samples yet: nothing opens
    board = Dashboard(_run(running=True))
    board.refresh(live=True)
    assert board.why_target == {}
