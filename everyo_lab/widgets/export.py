"""``ExportButton``: one click writes ``<label>.trace.json`` next to the notebook and downloads it.

The kernel's working directory is the notebook's directory, so the file lands next to it. The
same bytes go to the browser as a custom message with one binary buffer; the front end
(js/src/export.js) saves them through a temporary ``<a download>``.
"""

from __future__ import annotations

import re
from pathlib import Path

import anywidget
import traitlets

from everyo_lab.widgets.table import STATIC


def trace_file_name(label: str) -> str:
    """``"my run/1"`` → ``"my_run_1.trace.json"`` (same rule as js/src/format.js)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", str(label or "run"))
    safe = re.sub(r"^[._]+", "", safe)
    return f"{safe or 'run'}.trace.json"


def export_chrome_trace(run, path) -> Path:
    """Write ``run`` as a Chrome trace with the profiler's exporter; return the path."""
    from everyo.profiler.export.chrome import export_chrome_trace as write

    return Path(write(run, Path(path)))


class ExportButton(anywidget.AnyWidget):
    """The "Export Chrome trace" button of one run (``run`` may be swapped by the dashboard)."""

    _esm = STATIC / "export.js"
    label = traitlets.Unicode("").tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    busy = traitlets.Bool(False).tag(sync=True)

    def __init__(self, run=None, *, directory: str | Path | None = None, **kwargs):
        super().__init__(**kwargs)
        self._directory = directory
        self.run = run
        self.on_msg(self._on_message)

    @property
    def run(self):
        return self._run

    @run.setter
    def run(self, run) -> None:
        self._run = run
        self.label = run.label if run is not None else ""

    def export(self) -> Path:
        """Write the trace into the working directory (or ``directory``) and send it."""
        if self._run is None:
            raise ValueError("no run to export: profile a cell first")
        folder = Path(self._directory) if self._directory is not None else Path.cwd()
        path = export_chrome_trace(self._run, folder / trace_file_name(self._run.label))
        data = path.read_bytes()
        self.send({"type": "download", "filename": path.name}, buffers=[data])
        self.status = f"wrote {path.name} ({len(data):,} bytes)"
        return path

    def _on_message(self, _widget, content, _buffers) -> None:
        if not isinstance(content, dict) or content.get("type") != "export":
            return
        self.busy = True
        try:
            self.export()
        except Exception as exc:  # shown next to the button: a click has no traceback to read
            self.status = f"export failed: {type(exc).__name__}: {exc}"
        finally:
            self.busy = False

    def __repr__(self) -> str:
        return f"ExportButton(label={self.label!r}, status={self.status!r})"
