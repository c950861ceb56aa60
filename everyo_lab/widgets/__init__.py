"""Widgets: thin wiring from the pure views in :mod:`everyo_lab.views` to traitlets."""

from everyo_lab.widgets.dashboard import Dashboard, dashboard

__all__ = ["Dashboard", "dashboard"]
