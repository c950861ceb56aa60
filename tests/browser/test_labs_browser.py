"""Lab 01 in JupyterLab (Chromium): the solved notebook runs all the way with every check
passing and its dashboards drawn; the student notebook stops at its first check with one red
"Not yet" line. Screenshots go to test-artifacts/ (lab-01-dashboard, lab-01-not-yet)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("playwright")
nbformat = pytest.importorskip("nbformat")

from harness import PROMPTS_JS, BrowserSession, missing  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LAB = "01_first_profile.ipynb"
ENV = {"EVERYO_LAB_SIZE": "small", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _code_index(path: Path, predicate) -> int:
    code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    return next(i for i, c in enumerate(code) if predicate(c))


def _run_all(s: BrowserSession) -> None:
    """Run All. On a fresh HOME Lab may ask "Select Kernel" a few seconds after the notebook
    looks ready, and then ignores Run All: wait for that dialog (up to 20 s) and accept it."""
    accept = s.page.locator(".jp-Dialog .jp-mod-accept")
    for _ in range(40):
        if accept.count():
            accept.first.click()
            break
        s.page.wait_for_timeout(500)
    s.run_all()
    s.page.wait_for_function(
        f"() => ({PROMPTS_JS})().some(p => /^\\[(\\*|\\d+)\\]/.test(p))", timeout=60000
    )


def test_lab_01_in_jupyterlab(tmp_path):
    reason = missing()
    if reason:
        pytest.skip(reason)
    solved, student = tmp_path / "solved", tmp_path / "student"
    solved.mkdir()
    student.mkdir()
    shutil.copy(ROOT / "examples" / "solutions" / LAB, solved / LAB)
    shutil.copy(ROOT / "examples" / LAB, student / LAB)
    profiled = _code_index(solved / LAB, lambda c: c.source.startswith("%%everyo_profile"))

    with BrowserSession(tmp_path, app="lab", env=ENV) as s:
        try:
            s.open(f"solved/{LAB}")
            _run_all(s)
            # done when every prompt shows [n]; an error output ends the wait at once
            s.page.wait_for_function(
                f"() => ({PROMPTS_JS})().every(p => /^\\[\\d+\\]/.test(p)) || !!document"
                ".querySelector('.jp-RenderedText[data-mime-type=\"application/vnd.jupyter.error\"]')",
                timeout=180000,
            )
            errors = s.page.locator(
                '.jp-RenderedText[data-mime-type="application/vnd.jupyter.error"]'
            )
            assert errors.count() == 0, errors.first.inner_text()[-2000:]
            s.wait_all_done(timeout_ms=60000)
            s.wait_plotly_chart(profiled)
            # every output's textContent: innerText leaves out the cells Lab has not laid out
            # (off screen, content-visibility), whichever they are for this page's heights
            text = s.page.evaluate(
                "() => [...document.querySelectorAll('.jp-Notebook .jp-OutputArea')]"
                ".map((o) => o.textContent).join('\\n')"
            )
            assert "\u2713 check 4 passed" in text and "Not yet" not in text
            assert "Error displaying widget" not in text
            s.screenshot(s.cell(profiled).locator(".everyo-dashboard"), "lab-01-dashboard")

            # a fresh workspace (?reset): only the student notebook is open, so cell indices
            # are its own
            s.page.goto(s.server.url(f"student/{LAB}") + "?reset")
            s.wait_ready()
            _run_all(s)
            # textContent, not innerText: Run All leaves the view at the end, and Lab skips
            # laying out cells off screen (content-visibility); and the output found by its
            # text, not by the cell's index: a windowed notebook keeps only some cells in the
            # DOM, which ones depending on the cells' heights
            s.page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-Notebook .jp-OutputArea')]"
                ".some((o) => /Not yet \\(check 1 of/.test(o.textContent))",
                timeout=180000,
            )
            output = s.page.locator(".jp-Notebook .jp-OutputArea", has_text="Not yet (check 1 of")
            output.first.scroll_into_view_if_needed()
            shown = output.first.text_content() or ""  # (laid out or not, as above)
            assert "\u2717 Not yet (check 1 of 01_first_profile)" in shown
            assert "Traceback" not in shown and len(shown.strip().splitlines()) == 1
            output = output.first
            s.screenshot(output, "lab-01-not-yet")
        except BaseException:
            s.page_screenshot("lab-01-failure")
            # what the page shows, laid out or not: the prompts and every error output
            print("prompts:", s.page.evaluate(f"({PROMPTS_JS})()"))
            print(
                "errors:",
                s.page.evaluate(
                    "() => [...document.querySelectorAll('.jp-OutputArea-output')]"
                    ".filter(o => /Not yet|Error|Traceback/.test(o.textContent))"
                    ".map(o => o.textContent.slice(0, 300))"
                ),
            )
            raise

    record = json.loads((solved / "results" / "01_first_profile.json").read_text())
    assert record["size"] == "small" and len(record["checks_passed"]) == 4
