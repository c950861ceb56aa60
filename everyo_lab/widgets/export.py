"""Chrome-trace export for the dashboard's button: a safe file name and the profiler's writer.

The kernel's working directory is the notebook's directory, so the file lands next to it. The
same bytes go to the browser as a custom message with one binary buffer; the front end
(js/src/export.js) saves them through a temporary ``<a download>``.
"""

from __future__ import annotations

import re
from pathlib import Path


def trace_file_name(label: str) -> str:
    """``"my run/1"`` → ``"my_run_1.trace.json"`` (same rule as js/src/format.js)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", str(label or "run"))
    safe = re.sub(r"^[._]+", "", safe)
    return f"{safe or 'run'}.trace.json"


def export_chrome_trace(run, path) -> Path:
    """Write ``run`` as a Chrome trace with the profiler's exporter; return the path."""
    from everyo.profiler.export.chrome import export_chrome_trace as write

    return Path(write(run, Path(path)))
