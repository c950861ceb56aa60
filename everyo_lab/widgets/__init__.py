"""Widgets: thin wiring from the pure views in :mod:`everyo_lab.views` to traitlets."""

from everyo_lab.widgets.dashboard import Dashboard, dashboard
from everyo_lab.widgets.export import ExportButton
from everyo_lab.widgets.picker import RunPicker
from everyo_lab.widgets.table import SummaryTable

__all__ = ["Dashboard", "ExportButton", "RunPicker", "SummaryTable", "dashboard"]
