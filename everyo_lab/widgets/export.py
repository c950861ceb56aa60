"""Chrome-trace export for the dashboard's button: a safe file name and the profiler's writer.

The kernel's working directory is the notebook's directory, so the file lands next to it. The
same bytes go to the browser as a custom message with one binary buffer; the front end
(js/src/export.js) saves them through a temporary ``<a download>``.
"""

from __future__ import annotations

from pathlib import Path

from everyo.file_names import file_name_from_label


def trace_file_name(label) -> str:
    """The trace's file name for a run label: safe, bounded and distinct per label
    (:func:`everyo.file_names.file_name_from_label`): ``"train"`` → ``"train.trace.json"``,
    ``"my run/1"`` → ``"my_run_1-7e011789.trace.json"``."""
    return file_name_from_label(label, ".trace.json")


def export_chrome_trace(run, path) -> Path:
    """Write ``run`` as a Chrome trace with the profiler's exporter; return the path."""
    from everyo.profiler.export.chrome import export_chrome_trace as write

    return Path(write(run, Path(path)))
