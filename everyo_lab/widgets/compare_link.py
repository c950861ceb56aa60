"""The comparison half of a :class:`~everyo_lab.widgets.dashboard.Dashboard`: the baseline run
(A) it compares its own run (B) with, A's event stream, and the comparison.

A's events travel as B's do (binary columns, :class:`.stream.EventStream`, messages tagged with
A's run id), so the browser draws A's flame chart with the same code, under B's, on one time
axis. The comparison itself (header, diff rows with verdicts) is plain data, synced as the
``comparison`` trait: a few kilobytes.
"""

from __future__ import annotations

from everyo_lab.widgets.stream import EventStream

__all__ = ["CompareLink", "compare_static_bundle"]


class CompareLink:
    """The baseline run ``run`` of a comparison and what the browser holds of it."""

    def __init__(self, run):
        self.run = run
        self.stream = EventStream(run)
        self.comparison = None  # the last views.compare.Comparison

    @property
    def run_id(self) -> str:
        return str(self.run.id)

    def update(self, run_b, *, group_by: str = "name") -> list:
        """A's new events (all of them the first time) and a fresh comparison with ``run_b``;
        returns the messages to send."""
        from everyo_lab.views.compare.compare_view import build_comparison

        messages = self.stream.update(self.stream.read(), final=True)
        if group_by == "shape" and (
            not self.run.options.get("record_shapes", True)
            or not run_b.options.get("record_shapes", True)
        ):
            group_by = "name"  # a side recorded without shapes: compare by name
        self.comparison = build_comparison(self.run, run_b, group_by=group_by)
        return messages

    def answer(self, content: dict) -> list:
        """Messages for a ``resend`` or ``detail`` request about A (else none)."""
        kind = content.get("type")
        if kind == "resend":
            return self.stream.resend()
        if kind == "detail" and not self.stream.raw:
            try:
                x0, x1 = float(content["x0"]), float(content["x1"])
                width = int(content.get("width") or 1600)
            except (KeyError, TypeError, ValueError):
                return []
            return [self.stream.detail(x0, x1, width)] if x1 > x0 else []
        return []


def compare_static_bundle(comparison, *, theme: str = "light") -> dict:
    """``text/html`` and ``text/plain`` of a comparison (no kernel needed)."""
    from everyo_lab.views.compare.compare_static import render_compare_html, render_compare_text

    return {
        "text/html": render_compare_html(comparison, theme=theme),
        "text/plain": render_compare_text(comparison),
    }
