"""An HTML report whose event names hold script-like text still draws its charts in Chromium
(issue 36): an event named ``<!--<script>`` put the HTML parser in the script element's
"double-escaped" state, which swallowed the report's own script, and every chart stayed blank.
No Jupyter here: the report is a file, dumped by headless Chromium after its scripts ran."""

from __future__ import annotations

import os
import subprocess

import pytest

pytestmark = [pytest.mark.browser]

pytest.importorskip("plotly")

from harness import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

from everyo.profiler import profile, record_function  # noqa: E402
from everyo.profiler.storage.run import RunRegistry  # noqa: E402
from everyo_lab.html_report import to_html  # noqa: E402


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing")
@pytest.mark.parametrize("name", ["<!--<script>", "</script><!--", "plain"])
def test_the_report_draws_its_charts_whatever_the_event_names(tmp_path, name):
    with profile(label="names", registry=RunRegistry()) as prof:
        for _ in range(3):
            with record_function("step"):
                with record_function(name):
                    pass
    path = to_html(prof.run, tmp_path / "report.html")
    dom = subprocess.run(
        [CHROMIUM, "--headless", *CHROMIUM_ARGS, "--virtual-time-budget=10000", "--dump-dom",
         path.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert dom.count('class="main-svg"') >= 2  # plotly drew the flame chart and the icicle
