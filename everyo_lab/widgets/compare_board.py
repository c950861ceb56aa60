"""``ComparisonBoard``: what :func:`everyo_lab.compare` returns, a dashboard showing only the
comparison of its run (B) with a baseline (A)."""

from __future__ import annotations

from everyo_lab.widgets.dashboard import Dashboard

__all__ = ["ComparisonBoard"]


class ComparisonBoard(Dashboard):
    """A :class:`Dashboard` with ``compare_only``; displayed as the magic displays a dashboard.

    As the last expression of a cell it shows two outputs: the live widget, and the static
    rendering (hidden while the widget shows), so that a saved notebook reopened without a
    kernel, nbconvert HTML and a terminal show the comparison, never "model not found".
    """

    def __init__(self, run_b, run_a, **kwargs):
        super().__init__(run_b, compare=run_a, compare_only=True, **kwargs)

    def widget_bundle(self) -> dict:
        bundle = super().widget_bundle()
        c = self.comparison
        if c:
            bundle["text/plain"] = f"everyo comparison: {c['a']['label']} → {c['b']['label']}"
        return bundle

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget_bundle(), raw=True)
        display(self.static_bundle(hide_when_live=True), raw=True)
