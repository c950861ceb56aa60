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
from everyo.profiler.run import Run  # noqa: E402
from everyo.profiler.samples import SampleStore  # noqa: E402
from everyo.profiler.store import EventStore  # noqa: E402
from everyo_lab import Dashboard  # noqa: E402
from everyo_lab.magic import AUTO_SAMPLE_MS, cell_place  # noqa: E402
from everyo_lab.views import why  # noqa: E402
from everyo_lab.views.static import render_html  # noqa: E402
from everyo_lab.views.text import render_text  # noqa: E402

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


def _run(events=(), samples=()) -> Run:
    """A finished run on a fake clock: ``events`` ``(start, dur)`` on thread 7; ``samples``
    ``(t_ns, function index)`` of thread 7, 10 ns each, in ``/x/app.py``."""
    cols = {
        "start_ns": np.array([e[0] for e in events], np.int64),
        "dur_ns": np.array([e[1] for e in events], np.int64),
        "key": np.zeros(len(events), np.int32),
        "thread": np.zeros(len(events), np.int16),
        "depth": np.zeros(len(events), np.int16),
    }
    store = EventStore.from_columns(cols, [("user", "work", "")], threads=[(7, "main")])
    run = Run(store, label="planted", options={"sample_mode": "wall", "sample_ms": 1.0})
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
