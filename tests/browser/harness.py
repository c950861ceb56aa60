"""Drive JupyterLab or Notebook 7 in Debian's Chromium (see /work/shared/BROWSER_TESTING.md).

Used by the browser tests and by ``benchmarks/dashboard_browser.py``; nothing here knows
about everyo except the dashboard's DOM contract in :data:`BOARD_JS`. One
:class:`BrowserSession` is one Jupyter server (temp ``HOME``, free port, news pop-up off) plus
one headless Chromium page, with:

- notebook handling: :meth:`~BrowserSession.open`, :meth:`~BrowserSession.run_cell`
  (Shift+Enter, retried until the prompt changes), :meth:`~BrowserSession.run_all`,
  :meth:`~BrowserSession.wait_prompt`, :meth:`~BrowserSession.save`,
  :meth:`~BrowserSession.shutdown_kernel`, :meth:`~BrowserSession.reload`;
- measurement: every websocket frame the page receives (:class:`ByteMeter`), ``longtask``
  entries of a ``PerformanceObserver`` installed before the page's own scripts, and an in-page
  sampler that reads a cell's prompt and dashboard every 100 ms (:meth:`~BrowserSession.watch`);
- element screenshots into ``test-artifacts/``.

Every server started is stopped by its PID, also when a step fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BIG_FRAME = 4_000_000  # a websocket frame this large can only be plotly.js (about 4.8 MB)

PROMPTS_JS = (
    "() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]"
    ".map(p => p.textContent.trim())"
)
# Installed before the page's scripts (and again after every reload): long main-thread tasks.
LONGTASK_INIT_JS = """
window.__longtasks = [];
try {
  new PerformanceObserver(list => {
    for (const e of list.getEntries())
      window.__longtasks.push({start: e.startTime, duration: e.duration});
  }).observe({type: "longtask", buffered: true});
} catch (e) { window.__longtasks = null; }
"""
# The dashboard of code cell `i`, as the DOM contract describes it (null before it rendered).
BOARD_JS = """
window.__everyoBoard = (i) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i];
  if (!cell) return null;
  const prompt = (cell.querySelector('.jp-InputPrompt') || {textContent: ''}).textContent.trim();
  const root = cell.querySelector('.everyo-dashboard');
  const out = {t: performance.now(), prompt, board: !!root};
  if (!root) return out;
  const d = root.dataset;
  out.bars = Number(d.bars || 0);
  out.events = Number(d.events || 0);
  out.redraws = Number(d.redraws || 0);
  out.header = (root.querySelector('.everyo-header') || {}).textContent || '';
  const body = root.querySelector('.everyo-table-section .everyo-table tbody');
  out.table = body ? body.textContent.slice(0, 400) : '';  // the summary table's first rows
  out.window = d.window || null;
  out.plotly = d.plotly || null;
  out.axes = d.axes || null;  // "canvas" (live, nobody pointing at it), "plotly", "none"
  const gd = root.querySelector('.everyo-flame.js-plotly-plot');
  if (gd && gd.layout && gd.layout.yaxis && gd.layout.yaxis.range) {
    const r = gd.layout.yaxis.range;
    out.yrange = [r[0], r[1]];
  } else if (d.axes === 'canvas' && d.yrange) {
    out.yrange = d.yrange.split(',').map(Number);
  }
  return out;
};
"""
# The flame chart of code cell `i` as drawn: axis ranges, data-window, the bars plotly holds
# (polygon traces, 5 x values per bar: start, end, end, start, NaN) and how many of them miss
# the window, and the canvas the bars may be painted on instead: its offset from plotly's plot
# area (px) and the share of its pixel columns with paint in them.
FLAME_JS = """
([i, tol]) => {
  const cell = document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i];
  const root = cell && cell.querySelector('.everyo-dashboard');
  const gd = root && root.querySelector('.everyo-flame.js-plotly-plot');
  if (!gd || !gd.layout) return null;
  const win = (root.dataset.window || '').split(',').map(Number);
  const span = win[1] - win[0];
  let bars = 0, outside = 0, inverted = 0;
  for (const t of gd.data || []) {
    if (t.fill !== 'toself' || !t.x) continue;
    for (let o = 0; o + 1 < t.x.length; o += 5) {
      const s0 = t.x[o], e0 = t.x[o + 1];
      if (!Number.isFinite(s0) || !Number.isFinite(e0)) continue;
      bars += 1;
      if (e0 < s0) inverted += 1;
      if (e0 < win[0] - tol * span || s0 > win[1] + tol * span) outside += 1;
    }
  }
  const out = {
    xrange: gd.layout.xaxis.range.map(Number), yrange: gd.layout.yaxis.range.map(Number),
    window: win, bars, outside, inverted, dataBars: Number(root.dataset.bars || 0),
    redraws: Number(root.dataset.redraws || 0), canvas: null,
  };
  const canvas = root.querySelector('canvas.everyo-flame-canvas');
  const area = gd.querySelector('.nsewdrag');
  if (canvas && area && canvas.width && canvas.height) {
    const c = canvas.getBoundingClientRect(), a = area.getBoundingClientRect();
    const img = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    for (let x = 0; x < canvas.width; x++) {
      for (let y = 0; y < canvas.height; y++) {
        if (img[4 * (y * canvas.width + x) + 3] > 0) { painted += 1; break; }
      }
    }
    out.canvas = {
      offset: Math.max(Math.abs(c.left - a.left), Math.abs(c.top - a.top),
                       Math.abs(c.width - a.width), Math.abs(c.height - a.height)),
      columns: painted / canvas.width,
    };
  }
  return out;
}
"""
SAMPLER_JS = """
([i, ms]) => {
  if (window.__everyoSampler) clearInterval(window.__everyoSampler);
  window.__everyoSamples = [window.__everyoBoard(i)];
  window.__everyoSampler = setInterval(
    () => window.__everyoSamples.push(window.__everyoBoard(i)), ms);
  return performance.now();
}
"""


def missing() -> str | None:
    """Why the browser tests cannot run here (``None``: they can)."""
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright; no browser download)"
    try:
        import nbformat  # noqa: F401
    except ImportError:
        return "nbformat is not installed"
    if shutil.which("jupyter-lab") is None and shutil.which("jupyter") is None:
        return "jupyter lab is not installed"
    return None


def chromium_version() -> str:
    try:
        out = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[-1]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "unknown"


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook of code cells, with the kernelspec Lab needs to start a kernel unasked."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nbformat.write(nb, path)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class JupyterServer:
    """``jupyter lab`` or ``jupyter notebook``, headless, on a free port, temp ``HOME``."""

    def __init__(self, root: Path, home: Path, app: str = "lab", env: dict | None = None):
        if app not in ("lab", "notebook"):
            raise ValueError(f"app is 'lab' or 'notebook', not {app!r}")
        self.root, self.home, self.app = Path(root), Path(home), app
        self.port = free_port()
        self.extra_env = dict(env or {})
        self.proc: subprocess.Popen | None = None
        self.log = self.home / f"jupyter-{app}.log"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, notebook: str) -> str:
        prefix = "/lab/tree/" if self.app == "lab" else "/notebooks/"
        return f"{self.base}{prefix}{notebook}"

    def start(self, timeout: float = 60.0) -> JupyterServer:
        settings = self.home / ".jupyter/lab/user-settings/@jupyterlab/apputils-extension"
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False})
        )
        env = dict(os.environ, HOME=str(self.home), JUPYTER_CONFIG_DIR=str(self.home / ".jupyter"))
        env.pop("JUPYTER_PLATFORM_DIRS", None)
        env.update(self.extra_env)
        cmd = [
            sys.executable,
            "-m",
            "jupyter",
            self.app,
            "--no-browser",
            "--allow-root",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            f"--ServerApp.root_dir={self.root}",
        ]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                cmd, env=env, cwd=self.root, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = self.log.read_text(errors="replace")[-2000:]
                code = self.proc.returncode
                raise RuntimeError(f"jupyter {self.app} exited with {code}:\n{tail}")
            try:
                urllib.request.urlopen(f"{self.base}/api/status", timeout=1)
                return self
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"jupyter {self.app} did not answer /api/status within {timeout} s")

    def kernels(self) -> list[dict]:
        with urllib.request.urlopen(f"{self.base}/api/kernels", timeout=5) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()  # by PID: only the server this object started
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@dataclass
class ByteMeter:
    """Every websocket frame the page received: (monotonic seconds, payload bytes)."""

    frames: list[tuple[float, int]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def attach(self, page) -> None:
        page.on("websocket", self._on_socket)

    def _on_socket(self, ws) -> None:
        ws.on("framereceived", self._on_frame)

    def _on_frame(self, payload) -> None:
        if isinstance(payload, dict):  # older drivers hand over {"payload": ...}
            payload = payload.get("payload", b"")
        size = len(payload.encode("utf-8")) if isinstance(payload, str) else len(payload)
        with self._lock:
            self.frames.append((time.monotonic(), size))

    def mark(self) -> float:
        return time.monotonic()

    def between(self, t0: float, t1: float | None = None) -> int:
        """Bytes received in [t0, t1] (``t1=None``: until now)."""
        t1 = time.monotonic() if t1 is None else t1
        with self._lock:
            return sum(n for t, n in self.frames if t0 <= t <= t1)

    def big_frames(self, t0: float = 0.0, threshold: int = BIG_FRAME) -> list[int]:
        with self._lock:
            return [n for t, n in self.frames if t >= t0 and n > threshold]

    def total(self) -> int:
        with self._lock:
            return sum(n for _, n in self.frames)

    def wait_quiet(self, page, quiet_ms: int = 1500, timeout_ms: int = 60000) -> None:
        """Wait until no frame has arrived for ``quiet_ms`` (the kernel has said everything)."""
        deadline = time.monotonic() + timeout_ms / 1000
        while time.monotonic() < deadline:
            with self._lock:
                last = self.frames[-1][0] if self.frames else 0.0
            if time.monotonic() - last >= quiet_ms / 1000:
                return
            page.wait_for_timeout(100)


@dataclass
class Watch:
    """What the in-page sampler saw of one cell: samples every ~100 ms, in page milliseconds."""

    started_ms: float  # page time (performance.now()) when the cell was asked to run
    samples: list[dict]

    def running(self) -> list[dict]:
        return [s for s in self.samples if s and s["prompt"].startswith("[*]")]

    def span_ms(self) -> tuple[float, float]:
        """Page time of the first and last sample showing ``[*]``."""
        run = self.running()
        if not run:
            return (self.started_ms, self.started_ms)
        return (run[0]["t"], run[-1]["t"])

    def first(self, predicate) -> float | None:
        """Seconds from the request to run until the first sample satisfying ``predicate``."""
        for s in self.samples:
            if s and predicate(s):
                return (s["t"] - self.started_ms) / 1000
        return None

    def changes(self, key: str = "redraws") -> int:
        """Times ``key`` changed between consecutive samples while the cell showed ``[*]``."""
        values = [s.get(key) for s in self.running() if s.get("board")]
        return sum(1 for a, b in zip(values, values[1:]) if b != a)

    def changes_per_second(self, key: str = "redraws", *, after_first_chart: bool = False) -> float:
        """``changes(key)`` per second of ``[*]``; with ``after_first_chart``, per second from
        the first sample showing bars to the last running one (the rate once there is a
        picture: the wait for the first one has its own figure)."""
        if not after_first_chart:
            t0, t1 = self.span_ms()
            return self.changes(key) / max((t1 - t0) / 1000, 1e-9)
        shown = [s for s in self.running() if s.get("board")]
        first = next((i for i, s in enumerate(shown) if s.get("bars", 0) > 0), len(shown))
        shown = shown[first:]
        if len(shown) < 2:
            return 0.0
        values = [s.get(key) for s in shown]
        changed = sum(1 for a, b in zip(values, values[1:]) if b != a)
        return changed / max((shown[-1]["t"] - shown[0]["t"]) / 1000, 1e-9)


class BrowserSession:
    """One Jupyter server and one Chromium page, with measurement hooks.

    >>> with BrowserSession(folder, app="lab") as s:  # doctest: +SKIP
    ...     s.open("demo.ipynb"); s.run_cell(0); s.wait_prompt(0)
    """

    def __init__(
        self,
        root: Path,
        *,
        app: str = "lab",
        home: Path | None = None,
        env: dict | None = None,
        viewport: tuple[int, int] = (1400, 1000),
    ):
        self.root = Path(root)
        self._tmp = None
        if home is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="everyo-home-")
            home = Path(self._tmp.name)
        self.server = JupyterServer(self.root, Path(home), app=app, env=env)
        self.viewport = viewport
        self.bytes = ByteMeter()
        self.page = None
        self._pw = self._browser = self._context = None

    # -- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> BrowserSession:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        from playwright.sync_api import sync_playwright

        self.server.start()
        self._pw = sync_playwright().start()
        self._browser = self._pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        width, height = self.viewport
        self._context = self._browser.new_context(
            accept_downloads=True, viewport={"width": width, "height": height}
        )
        self._context.add_init_script(LONGTASK_INIT_JS + BOARD_JS)
        self.page = self._context.new_page()
        self.bytes.attach(self.page)

    def close(self) -> None:
        try:
            if self._browser is not None:
                with contextlib.suppress(Exception):
                    self._browser.close()
            if self._pw is not None:
                with contextlib.suppress(Exception):
                    self._pw.stop()
        finally:
            self._browser = self._pw = None
            self.server.stop()
            if self._tmp is not None:
                with contextlib.suppress(OSError):
                    self._tmp.cleanup()
                self._tmp = None

    # -- notebook ------------------------------------------------------------------------------
    def open(self, notebook: str, timeout_ms: int = 60000) -> None:
        """Open ``notebook`` (relative to the server's root) and wait for its cells and kernel."""
        self.page.goto(self.server.url(notebook))
        self.wait_ready(timeout_ms)

    def reload(self, timeout_ms: int = 60000) -> None:
        self.page.reload()
        self.wait_ready(timeout_ms)

    def wait_ready(self, timeout_ms: int = 60000) -> None:
        self.page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=timeout_ms)
        # Lab shows the kernel's state in the notebook toolbar; Notebook 7's toolbar may not,
        # and run_cell retries anyway while the kernel connects.
        with contextlib.suppress(Exception):
            self.page.wait_for_selector(
                '.jp-Notebook-ExecutionIndicator[data-status="idle"]',
                timeout=timeout_ms if self.server.app == "lab" else 5000,
            )
        self.accept_dialog()

    def cell(self, index: int):
        return self.page.locator(".jp-Notebook .jp-CodeCell").nth(index)

    def prompts(self) -> list[str]:
        return self.page.evaluate(PROMPTS_JS)

    def accept_dialog(self) -> None:
        """Answer a dialog (Lab's "Select Kernel" on a fresh HOME, "Shut down kernel?")."""
        button = self.page.locator(".jp-Dialog .jp-mod-accept")
        if button.count():
            with contextlib.suppress(Exception):
                button.first.click(timeout=2000)

    def run_cell(self, index: int, attempts: int = 4) -> None:
        """Select cell ``index`` and press Shift+Enter, retried until its prompt changes.

        A kernel still connecting, or a "Select Kernel" dialog, can swallow the first request.
        """
        cell = self.cell(index)
        before = self.prompts()[index]
        for _ in range(attempts):
            self.accept_dialog()
            cell.locator(".jp-InputPrompt").click()
            self.page.keyboard.press("Shift+Enter")
            for _ in range(50):
                self.page.wait_for_timeout(100)
                self.accept_dialog()
                now = self.prompts()[index]
                if now != before and now != "[ ]:":
                    return
        raise AssertionError(f"cell {index} did not start running (prompt {before!r})")

    def wait_prompt(self, index: int, timeout_ms: int = 60000) -> str:
        """Wait until cell ``index`` shows ``[n]:`` (it ran); returns the prompt.

        Polls every 100 ms, not on every animation frame (Playwright's default): frame polling
        kept Chromium busy for the whole cell (0.60-0.64 CPU s per 3-s plain cell against
        0.30-0.55 with 100-ms polls, three cells each), load the observer-effect benchmarks
        would count against the kernel."""
        self.page.wait_for_function(
            f"() => /^\\[\\d+\\]/.test(({PROMPTS_JS})()[{index}])",
            timeout=timeout_ms,
            polling=100,
        )
        return self.prompts()[index]

    def menu(self, menu: str, command: str) -> None:
        self.page.locator(".lm-MenuBar-itemLabel", has_text=menu).first.click()
        self.page.locator(f'li.lm-Menu-item[data-command="{command}"]').first.click()

    def run_all(self) -> None:
        self.menu("Run", "runmenu:run-all")

    def wait_all_done(self, timeout_ms: int = 120000) -> None:
        """Every code cell shows ``[n]:`` (none ``[ ]`` or ``[*]``)."""
        self.page.wait_for_function(
            f"() => ({PROMPTS_JS})().every(p => /^\\[\\d+\\]/.test(p))", timeout=timeout_ms
        )

    def save(self, notebook: str, expect: str | None = None, timeout_s: float = 15) -> None:
        """File → Save; with ``expect``, wait until the file on disk contains that text."""
        self.menu("File", "docmanager:save")
        path = self.root / notebook
        deadline = time.monotonic() + timeout_s
        while expect is not None and time.monotonic() < deadline:
            if path.exists() and expect in path.read_text():
                return
            self.page.wait_for_timeout(200)
        if expect is not None:
            raise AssertionError(f"{notebook} was not saved with {expect!r} in it")

    def shutdown_kernel(self) -> None:
        """Kernel → Shut Down Kernel (confirmed); the page keeps its outputs, the models go."""
        self.menu("Kernel", "kernelmenu:shutdown")
        self.page.wait_for_timeout(300)
        self.accept_dialog()
        deadline = time.monotonic() + 15
        while self.server.kernels() and time.monotonic() < deadline:
            self.page.wait_for_timeout(200)

    # -- measurement ---------------------------------------------------------------------------
    def board(self, index: int) -> dict | None:
        """The dashboard of code cell ``index`` (see :data:`BOARD_JS`)."""
        return self.page.evaluate("i => window.__everyoBoard(i)", index)

    def flame(self, index: int, tol: float = 0.005) -> dict | None:
        """The drawn flame chart of cell ``index`` (see :data:`FLAME_JS`)."""
        return self.page.evaluate(FLAME_JS, [index, tol])

    def start_watch(self, index: int, every_ms: int = 100) -> float:
        """Start sampling cell ``index`` every ``every_ms`` in the page; returns page time."""
        return self.page.evaluate(SAMPLER_JS, [index, every_ms])

    def stop_watch(self, started_ms: float) -> Watch:
        samples = self.page.evaluate(
            "() => { clearInterval(window.__everyoSampler); window.__everyoSampler = null;"
            " return window.__everyoSamples || []; }"
        )
        return Watch(started_ms=started_ms, samples=samples)

    def run_and_watch(self, index: int, timeout_ms: int = 120000, every_ms: int = 100) -> Watch:
        """Run cell ``index`` while sampling it; returns when its prompt reads ``[n]:``."""
        started = self.start_watch(index, every_ms)
        self.run_cell(index)
        self.wait_prompt(index, timeout_ms)
        return self.stop_watch(started)

    def now_ms(self) -> float:
        return self.page.evaluate("() => performance.now()")

    def longtasks(self, t0_ms: float = 0.0, t1_ms: float = float("inf")) -> list[float]:
        """Durations (ms) of long tasks that started in [t0_ms, t1_ms] (page time)."""
        tasks = self.page.evaluate("() => window.__longtasks")
        if tasks is None:
            raise RuntimeError("this Chromium has no longtask PerformanceObserver")
        return [e["duration"] for e in tasks if t0_ms <= e["start"] <= t1_ms]

    def screenshot(self, locator, name: str) -> Path:
        """An element screenshot as ``test-artifacts/<name>.png`` (mouse moved out of the way).

        An element taller than the window is shot in a window made tall enough for it (Lab's
        menu and toolbar would cover its top otherwise), then the window size is restored.
        """
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.mouse.move(0, 0)
        size = self.page.viewport_size
        box = locator.bounding_box()
        tall = box is not None and box["height"] > size["height"] - 250
        if tall:
            self.page.set_viewport_size(
                {"width": size["width"], "height": int(box["height"]) + 400}
            )
            self.page.wait_for_timeout(300)  # let charts follow the resize
        try:
            locator.scroll_into_view_if_needed()
            locator.screenshot(path=str(path))
        finally:
            if tall:
                self.page.set_viewport_size(size)
                self.page.wait_for_timeout(300)
        return path

    def page_screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        with contextlib.suppress(Exception):
            self.page.screenshot(path=str(path))
        return path

    def visible_text_containing(self, text: str) -> list[str]:
        """Texts of visible elements whose own text contains ``text`` (e.g. a widget error)."""
        return self.page.evaluate(
            """t => {
                const found = [];
                const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
                for (let n = walk.nextNode(); n; n = walk.nextNode()) {
                  const el = n.parentElement;
                  if (!el || !(n.textContent || '').includes(t)) continue;
                  const r = el.getBoundingClientRect();
                  if (el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})
                      && r.width > 0 && r.height > 0)
                    found.push((el.textContent || '').trim().slice(0, 200));
                }
                return found;
            }""",
            text,
        )

    # -- plotly ---------------------------------------------------------------------------------
    def plot_area(self, plot) -> dict:
        """Bounding box of a plotly chart's plot area (its main drag layer)."""
        box = plot.locator("rect.nsewdrag, .nsewdrag").first.bounding_box()
        if box is None:
            raise AssertionError("the chart has no plot area on screen")
        return box

    def drag(self, plot, x0: float, x1: float, y: float = 0.5, steps: int = 12) -> None:
        """Mouse down at fraction ``x0`` of the plot area, move to ``x1``, release (a zoom)."""
        plot.scroll_into_view_if_needed()
        box = self.plot_area(plot)
        at_y = box["y"] + y * box["height"]
        self.page.mouse.move(box["x"] + x0 * box["width"], at_y)
        self.page.mouse.down()
        self.page.mouse.move(box["x"] + x1 * box["width"], at_y + 1, steps=steps)
        self.page.mouse.up()

    def double_click(self, plot, x: float = 0.5, y: float = 0.5) -> None:
        plot.scroll_into_view_if_needed()
        box = self.plot_area(plot)
        self.page.mouse.dblclick(box["x"] + x * box["width"], box["y"] + y * box["height"])

    def wait_plotly_chart(self, index: int, timeout_ms: int = 60000) -> None:
        """Wait until the dashboard of cell ``index`` draws bars with plotly.js loaded (the
        page's first dashboard brings plotly.js: a benchmark waits for it before measuring)."""
        self.page.wait_for_function(
            "i => { const b = window.__everyoBoard(i);"
            " return b && b.bars > 0 && b.plotly === 'loaded'; }",
            arg=index,
            timeout=timeout_ms,
        )

    def wait_board_change(self, index: int, key: str, before, timeout_ms: int = 10000) -> dict:
        """Wait until the dashboard of cell ``index`` shows a ``key`` other than ``before``."""
        self.page.wait_for_function(
            "([i, k, b]) => { const s = window.__everyoBoard(i);"
            " return s && s.board && s[k] !== b; }",
            arg=[index, key, before],
            timeout=timeout_ms,
        )
        return self.board(index)


@contextlib.contextmanager
def notebook_page(cells: list[str], name: str = "bench.ipynb", prefix: str = "everyo-page-"):
    """A notebook of ``cells`` in a temporary folder, open in JupyterLab: the session (the
    benchmarks' set-up)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        folder = Path(tmp)
        write_notebook(folder / name, cells)
        with BrowserSession(folder, app="lab") as session:
            session.open(name)
            yield session


def execute_notebook(cells: list[str], folder: Path, name: str = "executed.ipynb", timeout=300):
    """Run ``cells`` with nbclient (it stores widget state as Lab's save does), write the
    notebook to ``folder/name`` and return (the notebook as read back, its path)."""
    import nbclient
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    client = nbclient.NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()
    path = Path(folder) / name
    nbformat.write(nb, path)
    return nbformat.read(path, as_version=4), path


STATE_MIME = "application/vnd.jupyter.widget-state+json"


def widget_state(nb) -> dict:
    return nb.metadata.get("widgets", {}).get(STATE_MIME, {})


def json_strings(value):
    """Every string (keys too) inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from json_strings(v)


# -- notebook cells the tests and the benchmark share ------------------------------------------
SETUP = """import time
import everyo as eo

model = eo.Sequential(eo.Linear(32, 64, seed=0), eo.ReLU(), eo.Linear(64, 8, seed=1))
optimizer = eo.optim.SGD(model.parameters(), lr=0.001)
x = eo.ones(64, 32)
"""
# The other loop: a small CNN (conv-relu-pool x2 + linear, TARGETS.md's CPU CNN step) on
# a 32x3x32x32 batch: about 11 ms a step here for 21 events, where the stress loop above (SETUP)
# takes about 70 us for 11, so the recorder's share of a step is some 80x smaller and what is
# left of the observer effect is the page's and the live refresher's.
CNN_SETUP = """import time
import numpy as np
import everyo as eo

model = eo.Sequential(
    eo.Conv2d(3, 8, 3, padding=1, seed=0), eo.ReLU(), eo.MaxPool2d(2),
    eo.Conv2d(8, 16, 3, padding=1, seed=1), eo.ReLU(), eo.MaxPool2d(2),
    eo.Flatten(), eo.Linear(16 * 8 * 8, 10, seed=2),
)
optimizer = eo.optim.SGD(model.parameters(), lr=0.001)
x = eo.tensor(np.random.default_rng(0).standard_normal((32, 3, 32, 32), dtype=np.float32))
"""
# The same CNN with OpenBLAS held to one thread (threadpoolctl, in the dev and bench extras): its
# two threads take both cores here (and are slower: 1.2x the one-thread step time side by side,
# benchmarks/blas_threads.py), so anything else running, the page included, stalls both at
# each GEMM's barrier.
CNN_ONE_THREAD_SETUP = (
    CNN_SETUP
    + """import threadpoolctl

_blas_limit = threadpoolctl.threadpool_limits(1, user_api="blas")
"""
)
# the loops STEP runs (model, optimizer and x), by the names benchmarks/observer_variants.py takes
WORKLOADS = {"mlp": SETUP, "cnn": CNN_SETUP, "cnn1": CNN_ONE_THREAD_SETUP}
STEP = """    optimizer.zero_grad()
    loss = eo.sum(model(x) ** 2)
    loss.backward()
    optimizer.step()
"""


def warmup_cell(label: str = "warmup", steps: int = 5) -> str:
    """Build the model and profile a few steps (this first dashboard loads plotly.js)."""
    body = SETUP + f"for _ in range({steps}):\n" + STEP
    return f"%%everyo_profile --label {label}\n" + body


def training_cell(
    seconds: float, *, magic: str | None = None, sleep: float | None = 0.002, report: str = ""
) -> str:
    """A fixed-time training loop counting its steps (``steps``); ``magic``: the
    ``%%everyo_profile`` options, or ``None`` for no magic; ``report``: print
    ``STEPS <report> <steps> <main-thread CPU seconds> SCHED <ms waiting for a core>
    <voluntary switches>`` at the end (the last two from the loop thread's scheduler counters,
    ``-`` where Linux's ``/proc/thread-self`` is not there; a voluntary switch is mostly a wait
    for the GIL)."""
    lines = [] if magic is None else [f"%%everyo_profile {magic}".rstrip()]
    if report:
        lines += [SCHED_COUNTERS.rstrip("\n"), "s0 = _sched()"]
    lines += ["t0, c0 = time.perf_counter(), time.thread_time()", "steps = 0"]
    lines += [f"while time.perf_counter() - t0 < {seconds}:"]
    text = "\n".join(lines) + "\n" + STEP + "    steps += 1\n"
    if sleep:
        text += f"    time.sleep({sleep})\n"
    if report:
        text += (
            f'print("STEPS {report}", steps, f"{{time.thread_time() - c0:.4f}}", "SCHED", '
            '*(["-", "-"] if s0 is None else [(b - a) // d for a, b, d in zip(s0, _sched(), '
            "(10**6, 1))]))\n"
        )
    return text


SCHED_COUNTERS = """def _sched():
    try:
        with open("/proc/thread-self/schedstat") as f:
            delay = int(f.read().split()[1])
        with open("/proc/thread-self/status") as f:
            vol = [int(x.split()[1]) for x in f if x.startswith("voluntary_ctxt_switches")][0]
        return delay, vol
    except (OSError, IndexError, ValueError):
        return None
"""
