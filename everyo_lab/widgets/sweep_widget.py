"""``SweepWidget``: a batch-size sweep drawn point by point — throughput, latency (median with a
p5–p95 band) and peak memory against batch size, failed points marked, the recommendation
explained, a table, Run/Stop and CSV/JSON export.

Wiring only: the sweep is :func:`everyo.bench.sweep_batch_sizes` (its ``on_point`` reports each
point, its ``stop`` flag ends it between points); the numbers come from one
:class:`~everyo_lab.views.sweep.sweep_report.SweepReport` per point (the ``report`` trait) and the
charts from :func:`~everyo_lab.views.sweep.sweep_charts.sweep_charts` (the ``charts`` trait), a few
kilobytes.
plotly.js reaches the page once, as for the dashboard (:mod:`.plotly_asset`).

A kernel busy running a cell cannot receive a button click, so the widget's Run button (and
:meth:`SweepWidget.start`) runs the sweep on a background thread; :meth:`SweepWidget.run`
(what ``%everyo_sweep`` does) runs it in the calling thread and paints as it goes.
"""

from __future__ import annotations

import threading
from pathlib import Path

import anywidget
import traitlets

from everyo.bench.sweep import check_sweep_options, sweep_batch_sizes
from everyo.bench.sweep_result import SweepResult
from everyo.errors import EveryOBenchmarkError
from everyo_lab.widgets.dashboard import STATIC, WIDGET_MIME, hide_when_live

__all__ = ["SweepWidget", "sweeps"]

LIVE_CLASS = "everyo-sweep"
STATIC_CLASS = "everyo-sweep-static"
HIDE_WHEN_LIVE = hide_when_live(LIVE_CLASS, STATIC_CLASS)
EXPORTS = ("csv", "json")
STOP_IN_CELL = (
    "This sweep runs in the cell, so it cannot read the Stop button until it ends: interrupt "
    "the kernel (the ■ button, or I I) to stop it; the finished points are kept. "
    "SweepWidget.start() runs a sweep that Stop can end."
)

sweeps: dict[str, SweepWidget] = {}
"""Every sweep widget of this kernel by label (``%everyo_sweep --label NAME`` names one)."""


class SweepWidget(anywidget.AnyWidget):
    """A live batch-size sweep of ``model_or_step`` over batches from ``make_batch``.

    Parameters
    ----------
    model_or_step, make_batch, batch_sizes, mode, warmup, repeat, max_batch, memory_limit, threads
        As :func:`everyo.bench.sweep_batch_sizes`; checked here, so a bad one raises at once.
    device
        Where to run (``"cpu"``, ``"cuda"``, ...): the model and every batch are moved there.
    label
        The sweep's name (title, export file names, key in ``everyo_lab.sweeps``).
    export_dir
        Folder of the export buttons' files (default: the working directory, i.e. next to the
        notebook).

    Examples
    --------
    >>> w = SweepWidget(model, make_batch, batch_sizes=[1, 8, 64])  # doctest: +SKIP
    >>> w.show()  # doctest: +SKIP
    >>> w.start()  # doctest: +SKIP
    >>> w.wait().recommended.batch_size  # doctest: +SKIP
    """

    _esm = STATIC / "sweep.js"
    report = traitlets.Dict().tag(sync=True)
    charts = traitlets.Dict().tag(sync=True)
    running = traitlets.Bool(False).tag(sync=True)
    theme = traitlets.Unicode("light").tag(sync=True)
    export_status = traitlets.Unicode("").tag(sync=True)
    stop_hint = traitlets.Unicode("").tag(sync=True)
    """Set while the sweep runs in the cell's own thread (:meth:`run`, ``%everyo_sweep``): the
    kernel reads the Stop button's message only after the cell, so Stop is off and this says
    how to stop instead."""

    def __init__(
        self,
        model_or_step,
        make_batch,
        *,
        batch_sizes="auto",
        mode: str = "inference",
        warmup: int = 3,
        repeat: int = 10,
        device: str | None = None,
        memory_limit: int | None = None,
        max_batch: int = 8192,
        label: str | None = None,
        export_dir: str | Path | None = None,
        clock=None,
        synchronize=None,
        threads="auto",
    ):
        super().__init__()
        options = dict(
            mode=mode, warmup=warmup, repeat=repeat, max_batch=max_batch, threads=threads
        )
        check_sweep_options(
            model_or_step, make_batch, batch_sizes, memory_limit=memory_limit, **options
        )
        if device is not None:
            from everyo.core.device import device as resolve_device

            device = str(resolve_device(device))
        self.label = label or f"sweep-{len(sweeps) + 1}"
        self._workload = (model_or_step, make_batch, batch_sizes)
        self._options = dict(
            options,
            memory_limit=memory_limit,
            device=device,
            clock=clock,
            synchronize=synchronize,
            progress=False,
        )
        self._export_dir = export_dir
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._rows: list = []
        self._status, self._progress, self._error = "ready", None, ""
        self._result: SweepResult | None = None
        self._report = None
        self._outputs = None  # display handles of show() / the magic
        self.on_msg(self._on_message)
        self.observe(self._on_theme, "theme")
        sweeps[self.label] = self
        self._publish()

    # -- public --------------------------------------------------------------------------------
    @property
    def result(self) -> SweepResult:
        """The :class:`~everyo.bench.SweepResult`: the finished sweep's, or while one runs the
        points measured so far."""
        with self._lock:
            if self._result is not None and not self.running:
                return self._result
            return SweepResult(
                rows=sorted(self._rows, key=lambda r: r.batch_size),
                mode=self._options["mode"],
                stopped=self._status == "stopped",
            )

    @property
    def status(self) -> str:
        """``ready``, ``running``, ``completed``, ``stopped`` or ``failed``."""
        return self._status

    def start(self) -> None:
        """Run the sweep on a background thread (the notebook stays usable); see :meth:`wait`.
        (It returns nothing, so that a cell ending in ``widget.start()`` shows no second copy.)

        Work run in the notebook meanwhile competes with the sweep for the cores and shows in
        its timings and memory peaks.
        """
        with self._lock:
            if self.running:
                raise EveryOBenchmarkError(
                    "this sweep is running already: stop() it, or wait() for it to end"
                )
            self._begin()
            self._thread = threading.Thread(
                target=self._sweep, name=f"everyo-sweep-{self.label}", daemon=True
            )
            self._thread.start()

    def run(self) -> SweepResult:
        """Run the sweep in this thread, painting each point as it is measured.

        A ``KeyboardInterrupt`` (the kernel's interrupt) ends it cleanly: the finished points
        are kept and shown as ``stopped``, then the interrupt is raised again.
        """
        with self._lock:
            if self.running:
                raise EveryOBenchmarkError(
                    "this sweep is running already: stop() it, or wait() for it to end"
                )
            self.stop_hint = STOP_IN_CELL  # (before `running`: Stop never shows on)
            self._begin()
        try:
            self._sweep(reraise=True)
        finally:
            self.stop_hint = ""
        return self.result

    def stop(self) -> None:
        """End the sweep after the point being measured (finished points are kept)."""
        self._stop.set()

    def wait(self, timeout: float | None = None) -> SweepResult:
        """Block until a sweep started with :meth:`start` ends; returns :attr:`result`."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                raise TimeoutError(f"the sweep is still running after {timeout} s")
        return self.result

    def to_csv(self, path: str | Path | None = None) -> Path:
        """Write the points as CSV (default ``<label>.sweep.csv`` in the export folder)."""
        return self.result.to_csv(path or self._export_path("csv"))

    def to_json(self, path: str | Path | None = None) -> Path:
        """Write the result as JSON (default ``<label>.sweep.json`` in the export folder)."""
        return self.result.to_json(path or self._export_path("json"))

    def export(self, fmt: str = "csv") -> Path:
        """Write the CSV or JSON file and send it to the browser as a download."""
        if fmt not in EXPORTS:
            raise EveryOBenchmarkError(f"export format is 'csv' or 'json', got {fmt!r}")
        path = self.to_csv() if fmt == "csv" else self.to_json()
        data = path.read_bytes()
        self.send({"type": "download", "filename": path.name}, buffers=[data])
        self.export_status = f"wrote {path.name} ({len(data):,} bytes)"
        return path

    # -- outputs -------------------------------------------------------------------------------
    def show(self) -> None:
        """Display the widget and its static twin (kept in a saved notebook; updated whenever a
        sweep ends), as ``%everyo_sweep`` does."""
        from IPython.display import display

        widget = display(self.widget_bundle(), raw=True, display_id=True)
        static = display(self.static_bundle(hide_when_live=True), raw=True, display_id=True)
        self._outputs = (widget, static)

    def widget_bundle(self) -> dict:
        """The widget view alone, with a one-line ``text/plain``."""
        return {
            WIDGET_MIME: {"version_major": 2, "version_minor": 1, "model_id": self.model_id},
            "text/plain": f"everyo sweep: {self.label}",
        }

    def static_bundle(self, *, hide_when_live: bool = False) -> dict:
        """``text/html`` (charts as SVG, recommendation, table) and ``text/plain`` renderings of
        the sweep as it stands, needing no kernel."""
        from everyo_lab.views.sweep.sweep_static import render_sweep_html, render_sweep_text

        report = self._report
        html = render_sweep_html(report)
        if hide_when_live:
            html = HIDE_WHEN_LIVE + html
        return {"text/html": html, "text/plain": render_sweep_text(report)}

    def mime_bundle(self) -> dict:
        bundle = self.widget_bundle()
        bundle.update(self.static_bundle())
        return bundle

    def _repr_mimebundle_(self, **kwargs):
        return self.mime_bundle()

    def __repr__(self) -> str:
        points = len(self._rows)
        return f"SweepWidget(label={self.label!r}, status={self._status!r}, points={points})"

    # -- the sweep -----------------------------------------------------------------------------
    def _begin(self) -> None:
        self._stop.clear()
        self._rows, self._result, self._error = [], None, ""
        self._status, self._progress = "running", None
        self.running = True
        self._publish()

    def _sweep(self, reraise: bool = False) -> None:
        model_or_step, make_batch, sizes = self._workload
        status, error = "completed", ""
        try:
            result = sweep_batch_sizes(
                model_or_step,
                make_batch,
                sizes,
                on_point=self._on_point,
                stop=self._stop,
                **self._options,
            )
            status = "stopped" if result.stopped else "completed"
        except KeyboardInterrupt as exc:
            result = getattr(exc, "sweep_result", None) or self.result
            self._end(result, "stopped", "")
            if reraise:
                raise
            return
        except Exception as exc:  # shown in the widget: a thread has no cell to raise into
            result, status, error = self.result, "failed", f"{type(exc).__name__}: {exc}"
            if reraise:
                self._end(result, status, error)
                raise
        self._end(result, status, error)

    def _end(self, result: SweepResult, status: str, error: str) -> None:
        with self._lock:
            self._result = result
            self._rows = list(result.rows)
            self._status, self._progress, self._error = status, None, error
            self.running = False
            self._publish()
            outputs = self._outputs
        if outputs is not None:
            outputs[1].update(self.static_bundle(hide_when_live=True), raw=True)

    def _on_point(self, progress) -> None:
        with self._lock:
            self._rows = list(progress.rows)
            self._progress = {
                "index": progress.index,
                "total": progress.total,
                "batch_size": progress.batch_size,
                "elapsed_s": progress.elapsed_s,
                "rechecking": list(progress.rechecking),
            }
            if progress.done:  # the next point's start sets the progress line again
                self._progress = None
            self._publish()

    def _publish(self) -> None:
        """Build the report and the charts once, and sync both."""
        from everyo_lab.views.sweep.sweep_charts import sweep_charts
        from everyo_lab.views.sweep.sweep_report import build_sweep_report

        with self._lock:
            self._report = build_sweep_report(
                self._rows,
                title=f"Batch-size sweep · {self.label}",
                mode=self._options["mode"],
                status=self._status,
                progress=self._progress,
                error=self._error,
                memory_limit=self._options["memory_limit"],
                machine=self._machine(),
            )
            self.report = self._report.to_dict()
            self.charts = sweep_charts(self._report, theme=self.theme)

    def _machine(self) -> dict | None:
        """The sweep's machine state once it ends; while it runs, the latest point's."""
        if self._result is not None:
            return self._result.machine
        measured = [r for r in self._rows if r.machine is not None]
        return measured[-1].machine if measured else None

    # -- wiring --------------------------------------------------------------------------------
    def _export_path(self, fmt: str) -> Path:
        from everyo.file_names import file_name_from_label

        name = file_name_from_label(self.label, f".sweep.{fmt}", default="sweep")
        return Path(self._export_dir or Path.cwd()) / name

    def _on_message(self, _widget, content, _buffers) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind == "plotly":
            from everyo_lab.widgets.plotly_asset import send_plotly

            send_plotly(self)
        elif kind == "run":
            if not self.running:
                self.start()
        elif kind == "stop":
            self.stop()
        elif kind == "export" and content.get("format") in EXPORTS:
            try:
                self.export(content["format"])
            except Exception as exc:  # shown next to the buttons: a click has no traceback
                self.export_status = f"export failed: {type(exc).__name__}: {exc}"

    def _on_theme(self, change) -> None:
        if change["new"] not in ("light", "dark"):
            self.theme = change["old"] if change["old"] in ("light", "dark") else "light"
            return
        self._publish()
