"""``%%everyo_profile --sample``: a profiled cell's stack samples, kept when the cell raises, and
the hot lines of its top rows in the static output."""

from __future__ import annotations

import pytest

pytest.importorskip("IPython")
pytest.importorskip("anywidget")
pytest.importorskip("plotly")

from IPython.utils.capture import capture_output  # noqa: E402

import everyo.profiler as ep  # noqa: E402
from everyo.profiler import runs  # noqa: E402

HOT = """
import time
from everyo.profiler import record_function

def rows(n):
    s = 0.0
    for i in range(n):
        s += i ** 0.5  # hot
    return s

end = time.perf_counter() + 0.2
while time.perf_counter() < end:
    with record_function("prepare"):
        rows(5000)
"""


pytestmark = pytest.mark.usefixtures("fresh_runs")  # tests/lab/conftest.py


def test_a_sampled_cell_names_its_hot_line(shell):
    with capture_output() as cap:
        result = shell.run_cell(f"%%everyo_profile --no-live --sample 0.5 --label hot\n{HOT}")
    assert result.success
    # the static output keeps the top rows' hot lines (no kernel needed to read them), in its
    # HTML (tables and text only: an untrusted notebook's sanitiser keeps them) and its text
    final = [o.data for o in cap.outputs if "text/html" in o.data][-1]
    page = final["text/html"]
    assert "why &#x27;prepare&#x27;" in page and "# hot" in page
    assert "<script" not in page and "<svg" not in page.split("flame chart")[0]
    assert "hot lines of 'prepare'" in final["text/plain"] and "# hot" in final["text/plain"]
    assert "hot lines of" not in cap.stdout  # once, in the output that is kept
    hot = ep.hot_lines(runs["hot"], "prepare")
    assert hot.samples > 0
    assert hot.top_line["function"] == "rows" and "# hot" in hot.top_line["source"]


def test_a_cell_that_raises_keeps_its_samples(shell):
    body = HOT + "raise ValueError('planned')\n"
    with capture_output():
        result = shell.run_cell(f"%%everyo_profile --no-live --sample 0.5 --label boom\n{body}")
    assert not result.success
    run = runs["boom"]
    assert run.status == "failed" and len(run.samples) > 0
    assert ep.hot_lines(run, "prepare").top_line["function"] == "rows"
