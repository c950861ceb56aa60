"""The live dashboard in JupyterLab and Notebook 7, driven in Debian's Chromium.

One JupyterLab page for most checks (a lab start costs 10-20 s on this 2-core machine), in this
order, since they share the page and the kernel:

1. ``%load_ext``, a warm-up profiled cell (the page's first dashboard loads plotly.js), then a
   4-s profiled training loop sampled every 100 ms in the page: the chart redraws while the cell
   shows ``[*]``, the first chart comes soon after the start, the cell's websocket bytes stay
   under 2 MB, no main-thread stall near a second, depth 0 on top throughout; then a 3-s
   compute-bound loop, whose header must show new reports all along;
2. zoom: drags, a double-click reset and another drag; plotly's x range is ``data-window`` and
   every drawn bar overlaps it;
3. the step table's zoom buttons and "zoom to step";
4. the summary table (class names with paths) and the Chrome-trace export;
5. save, kernel shutdown, reload: the static rendering is what shows, no widget error text;
   plotly.js crossed the websocket once for the page.

Notebook 7 has its own module (``test_notebook7.py``). Times are asserted loosely (tests never
assert tight wall-clock thresholds); ``benchmarks/dashboard_browser.py`` reports the real
figures. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from harness import (
    BrowserSession,
    Watch,
    missing,
    training_cell,
    warmup_cell,
    write_notebook,
)

pytestmark = pytest.mark.browser

if missing():
    pytest.skip(missing(), allow_module_level=True)

NOTEBOOK = "dashboard.ipynb"
CELLS = [
    "%load_ext everyo_lab",
    warmup_cell("warmup"),
    training_cell(4.0, magic="--label browser"),
    training_cell(3.0, magic="--label busy", sleep=None),  # compute-bound: ~150,000 events/s
    training_cell(8.0, magic="--label pointed"),  # pointed at and zoomed while it runs
]
WARM, LIVE, BUSY, POINTED = 1, 2, 3, 4
MAX_CELL_BYTES = 2_000_000  # TARGETS.md: bytes sent to the browser per profiled cell
FIRST_CHART_S = 5.0  # loose: the target is 1.5 s, reported by the benchmark
STALL_MS = 1000  # loose: the target is 200 ms, reported by the benchmark


def _reversed(yrange) -> bool:
    return yrange is not None and yrange[0] > yrange[1]


@dataclass
class Lab:
    session: BrowserSession
    root: Path
    watch: Watch
    live_bytes: int
    longtasks: list[float]


def _wait_drawn(s: BrowserSession, index: int, timeout_ms: int = 60000) -> dict:
    s.page.wait_for_function(
        "i => { const b = window.__everyoBoard(i);"
        " return b && b.plotly === 'loaded' && b.axes === 'plotly' && b.bars > 0 && b.yrange; }",
        arg=index,
        timeout=timeout_ms,
    )
    return s.board(index)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    write_notebook(root / NOTEBOOK, CELLS)
    with BrowserSession(root, app="lab") as s:
        try:
            s.open(NOTEBOOK)
            s.run_cell(0)
            s.wait_prompt(0)
            s.run_cell(WARM)
            s.wait_prompt(WARM)
            _wait_drawn(s, WARM)  # plotly.js is in the page before the live cell starts
            s.bytes.wait_quiet(s.page)

            mark = s.bytes.mark()
            started = s.start_watch(LIVE)
            s.run_cell(LIVE)
            # one picture of the chart while the cell runs (costs the sampler one gap)
            s.page.wait_for_function(
                "i => { const b = window.__everyoBoard(i);"
                " return b && (b.bars > 0 || !b.prompt.startsWith('[*]')); }",
                arg=LIVE,
                timeout=60000,
            )
            if s.prompts()[LIVE].startswith("[*]"):
                s.page.wait_for_timeout(1000)
                s.screenshot(s.cell(LIVE).locator(".everyo-flame-box"), "dashboard-live")
            s.wait_prompt(LIVE, timeout_ms=60000)
            watch = s.stop_watch(started)
            t0, t1 = watch.span_ms()
            longtasks = s.longtasks(t0, t1)
            s.bytes.wait_quiet(s.page)
            live_bytes = s.bytes.between(mark)
            _wait_drawn(s, LIVE)
        except BaseException:
            s.page_screenshot("dashboard-failure")
            raise
        yield Lab(s, root, watch, live_bytes, longtasks)


@pytest.fixture
def page_on_failure(request, lab):
    failed = request.session.testsfailed
    yield lab.session
    if request.session.testsfailed > failed:
        lab.session.page_screenshot(f"failure-{request.node.name}")


def test_live_chart_redraws_while_the_cell_runs(lab, page_on_failure):
    watch = lab.watch
    running = watch.running()
    t0, t1 = watch.span_ms()
    seen = [(round((x["t"] - t0) / 1000, 2), x.get("redraws"), x.get("events")) for x in running]
    assert (t1 - t0) / 1000 >= 3.0, f"the cell showed [*] only {(t1 - t0) / 1000:.1f} s: {seen}"
    first = next((x for x in running if x.get("bars", 0) > 0), None)
    assert first is not None, f"no chart while the cell ran: (s, redraws, events) {seen}"
    first_s = (first["t"] - t0) / 1000
    assert first_s <= FIRST_CHART_S, f"first chart {first_s:.2f} s after the start"
    rate = watch.changes_per_second("redraws")
    assert rate >= 2.0, f"{rate:.2f} redraws/s while running: {seen}"
    assert watch.changes("events") >= 4, f"events held barely grew: {seen}"
    # depth 0 on top (reversed y axis) in every live sample
    ranges = [x["yrange"] for x in running if x.get("yrange")]
    assert ranges and all(_reversed(r) for r in ranges), ranges[:5]
    # nobody pointed at the chart: its axes were the canvas's, not plotly's, while it ran (the
    # last second left out: the final report, which brings plotly's, comes before the prompt)
    axes = [x.get("axes") for x in running if x.get("bars", 0) > 0 and x["t"] < t1 - 1000]
    assert axes and all(a == "canvas" for a in axes), axes


def test_compute_bound_cell_gets_new_reports_all_along(lab, page_on_failure):
    """Each live refresh of a loop recording ~150,000 events a second folds in tens of
    thousands: the pace must not stretch (it once gave one live report in such a 3-s cell)."""
    s = lab.session
    s.bytes.wait_quiet(s.page)
    watch = s.run_and_watch(BUSY, timeout_ms=60000)
    running = [x for x in watch.running() if x.get("board")]
    headers = [(round((x["t"] - running[0]["t"]) / 1000, 2), x["header"][-60:]) for x in running]
    assert watch.changes("header") >= 4, f"new reports while running (s, header): {headers}"
    # the live table's numbers follow too (a live report comes in its refresh's events message;
    # a page that drew the table only with the final report would show one change)
    tables = [(round((x["t"] - running[0]["t"]) / 1000, 2), x["table"][:80]) for x in running]
    assert watch.changes("table") >= 2, f"the table while running (s, first rows): {tables}"


def test_live_cell_bytes_and_main_thread(lab, page_on_failure):
    assert 0 < lab.live_bytes <= MAX_CELL_BYTES, f"{lab.live_bytes:,} B for the live cell"
    longest = max(lab.longtasks, default=0.0)
    print(f"live cell: {lab.live_bytes:,} B, longest task {longest:.0f} ms, all {lab.longtasks}")
    assert longest < STALL_MS, f"main-thread tasks during the live cell (ms): {lab.longtasks}"


def test_pointing_at_a_live_chart_brings_plotly_and_zoom_while_it_runs(lab, page_on_failure):
    """A live chart's axes are a canvas until a pointer comes over it; then plotly's axes come,
    and a drag zooms while the kernel is still busy with the cell, consistently."""
    s = lab.session
    s.bytes.wait_quiet(s.page)
    s.run_cell(POINTED)
    s.page.wait_for_function(
        "i => { const b = window.__everyoBoard(i); return b && b.bars > 0; }",
        arg=POINTED,
        timeout=30000,
    )
    board = s.board(POINTED)
    assert board["axes"] == "canvas" and board["prompt"].startswith("[*]"), board
    plot = s.cell(POINTED).locator(".everyo-flame")
    plot.scroll_into_view_if_needed()
    box = plot.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    # First the page scrolls the chart under a resting pointer, as JupyterLab scrolls while
    # cells run: nobody turned to the chart, so it stays light (Chromium sends it a pointerenter)
    shift = box["height"] + 40
    _scroll_notebook(s, -shift)
    s.page.mouse.move(x, y)  # above the chart now
    _scroll_notebook(s, shift)
    under = s.page.evaluate(
        "([x, y]) => !!document.elementFromPoint(x, y)?.closest('.everyo-flame-box')", [x, y]
    )
    assert under, "the scroll did not bring the chart under the pointer"
    s.page.wait_for_timeout(800)  # two live refreshes
    rested = s.board(POINTED)
    assert rested["axes"] == "canvas" and rested["prompt"].startswith("[*]"), rested
    s.page.mouse.move(x + 5, y + 5)  # the pointer moves over the chart: plotly's axes come
    s.page.wait_for_function(
        "i => window.__everyoBoard(i).axes === 'plotly'", arg=POINTED, timeout=10000
    )
    s.drag(plot, 0.1, 0.3)
    # the zoomed window starts inside the run; a live refresh that only extends the followed
    # window (0 to the run's end) while the drag is handled is not the zoom
    s.page.wait_for_function(
        "i => { const w = window.__everyoBoard(i).window;"
        " return !!w && parseFloat(w.split(',')[0]) > 0; }",
        arg=POINTED,
        timeout=10000,
    )
    zoomed = s.board(POINTED)
    assert zoomed["prompt"].startswith("[*]"), f"the cell ended before the zoom: {zoomed}"
    s.page.wait_for_timeout(600)  # live refreshes come in: the zoomed window stays
    flame = _check_view(s, "zoomed while live", POINTED)
    assert flame["window"] == [float(v) for v in zoomed["window"].split(",")], flame
    still = s.board(POINTED)
    s.screenshot(s.cell(POINTED).locator(".everyo-flame-box"), "dashboard-live-zoomed")
    s.wait_prompt(POINTED, timeout_ms=60000)
    print(f"zoomed while live: {zoomed['window']}, prompt then {still['prompt']}")


def _scroll_notebook(s: BrowserSession, dy: float) -> None:
    """Scroll the notebook by ``dy`` px (what JupyterLab does as cells run), then let a frame
    pass; fails if the notebook could not scroll that far."""
    moved = s.page.evaluate(
        """dy => {
          const panel = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer')
            || document.querySelector('.jp-NotebookPanel .jp-Notebook');
          const before = panel.scrollTop;
          panel.scrollTop = before + dy;
          return panel.scrollTop - before;
        }""",
        dy,
    )
    assert abs(moved - dy) < 1, f"the notebook scrolled {moved} px, not {dy}"
    s.page.wait_for_timeout(150)


def _check_view(s: BrowserSession, what: str, index: int = LIVE) -> dict:
    """plotly's x range is ``data-window``, the bars drawn overlap it, depth 0 is on top."""
    flame = s.flame(index)
    assert flame is not None, f"{what}: no flame chart"
    x0, x1 = flame["window"]
    r0, r1 = flame["xrange"]
    tol = 1e-6 * max(x1 - x0, 1e-9)
    assert abs(r0 - x0) <= tol and abs(r1 - x1) <= tol, f"{what}: axis {r0, r1}, {flame}"
    assert flame["dataBars"] > 0, f"{what}: no bars drawn: {flame}"
    # bars as plotly traces: each overlaps the window; bars painted on a canvas: the canvas
    # covers exactly plotly's plot area (so it shows data-window) and has paint on it
    assert flame["outside"] == 0 and flame["inverted"] == 0, (what, flame)
    if flame["bars"]:
        assert flame["bars"] == flame["dataBars"], (what, flame)
    else:
        canvas = flame["canvas"]
        assert canvas is not None, f"{what}: bars neither in plotly's data nor on a canvas"
        assert canvas["offset"] <= 2 and canvas["columns"] > 0, (what, flame)
    assert _reversed(flame["yrange"]), f"{what}: depth 0 is not on top: {flame['yrange']}"
    return flame


def _drag(s: BrowserSession, a: float, b: float) -> dict:
    before = s.board(LIVE)["window"]
    s.drag(s.cell(LIVE).locator(".everyo-flame"), a, b)
    s.wait_board_change(LIVE, "window", before)
    s.page.wait_for_timeout(300)  # a detail answer may redraw the same window finer
    return _check_view(s, f"drag {a}-{b}")


def _reset(s: BrowserSession) -> dict:
    """Double-click the chart: back to the whole run."""
    before = s.board(LIVE)["window"]
    s.double_click(s.cell(LIVE).locator(".everyo-flame"))
    s.wait_board_change(LIVE, "window", before)
    s.page.wait_for_timeout(300)
    return _check_view(s, "reset")


def test_zoom_keeps_axis_window_and_bars_consistent(lab, page_on_failure):
    s = lab.session
    whole = _check_view(s, "final")
    span = whole["window"][1] - whole["window"][0]
    s.screenshot(s.cell(LIVE).locator(".everyo-dashboard"), "dashboard-final")

    first = _drag(s, 0.2, 0.7)
    assert first["window"][1] - first["window"][0] < 0.8 * span
    second = _drag(s, 0.3, 0.6)  # zoom into the zoomed view
    assert second["window"][1] - second["window"][0] < first["window"][1] - first["window"][0]
    s.screenshot(s.cell(LIVE).locator(".everyo-flame"), "dashboard-zoomed")

    reset = _reset(s)
    assert reset["window"] == pytest.approx(whole["window"], rel=1e-6, abs=1e-6)

    _drag(s, 0.5, 0.9)


def _window(s) -> tuple[float, float]:
    x0, x1 = map(float, s.board(LIVE)["window"].split(","))
    return x0, x1


def _as_ms(text: str) -> float:
    """A duration as the steps box spells it ("23.80 ms", "0.512 ms", "1,204 ms") in ms."""
    number, unit = text.replace(",", "").split()
    assert unit == "ms", text
    return float(number)


def test_step_table_zooms_to_a_step(lab, page_on_failure):
    s = lab.session
    board = s.cell(LIVE).locator(".everyo-dashboard")
    steps = board.locator(".everyo-step-table")
    steps.wait_for(timeout=10000)
    whole = _reset(s)["window"]

    slowest = steps.locator('tr[data-what="slowest"]')
    duration = _as_ms(slowest.locator("td").nth(2).inner_text())
    before = s.board(LIVE)["window"]
    slowest.locator(".everyo-step-row-zoom").click()
    s.wait_board_change(LIVE, "window", before)
    x0, x1 = _window(s)
    # the step with a 5 % margin each side
    assert x1 - x0 == pytest.approx(1.1 * duration, rel=0.2), (duration, x0, x1)
    assert whole[0] - 1e-6 <= x0 < x1 <= whole[1] + 1e-6
    _check_view(s, "slowest step")
    s.screenshot(board.locator(".everyo-steps-box"), "dashboard-steps")

    before = s.board(LIVE)["window"]
    board.locator(".everyo-step-input").fill("3")
    board.locator(".everyo-step-zoom").click()
    s.wait_board_change(LIVE, "window", before)
    y0, y1 = _window(s)
    assert (y0, y1) != (x0, x1) and y1 - y0 < 0.25 * (whole[1] - whole[0])
    assert y0 < 0.25 * (whole[1] - whole[0]), "step 3 is not near the start of the run"
    _check_view(s, "step 3")


def test_table_and_export(lab, page_on_failure):
    s = lab.session
    board = s.cell(LIVE).locator(".everyo-dashboard")
    table = board.locator("table.everyo-table:not(.everyo-step-table)").first
    text = table.inner_text()
    assert "Linear" in text and "ReLU" in text and "Sequential" in text, text
    assert re.search(r"\b(Linear|ReLU) \[[\w.]+\]", text), f"no class name with a path: {text}"
    group = board.locator("select.everyo-group-by")
    if group.count():  # grouped by module path, both Linear layers show with their paths
        group.select_option("path")
        for _ in range(100):  # the table is rebuilt when the kernel answers
            text = table.inner_text()
            if "Linear [2]" in text:
                break
            s.page.wait_for_timeout(100)
        assert "Linear [0]" in text and "Linear [2]" in text, text
    # a header click: the rows in the kernel's order for that column, its arrow on the header
    table.locator('th[data-key="calls"]').click()
    calls = []
    for _ in range(100):
        head = table.locator("thead th").all_inner_texts()
        if head and any(h.startswith("calls ▼") for h in head):
            at = next(i for i, h in enumerate(head) if h.startswith("calls"))
            rows = table.locator("tbody tr").all()
            calls = [int(r.locator("td").nth(at).inner_text().replace(",", "")) for r in rows]
            break
        s.page.wait_for_timeout(100)
    assert calls and calls == sorted(calls, reverse=True), calls
    s.screenshot(table, "dashboard-table")

    with s.page.expect_download(timeout=15000) as info:
        board.locator(".everyo-export-button").first.click()
    download = info.value
    assert download.suggested_filename == "browser.trace.json"
    trace = json.loads(Path(download.path()).read_text())
    assert trace["traceEvents"]


def test_reopened_without_kernel_shows_the_static_view(lab, page_on_failure):
    s = lab.session
    assert len(s.bytes.big_frames()) == 1, f"plotly.js-sized frames: {s.bytes.big_frames()}"
    static = s.cell(LIVE).locator(".everyo-static")
    assert static.count() == 1 and not static.is_visible()  # hidden while the widget shows

    s.save(NOTEBOOK, expect="everyo-static")
    s.shutdown_kernel()
    s.reload()
    static = s.cell(LIVE).locator(".everyo-static")
    static.wait_for(state="visible", timeout=30000)
    s.page.wait_for_timeout(2000)  # let the widget manager give up on the missing model
    assert static.is_visible()
    text = static.inner_text()
    assert "Linear" in text and "ReLU" in text, text
    assert static.locator("table").count() > 0
    assert static.locator(".everyo-static-flame").count() > 0
    s.screenshot(s.cell(LIVE).locator(".jp-OutputArea"), "dashboard-reopened")
    errors = s.visible_text_containing("Error displaying widget")
    assert not errors, errors
    assert len(s.bytes.big_frames()) <= 2, "plotly.js sent again to a page without widgets"
