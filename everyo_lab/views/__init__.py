"""Pure views of profiler runs: run or event batch in, plotly figure dict, rows, HTML or text out.

One :class:`Report` per refresh (:func:`build_report`, :func:`live_report`) holds every number
the header, hot spots, steps, table and notes show; the text, static HTML, ``to_html`` and the
widget render that one report.

No widgets, no I/O, no IPython and no plotly import: these functions are what the dashboard
widgets, the static notebook output and the HTML report are made of, and they are unit-tested
without Jupyter.
"""

from __future__ import annotations

from everyo_lab.views.colors import color_for, color_key
from everyo_lab.views.flame.flame_figure import flame_figure
from everyo_lab.views.flame.icicle import icicle_figure
from everyo_lab.views.header import header_info
from everyo_lab.views.report import Report, build_report, display_label, live_report
from everyo_lab.views.static import render_html
from everyo_lab.views.sweep.sweep_charts import sweep_charts, sweep_figure
from everyo_lab.views.table.table_rows import OVERLAP_WARNING, table_rows
from everyo_lab.views.text import render_text

__all__ = [
    "OVERLAP_WARNING",
    "Report",
    "build_report",
    "color_for",
    "color_key",
    "display_label",
    "flame_figure",
    "header_info",
    "icicle_figure",
    "live_report",
    "render_html",
    "render_text",
    "sweep_charts",
    "sweep_figure",
    "table_rows",
    "SweepReport",
    "build_sweep_report",
    "render_sweep_html",
    "render_sweep_text",
]

# The sweep report needs everyo.bench (a few hundred milliseconds of imports): loaded on first
# use, so that `%load_ext everyo_lab` stays quick.
_LAZY = {
    "SweepReport": "everyo_lab.views.sweep.sweep_report",
    "build_sweep_report": "everyo_lab.views.sweep.sweep_report",
    "render_sweep_html": "everyo_lab.views.sweep.sweep_static",
    "render_sweep_text": "everyo_lab.views.sweep.sweep_static",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'everyo_lab.views' has no attribute {name!r}")
