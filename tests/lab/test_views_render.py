"""Static renderings: the text/html fragment (no JavaScript) and the text/plain table."""

from __future__ import annotations

import re

import pytest
from views_runs import empty_run, model_run, regions_run, synthetic_run

from everyo_lab.views import OVERLAP_WARNING, flame_figure, render_html, render_text


@pytest.fixture(scope="module")
def run():
    return model_run(iterations=3)


def test_html_has_header_table_warning_and_svg_flame(run):
    out = render_html(run)
    assert "mlp" in out and "completed" in out
    # class names label the rows, the path qualifies a class used at one path only
    assert "<table" in out and ">Linear</td>" in out and ">ReLU [1]</td>" in out
    assert "Nested module timing intervals overlap" in out
    assert "do not add parent and child totals together" in out
    assert out.count('class="everyo-static-flame"') == 1 and "<svg" not in out  # sanitiser-proof
    assert "<script" not in out.lower() and "onclick" not in out.lower()


def test_html_share_bars_follow_the_rows(run):
    out = render_html(run, sort_by="calls", top=2)
    assert len(re.findall(r"<tr>", out)) == 3  # the header row and two rows
    widths = [float(w) for w in re.findall(r'<div style="width:([\d.]+)%', out)]
    assert len(widths) == 2 and all(0 <= w <= 100 for w in widths)


def test_html_escapes_every_text():
    run = regions_run(label="<script>alert(1)</script>", fail=ValueError("<img src=x>"))
    out = render_html(run)
    assert "<script" not in out and "<img" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "ValueError: &lt;img src=x&gt;" in out and "failed" in out


def test_html_of_empty_run():
    out = render_html(empty_run())
    assert "no events recorded" in out and "<svg" not in out and "<table" not in out


def test_html_of_a_million_events_stays_small():
    out = render_html(synthetic_run(250_000))
    assert len(out.encode()) < 200_000
    assert "1,000,000 events" in out and 'class="everyo-static-flame"' in out


def test_flame_chart_is_level_of_detail_merged():
    from everyo_lab.views.flame.flame_html import MAX_BARS

    run = synthetic_run(5_000)  # 20,000 events
    out = render_html(run)
    bars = out.count('<div title="')  # one <div> per bar
    assert 0 < bars <= MAX_BARS
    assert flame_figure(run)["layout"]["meta"]["events"] == 20_000


def test_dark_theme_html():
    out = render_html(empty_run(), theme="dark")
    assert "#e6edf3" in out  # the dark fallback colour
    with pytest.raises(ValueError):
        render_html(empty_run(), theme="sepia")


def test_text_has_aligned_table_and_header(run):
    out = render_text(run)
    lines = out.splitlines()
    assert lines[0].startswith("everyo profile 'mlp' · completed ·") and "events" in lines[0]
    table = lines[lines.index("") + 1 : len(lines) - 2]
    header, rows = table[0], table[1:]
    assert header.split()[:4] == ["name", "kind", "calls", "total"]
    # text columns start, numeric columns end, at the same place in every line
    kind_at = header.index("kind")
    end_of_calls = header.index("calls") + len("calls")
    for line in rows:
        assert line[kind_at - 1] == " " and line[kind_at] != " "
        assert line[end_of_calls - 1] != " " and line[end_of_calls] == " "
    assert len({len(line) for line in table[:-1]}) <= 2  # rstrip: only the share column varies
    assert lines[-1] == OVERLAP_WARNING


def test_text_of_failed_and_empty_runs():
    failed = render_text(regions_run(fail=KeyboardInterrupt()))
    assert "failed" in failed.splitlines()[0] and "error: KeyboardInterrupt" in failed
    last = render_text(empty_run()).splitlines()[-1]
    assert last.startswith("no events recorded") and "record_function" in last
    assert "--record-ops" in last


def test_text_groups_by_path(run):
    out = render_text(run, group_by="path", top=3)
    lines = out.splitlines()
    assert lines[lines.index("") + 1].startswith("module [path]")
    assert any(line.startswith("Linear [0] ") for line in lines)


def test_views_import_no_jupyter_or_plotting_packages():
    import subprocess
    import sys

    code = (
        "import sys, everyo_lab.views\n"
        "heavy = {'IPython', 'ipywidgets', 'plotly', 'anywidget', 'pandas'} & set(sys.modules)\n"
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
