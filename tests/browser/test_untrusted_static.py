"""What a notebook keeps for readers without the kernel survives an untrusted reopen (issue 33).

A notebook the reader's Jupyter did not execute (an instructor's, one from a repository) is "Not
Trusted": JupyterLab and Notebook 7 render its ``text/html`` through a sanitiser that drops
``<svg>`` (keeping its text, so an SVG flame chart read as "Sequential: 1.177 msSequential...")
and any style it cannot check (a ``var()`` colour: the share bars vanished). The notebook here
holds the outputs the magic saves (the dashboard's and a comparison's bundles), written without
a signature, and is opened in Chromium: the flame chart's bars, the share bars, the memory
chart's columns and the sweep's three charts must show, with no tooltip text run into the page,
and a sampled run's hot lines (their share bars too).
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

nbformat = pytest.importorskip("nbformat")

from harness import KERNELSPEC, BrowserSession, missing  # noqa: E402

CHECK_JS = """
() => [...document.querySelectorAll('.jp-OutputArea-output')].map((out) => {
  const flame = out.querySelector('.everyo-static-flame');
  const bars = flame ? [...flame.children] : [];
  const filled = (el) => getComputedStyle(el).backgroundColor !== 'rgba(0, 0, 0, 0)';
  const drawn = bars.filter((b) => {
    const r = b.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && filled(b);
  });
  const shares = [...out.querySelectorAll('.everyo-share > div')].filter(filled);
  const shown = (els) => [...els].filter((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && filled(el);
  });
  const memory = out.querySelector('.everyo-static-memory');
  const columns = memory ? [...memory.children].filter((c) => c.title.includes(' live from ')) : [];
  const points = out.querySelectorAll('.everyo-sweep-point');
  return {
    memories: out.querySelectorAll('.everyo-static-memory').length,
    columns: columns.length,
    columnsDrawn: shown(columns).length,
    charts: out.querySelectorAll('.everyo-sweep-chart').length,
    points: points.length,
    pointsDrawn: shown(points).filter((p) => p.title.startsWith('batch ')).length,
    svg: out.querySelectorAll('svg').length,
    flames: out.querySelectorAll('.everyo-static-flame').length,
    bars: bars.length,
    drawn: drawn.length,
    titles: drawn.filter((b) => b.title.includes(' ms')).length,
    shares: out.querySelectorAll('.everyo-share').length,
    shareBars: shares.length,
    text: out.innerText,
  };
})
"""


def _outputs() -> list[dict]:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lab"))
    from test_views_sweep import ROWS
    from views_runs import FakeClock, model_run, train_run

    import everyo as eo
    from everyo.profiler import profile
    from everyo.profiler.storage.run import RunRegistry
    from everyo_lab.views.compare.compare_static import render_compare_html
    from everyo_lab.views.compare.compare_view import build_comparison
    from everyo_lab.views.sweep.sweep_report import build_sweep_report
    from everyo_lab.views.sweep.sweep_static import render_sweep_html
    from everyo_lab.widgets.dashboard import static_bundle

    bundle = static_bundle(train_run(iterations=6))
    model = eo.Sequential(eo.Linear(4, 64, seed=0), eo.ReLU(), eo.Linear(64, 2, seed=1))
    with profile(profile_memory=True, clock=FakeClock(tick=1000), registry=RunRegistry()) as p:
        for _ in range(4):  # allocations spread over time: a memory chart of many columns
            model(eo.zeros(16, 4))
    memory = static_bundle(p.run)
    sweep = {"text/html": render_sweep_html(build_sweep_report(ROWS)), "text/plain": "sweep"}
    compare = {
        "text/html": render_compare_html(build_comparison(model_run(), model_run())),
        "text/plain": "everyo comparison",
    }
    sampled = static_bundle(_sampled_run())  # with the hot lines of its top rows
    probe = {  # the sanitiser drops the <svg>: proof that the notebook is shown untrusted
        "text/html": '<div class="everyo-probe">probe<svg><title>probe title</title></svg></div>',
        "text/plain": "probe",
    }
    outputs = (bundle, compare, memory, sweep, sampled, probe)
    return [nbformat.v4.new_output("display_data", data=data) for data in outputs]


def _sampled_run():
    import time

    import everyo.profiler as ep
    from everyo.profiler import RunRegistry

    def rows(n):
        s = 0.0
        for i in range(n):
            s += i**0.5  # planted hot line
        return s

    with ep.profile(sample=0.5, registry=RunRegistry(), label="sampled") as p:
        end = time.perf_counter() + 0.3
        while time.perf_counter() < end:
            with ep.record_function("work"):
                rows(5000)
    return p.run


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_static_charts_survive_the_sanitiser_of_an_untrusted_notebook(tmp_path, app):
    reason = missing()
    if reason:
        pytest.skip(reason)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%everyo_profile\ntrain()")
    cell.outputs = _outputs()
    cell.execution_count = 1
    nb.cells = [cell]
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nbformat.write(nb, tmp_path / "untrusted.ipynb")  # no signature: "Not Trusted"
    with BrowserSession(tmp_path, app=app) as session:
        session.open("untrusted.ipynb")
        session.page.wait_for_selector(".jp-OutputArea-output .everyo-static-flame", timeout=30000)
        session.page.wait_for_selector(".jp-OutputArea-output .everyo-probe", timeout=30000)
        shown = session.page.evaluate(CHECK_JS)
    board, comparison, memory, sweep, sampled, probe = shown
    assert probe["svg"] == 0, "the notebook was rendered trusted: the sanitiser did not run"
    assert board["svg"] == 0 and board["flames"] == 1, board  # the sanitiser kept the chart
    assert board["drawn"] == board["bars"] > 3 and board["titles"] == board["bars"], board
    assert board["shares"] > 0 and board["shareBars"] == board["shares"], board
    assert "msSequential" not in board["text"] and ": 0.0" not in board["text"]
    assert comparison["flames"] == 2 and comparison["drawn"] == comparison["bars"] > 3
    # the hot lines of the sampled run's top rows: kept, their share bars drawn
    assert "why 'work'" in sampled["text"] and "# planted hot line" in sampled["text"], sampled
    assert (
        sampled["svg"] == 0 and sampled["shares"] > 1 and sampled["shareBars"] == sampled["shares"]
    )
    assert memory["svg"] == 0 and memory["memories"] == 1, memory
    assert memory["columnsDrawn"] == memory["columns"] > 3, memory
    assert sweep["svg"] == 0 and sweep["charts"] == 3, sweep
    assert sweep["pointsDrawn"] == sweep["points"] == 3 * 4, sweep  # 4 points measured
    assert "is recommended" in sweep["text"] and "batch size" in sweep["text"]
