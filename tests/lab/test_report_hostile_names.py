"""``to_html`` with event names a browser or an encoder trips on (issue 36): the report's data
can never end its ``<script>`` element early, and a name UTF-8 cannot hold still writes a page."""

from __future__ import annotations

import json
import re

import pytest

from everyo.profiler import profile, record_function
from everyo.profiler.storage.run import RunRegistry
from everyo_lab.html_report import to_html

pytest.importorskip("plotly")

FIGURES = r'<script type="application/json" id="everyo-figures">(.*?)</script>'


def _run(name: str):
    with profile(label="hostile", registry=RunRegistry()) as prof:
        for _ in range(3):
            with record_function("step"):
                with record_function(name):
                    pass
    return prof.run


@pytest.mark.parametrize("name", ["<!--<script>", "<!--<script></script>x", "a</script>b"])
def test_no_event_name_can_end_the_figures_script(tmp_path, name):
    text = to_html(_run(name), tmp_path / "r.html").read_text(encoding="utf-8")
    body = re.search(FIGURES, text, re.S).group(1)
    # "<!--" then "<script" inside a script element makes HTML parsers skip its "</script>",
    # which swallowed the page's own script: every chart stayed blank
    assert "<" not in body
    figures = json.loads(body)
    assert name in json.dumps(figures, ensure_ascii=False)  # the name itself is intact


def test_a_lone_surrogate_in_a_name_writes_a_page(tmp_path):
    name = "bad\udcffname"  # what os.fsdecode makes of a non-UTF-8 byte
    text = to_html(_run(name), tmp_path / "r.html").read_text(encoding="utf-8")
    assert "bad\ufffdname" in text  # shown as the replacement character in the table
