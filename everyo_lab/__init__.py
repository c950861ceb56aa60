"""everyo's Jupyter layer: the ``%%everyo_profile`` cell magic and the dashboard.

Load it in a notebook with ``%load_ext everyo_lab``. Importing this package stays cheap: the
widgets (ipywidgets, anywidget) load on first use, the magic when the extension loads.
"""

from __future__ import annotations

from everyo._version import __version__

__all__ = [
    "Dashboard",
    "SweepWidget",
    "compare",
    "dashboard",
    "load_ipython_extension",
    "sweeps",
    "to_html",
    "__version__",
]


def load_ipython_extension(ipython) -> None:
    """Register ``%%everyo_profile``, ``%everyo_dashboard`` and ``%everyo_sweep``
    (``%load_ext everyo_lab``)."""
    from everyo_lab.magic import EveryOMagics  # imported here: IPython only when loaded

    ipython.register_magics(EveryOMagics)
    # Import the widget stack now (anywidget, ipywidgets, the views), so that the first profiled
    # cell paints at once. plotly's Python package is never imported: the browser gets
    # plotly.js from its package data (everyo_lab.widgets.plotly_asset).
    import everyo_lab.views  # noqa: F401
    import everyo_lab.widgets  # noqa: F401


def __getattr__(name: str):
    # Lazy attributes keep `import everyo_lab` free of ipywidgets/plotly until they are used.
    if name == "Dashboard":
        from everyo_lab.widgets.dashboard import Dashboard

        return Dashboard
    if name == "dashboard":
        from everyo_lab.widgets.dashboard import dashboard

        return dashboard
    if name == "compare":
        from everyo_lab.compare_runs import compare

        return compare
    if name in ("SweepWidget", "sweeps"):
        from everyo_lab.widgets import sweep_widget

        return getattr(sweep_widget, name)
    if name == "to_html":
        from everyo_lab.html_report import to_html

        return to_html
    raise AttributeError(f"module 'everyo_lab' has no attribute {name!r}")
