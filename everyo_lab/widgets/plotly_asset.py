"""plotly.js for the browser: the bundle the plotly package ships, read once, never imported.

The dashboard's front end asks for it once per page load (a custom message) and caches it for
every later widget of the page; it never enters widget state or a saved notebook. Reading the
file does not import plotly's Python figure machinery (seconds of imports: jsonschema, ...).
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

from everyo.errors import EveryOConfigError

__all__ = ["plotly_js", "plotly_js_path", "send_plotly"]


def plotly_js_path() -> Path:
    """Where the plotly package keeps ``plotly.min.js`` (found without importing plotly)."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise EveryOConfigError(
            "the dashboard draws with plotly.js from the plotly package, which is not installed: "
            'pip install "everyo[lab]"'
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise EveryOConfigError(f"plotly.min.js is missing from the plotly package ({path})")
    return path


@functools.lru_cache(maxsize=1)
def plotly_js() -> tuple[str, bytes]:
    """``(version, bytes)`` of plotly.min.js; read once per kernel."""
    data = plotly_js_path().read_bytes()
    found = re.search(rb"plotly\.js v(\d+\.\d+\.\d+)", data[:400])
    return (found.group(1).decode() if found else "unknown"), data


def send_plotly(widget) -> None:
    """Answer a front end's ``{"type": "plotly"}`` request: plotly.js as one binary buffer, or
    the reason it cannot come (every everyo widget's front end asks this way, once per page)."""
    try:
        version, data = plotly_js()
    except EveryOConfigError as exc:  # the page says why instead of waiting forever
        widget.send({"type": "plotly", "error": str(exc)})
        return
    widget.send({"type": "plotly", "version": version}, buffers=[data])
