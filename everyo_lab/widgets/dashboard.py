"""``Dashboard``: header, flame chart, icicle, summary table and export button of one run.

Wiring only: every picture comes from a pure view in :mod:`everyo_lab.views`. ``dashboard()``
adds a run picker over every run in ``everyo.profiler.runs``.
"""

from __future__ import annotations

import functools
import html
import threading

import ipywidgets as widgets
import traitlets

from everyo.errors import EveryOConfigError, EveryOProfilerError
from everyo_lab.widgets.export import ExportButton
from everyo_lab.widgets.figures import apply_figure, bar_count, new_figure_widget
from everyo_lab.widgets.picker import RunPicker
from everyo_lab.widgets.table import SummaryTable

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# JupyterLab renders a widget-view output whose model is gone (a reopened notebook, no kernel)
# as "model not found" and never falls back to the same bundle's text/html. So the magic shows
# the static rendering as an output of its own, which this rule hides while the live dashboard
# is on screen in the same output area (JupyterLab and the classic notebook). Untrusted
# notebooks drop <style>, which leaves the static part visible: the safe direction.
HIDE_WHEN_LIVE = (
    "<style>.jp-OutputArea:has(.everyo-dashboard) .jp-OutputArea-child:has(.everyo-static),"
    ".output:has(.everyo-dashboard) .output_area:has(.everyo-static){display:none}</style>"
)
LIVE_MAX_SHAPES = 4000  # while a cell runs: fewer bars keep each refresh cheap for the kernel


def _views():
    import everyo_lab.views as views  # the other half of the lab; imported on first refresh

    return views


class Dashboard(widgets.VBox):
    """Everything about one profiling run in one widget.

    Parameters
    ----------
    run
        A ``Run`` from ``everyo.profiler.runs`` (``None`` shows an empty dashboard; with
        ``picker=True`` the latest run is used).
    top
        Show at most this many table rows (``None``: all).
    group_by, sort_by
        Initial grouping (``"name"``, ``"path"`` or ``"shape"``) and sort column of the table.
    picker
        Add a run picker listing every run in the kernel's store (what ``dashboard()`` does).

    Examples
    --------
    >>> from everyo.profiler import runs  # doctest: +SKIP
    >>> Dashboard(runs.latest)  # doctest: +SKIP
    """

    theme = traitlets.Unicode("light")

    def __init__(
        self,
        run=None,
        *,
        top: int | None = None,
        group_by: str = "name",
        sort_by: str = "total_ms",
        picker: bool = False,
        **kwargs,
    ):
        self._run = run
        self._top = top
        self._lock = threading.RLock()  # refresh runs on the live thread and on comm messages
        self._x_range = None
        self._zooming = False
        self._batch = None
        self._live = None  # (run, LiveState, cursor) while a live refresher feeds us
        self._unsubscribe = None
        self.header = widgets.HTML()
        self.flame = new_figure_widget()
        self.icicle = new_figure_widget()
        self.table = SummaryTable(group_by=group_by, sort_by=sort_by)
        self.export_button = ExportButton(run)
        self.picker = RunPicker() if picker else None
        children = [self.header, self.flame, self.icicle, self.export_button, self.table]
        if self.picker is not None:
            children.insert(0, self.picker)
        super().__init__(children=children, **kwargs)
        self.add_class("everyo-dashboard")
        self.table.observe(self._on_table_options, ["group_by", "sort_by", "descending"])
        self.table.observe(self._on_theme, "theme")
        self.flame.layout.on_change(self._on_zoom, "xaxis.range", "xaxis.autorange")
        if self.picker is not None:
            self._attach_picker()
        self.refresh()

    # -- public --------------------------------------------------------------------------------
    @property
    def run(self):
        """The run shown."""
        return self._run

    @run.setter
    def run(self, run) -> None:
        with self._lock:
            self._run = run
            self._x_range = None
            self.export_button.run = run
        self.refresh()

    def refresh(self, *, live: bool = False) -> None:
        """Re-read the run and redraw every part.

        ``live=True`` (the refresher, while the cell runs) reads only the events recorded since
        the last live refresh into a :class:`~everyo_lab.views.live_state.LiveState`, skips the
        icicle and sends fewer flame bars, so a refresh costs the profiled code little whatever
        the number of events. The other refreshes compute everything exactly from the snapshot.
        """
        views = _views()
        with self._lock:
            run = self._run
            if self.picker is not None and not live:
                from everyo.profiler import runs

                self.picker.set_runs(list(runs))
            if run is None:
                self.header.value = _empty_header()
                return
            if live:
                self._refresh_live(run)
                return
            batch = run.snapshot()
            self._batch = batch
            if getattr(run, "status", None) != "running":
                self._live = None  # the run is over: its live state is no longer needed
            fig = views.flame_figure(batch, x_range=self._x_range, theme=self.theme)
            self._draw_flame(fig)
            self._update_table(batch)
            self.header.value = header_html(views.header_info(run))
            apply_figure(self.icicle, views.icicle_figure(batch, theme=self.theme))

    def _refresh_live(self, run) -> None:
        """Feed the new events to the live state and draw from it (lock held)."""
        from everyo_lab.views.live_state import LiveState

        if self._live is None or self._live[0] is not run:
            self._live = (run, LiveState(), 0)
        _, state, cursor = self._live
        batch, cursor = run.events_since(cursor)
        state.feed(batch)
        self._live = (run, state, cursor)
        self._batch = None  # zooms and table options now read a fresh snapshot
        if self._x_range is None:  # zoomed in: the exact zoomed chart stays until unzoomed
            self._draw_flame(state.flame_figure(max_shapes=LIVE_MAX_SHAPES, theme=self.theme))
        wall = run.wall_ns
        self._show_rows(functools.partial(state.table_rows, wall_ns=wall))
        # Hot spots as the exact header ranks them (by name, most self time), from the live
        # aggregates (O(distinct names)), not from the table: its rows may be cut to ``top``
        # under another sort or grouping. The final refresh uses the exact view.
        hot = state.table_rows(sort_by="self_ms", top=3, wall_ns=wall)
        self.header.value = header_html(live_header_info(run, hot))

    def mime_bundle(self) -> dict:
        """The widget view plus static ``text/html`` and ``text/plain`` renderings of the run."""
        bundle = self.widget_bundle()
        bundle.update(self.static_bundle())
        return bundle

    def widget_bundle(self) -> dict:
        """The widget view alone, with a one-line ``text/plain`` for front ends without widgets."""
        label = self._run.label if self._run is not None else "no run"
        return {
            WIDGET_MIME: {"version_major": 2, "version_minor": 0, "model_id": self.model_id},
            "text/plain": f"everyo dashboard: {label}",
        }

    def static_bundle(self, *, hide_when_live: bool = False) -> dict:
        """Static ``text/html`` and ``text/plain`` renderings of the run (no kernel needed).

        ``hide_when_live`` wraps the HTML so that it hides itself while a live dashboard is
        shown in the same output area (the magic shows both; see :func:`static_bundle`).
        """
        bundle = static_bundle(
            self._run,
            top=self._top,
            group_by=self.table.group_by,
            sort_by=self.table.sort_by,
            theme=self.theme,
        )
        if hide_when_live:
            bundle["text/html"] = HIDE_WHEN_LIVE + bundle["text/html"]
        return bundle

    def _repr_mimebundle_(self, **kwargs):
        return self.mime_bundle()

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for child in (self.flame, self.icicle, self.table, self.export_button, self.picker):
            if child is not None:
                child.close()
        super().close()

    def __repr__(self) -> str:
        run = self._run
        if run is None:
            return "Dashboard(run=None)"
        return (
            f"Dashboard(run={run.label!r}, status={run.status!r}, "
            f"events={run.num_events}, bars={bar_count(self.flame)})"
        )

    # -- wiring --------------------------------------------------------------------------------
    def _draw_flame(self, fig: dict) -> None:
        self._zooming = True  # our own layout update must not look like a user zoom
        try:
            apply_figure(self.flame, fig, keep_x_range=self._x_range is None)
        finally:
            self._zooming = False

    def _update_table(self, batch) -> None:
        self._show_rows(functools.partial(_views().table_rows, batch))

    def _show_rows(self, rows_of) -> None:
        """Show ``rows_of(group_by=, sort_by=, descending=, top=)`` with the table's options.

        A sort column the rows lack (flops without ``--record-ops``; while live, any column only
        the final table has) falls back to ``total_ms``; grouping by shape a run recorded
        without shapes keeps the table shown.
        """
        t = self.table
        options = {"group_by": t.group_by, "descending": t.descending, "top": self._top}
        try:
            try:
                rows = rows_of(sort_by=t.sort_by, **options)
            except EveryOConfigError:
                rows = rows_of(sort_by="total_ms", **options)
        except EveryOProfilerError:
            return
        self.table.rows = _json_rows(rows)

    def _on_table_options(self, _change) -> None:
        with self._lock:
            batch = self._current_batch()
            if batch is not None:
                self._update_table(batch)

    def _current_batch(self):
        """The snapshot last drawn, or a fresh one while live refreshes keep none."""
        if self._batch is None and self._live is not None and self._live[0] is self._run:
            self._batch = self._run.snapshot()
        return self._batch

    def _on_theme(self, change) -> None:
        if change["new"] in ("light", "dark") and change["new"] != self.theme:
            self.theme = change["new"]
            self.refresh()

    def _on_zoom(self, _layout, x_range, autorange) -> None:
        """Recompute the level of detail for the visible window after a zoom or pan."""
        if self._zooming:
            return
        new = None if autorange or x_range is None else (float(x_range[0]), float(x_range[1]))
        if new == self._x_range:
            return
        with self._lock:
            batch = self._current_batch()
            if batch is None:
                return
            self._x_range = new
            fig = _views().flame_figure(batch, x_range=new, theme=self.theme)
            self._draw_flame(fig)

    def _attach_picker(self) -> None:
        from everyo.profiler import runs

        self.picker.set_runs(list(runs))
        if self._run is None and self.picker.selected:
            self._run = runs[self.picker.selected]
            self.export_button.run = self._run
        elif self._run is not None:
            self.picker.selected = self._run.id
        self.picker.observe(self._on_pick, "selected")
        self._unsubscribe = runs.subscribe(self._on_new_run)

    def _on_new_run(self, run) -> None:
        from everyo.profiler import runs

        self.picker.set_runs(list(runs))

    def _on_pick(self, change) -> None:
        from everyo.profiler import runs

        if change["new"] and (self._run is None or change["new"] != self._run.id):
            self.run = runs[change["new"]]


def dashboard(**kwargs) -> Dashboard:
    """A dashboard with a run picker over every run in ``everyo.profiler.runs``.

    The picker lists new runs as they arrive; the latest run is shown first.
    """
    return Dashboard(None, picker=True, **kwargs)


def static_bundle(run, *, top=None, group_by="name", sort_by="total_ms", theme="light") -> dict:
    """``text/html`` and ``text/plain`` renderings of ``run`` that need no kernel."""
    if run is None:
        return {"text/plain": "everyo dashboard: no runs yet", "text/html": _empty_header()}
    views = _views()
    return {
        "text/html": views.render_html(
            run, top=top, group_by=group_by, sort_by=sort_by, theme=theme
        ),
        "text/plain": views.render_text(run, top=top, group_by=group_by, sort_by=sort_by),
    }


def live_header_info(run, rows: list[dict]) -> dict:
    """Header facts of a running run; hot spots are the table rows with the most self time."""
    ranked = sorted(rows, key=lambda r: r.get("self_ms") or 0.0, reverse=True)
    return {
        "label": run.label,
        "status": run.status,
        "error": run.error,
        "wall_ms": run.wall_ns / 1e6,
        "events": run.num_events,
        "hot_spots": [
            {"name": r.get("name"), "path": r.get("path"), "self_ms": r.get("self_ms")}
            for r in ranked[:3]
        ],
    }


def header_html(info: dict) -> str:
    """The header line: label, status, wall time, events and the top hot spots by self time."""
    esc = html.escape
    status = esc(str(info.get("status", "")))
    if info.get("error"):
        status += f" ({esc(str(info['error']))})"
    wall = info.get("wall_ms")
    parts = [
        f"<b>{esc(str(info.get('label', '')))}</b>",
        status,
        f"{wall:,.1f} ms" if isinstance(wall, (int, float)) else "",
        f"{info.get('events', 0):,} events",
    ]
    hot = info.get("hot_spots") or []
    spots = ", ".join(_hot_spot(h) for h in hot[:3])
    line = " · ".join(p for p in parts if p)
    if spots:
        line += f" · hot spots (self time): {spots}"
    return f'<div class="everyo-header" style="padding:4px 0">{line}</div>'


def _hot_spot(item: dict) -> str:
    name = item.get("path") or item.get("name", "?")
    ms = item.get("self_ms")
    text = html.escape(str(name))
    return f"{text} {ms:.2f} ms" if isinstance(ms, (int, float)) else text


def _empty_header() -> str:
    return (
        '<div class="everyo-header">No run yet: profile a cell with '
        "<code>%%everyo_profile</code>.</div>"
    )


def _json_rows(rows) -> list[dict]:
    """Rows with plain Python scalars (traitlets sync JSON; numpy scalars are not JSON)."""
    out = []
    for row in rows:
        clean = {}
        for key, value in row.items():
            if hasattr(value, "item") and not isinstance(value, (str, bytes)):
                value = value.item()
            if isinstance(value, float) and value != value:  # NaN is not valid JSON
                value = None
            clean[key] = value
        out.append(clean)
    return out
