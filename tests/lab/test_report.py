"""to_html(run, path): a complete offline report, written atomically."""

from __future__ import annotations

import json
import re

import pytest
from views_runs import empty_run, regions_run

from everyo.errors import EveryOExportError
from everyo_lab.html_report import to_html

pytest.importorskip("plotly")


def _figures(text: str) -> dict:
    match = re.search(r'<script type="application/json" id="everyo-figures">(.*?)</script>', text)
    return json.loads(match.group(1))


def test_report_is_a_complete_offline_document(tmp_path):
    from plotly.offline import get_plotlyjs

    run = regions_run(label="report run")
    path = to_html(run, tmp_path / "report.html")
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert get_plotlyjs()[:2000] in text  # plotly.js is inlined, not fetched
    assert re.search(r"<script[^>]*\ssrc=", text) is None
    assert "report run" in text and "<table" in text and "Nested module timing" in text
    figures = _figures(text)
    assert set(figures) == {"flame", "icicle"}
    flame_names = {t["name"] for t in figures["flame"]["data"]}
    assert {"user"} <= flame_names  # record_function regions are coloured by kind
    assert figures["icicle"]["data"][0]["labels"][0] == "step"
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_report_data_cannot_close_the_script_element(tmp_path):
    run = regions_run(label="</script><script>alert(1)</script>")
    text = to_html(run, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<script>alert(1)" not in text
    assert _figures(text)["flame"]["data"]  # still parses


def test_report_of_empty_run(tmp_path):
    text = to_html(empty_run(), tmp_path / "e.html").read_text(encoding="utf-8")
    assert "no events recorded" in text and _figures(text) == {}


def test_report_replaces_an_existing_file(tmp_path):
    target = tmp_path / "r.html"
    target.write_text("old")
    to_html(regions_run(), target)
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("where", ["missing/dir/r.html", "."])
def test_bad_path_is_an_export_error_naming_it(tmp_path, where):
    bad = tmp_path / where
    with pytest.raises(EveryOExportError, match=re.escape(str(bad))):
        to_html(regions_run(), bad)
    assert not any(p.name.endswith(".tmp") for p in tmp_path.rglob("*"))
