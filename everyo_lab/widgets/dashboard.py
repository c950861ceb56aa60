"""``Dashboard``: one anywidget showing one run — header, flame chart, steps, table, icicle, export.

Wiring only. The numbers come from one :class:`~everyo_lab.views.report.Report` per refresh
(a few kilobytes); the flame chart's events travel as binary columns in custom messages
(:mod:`.wire`, :class:`.stream.EventStream`), never in widget state, and the browser does level
of detail, zoom and pan itself. Each report reaches the browser once, numbered (``seq``): a live
refresh's in the header of its last events message (or a ``report`` message of its own: one
message a refresh, as each one sets off a chain of wake-ups, kernel, server, browser, that a
loop keeping every core busy pays for), every other one (final, a new sort, a new run) as the
``report`` trait, which a saved notebook keeps. The browser shows the newest. What the live
dashboard knows of a recording run (cursor, steps, thread numbers, running aggregates) is one
:class:`~everyo_lab.views.live_session.LiveSession`; the widget serialises it. plotly.js
reaches the page once: the first dashboard of a page asks the kernel for it
(:mod:`.plotly_asset`) and every later one reuses it. ``dashboard()`` adds a run picker over
every run in ``everyo.profiler.runs``.
"""

from __future__ import annotations

import math
import threading
import time
import warnings
import weakref
from pathlib import Path

import anywidget
import traitlets

from everyo.errors import EveryOProfilerError, EveryOProfilerWarning
from everyo.profiler.analysis.schema import GROUP_BY
from everyo_lab.views.colors import THEMES
from everyo_lab.views.live_session import LiveSession
from everyo_lab.views.report import frozen, resorted
from everyo_lab.widgets.export import export_chrome_trace, trace_file_name
from everyo_lab.widgets.picker import gone_bundle, gone_text, registry, removed_from
from everyo_lab.widgets.stream import EventStream
from everyo_lab.widgets.why_link import WhyLink
from everyo_lab.widgets.wire import Encoded

STATIC = Path(__file__).parent.parent / "static"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
GROUPS = GROUP_BY  # from everyo.profiler.analysis.schema, like the front end's select
# JupyterLab renders a widget-view output whose model is gone (a reopened notebook, no kernel)
# as "Error displaying widget: model not found" and never falls back to the same bundle's
# text/html. So the magic shows the static rendering as an output of its own, right after the
# widget's, and these rules (in the static output) show exactly one of the two: the static
# output is hidden while the dashboard has rendered in the same output area, and the output
# just before it (the widget's) is hidden while it holds no dashboard (loading, "model not
# found", or a front end without widgets). Untrusted notebooks drop <style>, which leaves the
# static part visible: the safe direction.
# Every live widget of everyo_lab with a static twin uses these rules, each with its own pair of
# classes (a rule in one output applies to the whole page).


def hide_when_live(live: str = "everyo-dashboard", static: str = "everyo-static") -> str:
    """The rules above for a widget whose root has class ``live`` and whose static output has
    class ``static``."""
    return (
        f"<style>.jp-OutputArea:has(.{live}) .jp-OutputArea-child:has(.{static}),"
        f".output:has(.{live}) .output_area:has(.{static}){{display:none}}"
        f".jp-OutputArea-child:not(:has(.{live})):not(:has(.{static}))"
        f":has(+ .jp-OutputArea-child .{static}){{display:none}}</style>"
    )


HIDE_WHEN_LIVE = hide_when_live()


def bundle_text(name: str) -> str:
    """The front end ``static/<name>`` as text, for a widget's ``_esm``.

    Text, not a path: anywidget connects every widget of a class whose ``_esm`` is a path to the
    file's change signal with a closure over the widget, which keeps each widget, and the run it
    shows, alive for good (even after ``close()``).
    """
    return (STATIC / name).read_text(encoding="utf-8")


def _views():
    import everyo_lab.views as views  # the other half of the lab; imported on first refresh

    return views


class Dashboard(anywidget.AnyWidget):
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
        Add a run picker listing every run in the kernel's store (what ``dashboard()`` does),
        with a second one that picks a run to compare with.
    compare
        A baseline run to compare ``run`` with (see :func:`everyo_lab.compare`): both flame
        charts on one time axis and a diff table with a verdict per row.
    compare_only
        Show only the comparison (what ``everyo_lab.compare`` does).

    Examples
    --------
    >>> from everyo.profiler import runs  # doctest: +SKIP
    >>> Dashboard(runs.latest)  # doctest: +SKIP
    """

    _esm = bundle_text("dashboard.js")
    report = traitlets.Dict().tag(sync=True)
    icicle = traitlets.Dict().tag(sync=True)
    run_id = traitlets.Unicode("").tag(sync=True)
    group_by = traitlets.Enum(GROUPS, default_value="name").tag(sync=True)
    sort_by = traitlets.Unicode("total_ms").tag(sync=True)
    descending = traitlets.Bool(True).tag(sync=True)
    theme = traitlets.Unicode("light").tag(sync=True)
    themes = traitlets.Dict(THEMES).tag(sync=True)
    picker = traitlets.Bool(False).tag(sync=True)
    runs = traitlets.List(traitlets.Dict()).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    export_status = traitlets.Unicode("").tag(sync=True)
    export_busy = traitlets.Bool(False).tag(sync=True)
    compare_id = traitlets.Unicode("").tag(sync=True)  # the baseline run's id ("" for none)
    comparison = traitlets.Dict().tag(sync=True)  # views.compare.Comparison.to_dict()
    compare_only = traitlets.Bool(False).tag(sync=True)
    why_target = traitlets.Dict().tag(sync=True)  # the row or bar selected (set by the browser)
    why_all_frames = traitlets.Bool(False).tag(sync=True)  # the why panel shows everyo's frames
    why = traitlets.Dict().tag(sync=True)  # the why panel (views.why.panel)
    why_live = traitlets.Dict().tag(sync=True)  # while live: the first rows' panels (WhyLink)
    why_outside = traitlets.Dict().tag(sync=True)  # the link to the outside panel (WhyLink)

    def __init__(
        self,
        run=None,
        *,
        top: int | None = None,
        group_by: str = "name",
        sort_by: str = "total_ms",
        picker: bool = False,
        export_dir: str | Path | None = None,
        compare=None,
        compare_only: bool = False,
        **kwargs,
    ):
        super().__init__(
            group_by=group_by, sort_by=sort_by, picker=picker, compare_only=compare_only, **kwargs
        )
        self._cmp = None  # CompareLink of the baseline run while comparing
        self._why = WhyLink()
        self._top = top
        self._export_dir = export_dir
        self._lock = threading.RLock()  # refresh runs on the live thread and on comm messages
        self._run = None
        self._session: LiveSession | None = None  # what we know of the run shown
        self._stream: EventStream | None = None  # what the browser holds of it
        self._report = None  # the last Report (the static rendering reuses it)
        self._seq = 0  # the number of the last report sent
        self._shown: dict = {}  # the last report sent, by either route
        self._unsubscribe = None
        self._gone = None  # (label, reason) of the run shown until it left the registry
        on_removal = removed_from(weakref.ref(self))
        self._unsubscribe_removals = registry().subscribe_removals(on_removal)
        self.on_msg(self._on_message)
        self.observe(self._on_table_options, ["group_by", "sort_by", "descending"])
        self.observe(self._on_theme, "theme")
        self.observe(self._on_compare_pick, "compare_id")
        self.observe(self._on_why, ["why_target", "why_all_frames"])
        if compare is not None:
            self._set_compare(compare, refresh=False)
        if picker:
            self._attach_picker(run)
        else:
            self.run = run

    # -- public --------------------------------------------------------------------------------
    @property
    def run(self):
        """The run shown."""
        return self._run

    @run.setter
    def run(self, run) -> None:
        with self._lock:
            self._run = run
            self._gone = None
            self._session = LiveSession(run) if run is not None else None
            self._stream = EventStream(self._session) if run is not None else None
            self._why.follow(self._session)
            self.why_target = {}
            self.why = {}
            self.why_live = {}
            self.why_outside = {}
            self.run_id = run.id if run is not None else ""
            self.icicle = {}
        self.refresh()

    def refresh(self, *, live: bool = False) -> float | None:
        """Re-read the run: send the new events and a new report.

        ``live=True`` (the refresher, while the cell runs) reads only the events recorded since
        the last refresh and builds the report from running aggregates, so a refresh costs the
        profiled code little whatever the number of events; it returns the CPU seconds spent
        reading and folding in the new events (the part that grows with them, which the
        refresher's pacing cannot save). The other refreshes build the exact report from the
        whole run, and the icicle.
        """
        with self._lock:
            run, session, stream = self._run, self._session, self._stream
            if self.picker and not live:
                self._list_runs()
            if run is None:
                self._report = None
                self.report = {}
                return None
            t0 = time.thread_time()
            batch = session.read()
            self._why.feed(batch, session.new_samples)  # (before the panels: one read each)
            final = getattr(run, "status", "completed") != "running"
            state = session.fold(batch) if not final else None  # it must see every row
            if live and not final:
                catch_up = time.thread_time() - t0
                self._refresh_live(run, stream, batch, state)
                self._refresh_why()
                self._auto_why(run)
                return catch_up
            self._send_all(stream.update(batch, state=state, final=final))
            # a finished run is read once, and every view of this refresh reads that snapshot
            source = frozen(run) if final else run
            self._show_report(self._build_report(source))
            if final:
                self.icicle = _views().icicle_figure(source, theme=self.theme)
                self._refresh_comparison(source)
            self._refresh_why()
            if final:
                self.why_outside = self._why.outside_link(source)
            if final:
                self._auto_why(run)
            return None

    def _auto_why(self, run) -> None:
        """No events (yet) but samples: the panel opens on the run's sampled call tree, which
        the flame chart draws (while live too, as the samples come)."""
        if not self.why_target:
            target = self._why.auto_target(run)
            if target:
                self.why_target = target  # (_on_why builds the panel)

    @property
    def shown_report(self) -> dict:
        """The report the browser shows now (plain data): the newest sent, as the ``report``
        trait or with a live refresh's events (``{}`` without a run)."""
        return self._shown if self._run is not None else {}

    # -- the why panel -------------------------------------------------------------------------
    def _hide(self):
        return None if self.why_all_frames else "everyo"

    def _on_why(self, change) -> None:
        """A row or bar was selected (or the fold button pressed): the panel at once."""
        with self._lock:
            if change["name"] == "why_target":
                threads = dict(self._session.threads.ids) if self._session is not None else {}
                self.why = self._why.select(self._run, change["new"], threads, self._hide())
            else:
                self._refresh_why(force=True)

    def _refresh_why(self, *, force: bool = False) -> None:
        """New panels: the live table's first rows' (while live, when due), and the
        selection's, if any."""
        rows = self._why.live_rows(self._run, self._report, self._hide(), force=force)
        if rows is not None:
            self.why_live = rows
        if self._why.sel is None:
            return
        panel = self._why.panel(self._run, self._hide(), force=force)
        if panel is not None:
            self.why = panel

    # -- comparison ----------------------------------------------------------------------------
    @property
    def compare_run(self):
        """The baseline run the shown run is compared with (``None``: no comparison)."""
        return self._cmp.run if self._cmp is not None else None

    @compare_run.setter
    def compare_run(self, run) -> None:
        self._set_compare(run)

    @property
    def comparison_view(self):
        """The last :class:`~everyo_lab.views.compare.compare_view.Comparison` (``None`` when not
        comparing)."""
        return self._cmp.comparison if self._cmp is not None else None

    def _set_compare(self, run, *, refresh: bool = True) -> None:
        from everyo_lab.widgets.compare_link import CompareLink

        with self._lock:
            self._cmp = CompareLink(run) if run is not None else None
            self.compare_id = self._cmp.run_id if self._cmp is not None else ""
            self.comparison = {}
            if refresh:
                self._refresh_comparison()

    def _refresh_comparison(self, source=None) -> None:
        """A's events and a new comparison, once the shown run is finished (``source``: the
        run as this refresh read it, :func:`~everyo_lab.views.report.frozen`)."""
        with self._lock:
            cmp, run = self._cmp, self._run
            if cmp is None or run is None or getattr(run, "status", "") == "running":
                return
            run = source if source is not None else run
            self._send_all(cmp.update(run, group_by=self.group_by))
            self.comparison = cmp.comparison.to_dict()

    def _on_compare_pick(self, change) -> None:
        """The picker's "compare with" select (or Python) set ``compare_id``."""
        current = self._cmp.run_id if self._cmp is not None else ""
        if change["new"] == current:
            return
        if not change["new"]:
            self._set_compare(None)
            return
        from everyo.profiler import runs

        try:
            self._set_compare(runs[change["new"]])
        except KeyError:  # a run evicted by the memory budget meanwhile
            self.compare_id = current

    def _refresh_live(self, run, stream, batch, state) -> None:
        messages = stream.update(batch, state=state)
        report = self._next_report(self._live_report(run))
        if messages:  # the browser applies the events, then shows the report
            messages[-1].header["report"] = report
        else:
            messages = [Encoded({"type": "report", "run": run.id, "report": report}, [])]
        self._send_all(messages)

    def _next_report(self, report) -> dict:
        """``report`` as the browser gets it, numbered after every report sent before."""
        self._report = report
        self._seq += 1
        self._shown = {**report.to_dict(), "seq": self._seq}
        return self._shown

    def _show_report(self, report) -> None:
        """Send ``report`` as the trait (see the module)."""
        self.report = self._next_report(report)

    def _table_options(self) -> dict:
        return {
            "group_by": self.group_by,
            "sort_by": self.sort_by,
            "descending": self.descending,
            "top": self._top,
        }

    def _build_report(self, run):
        from everyo_lab.views.report import build_report

        return _with_fallback_sort(build_report, run, self._table_options())

    def _live_report(self, run):
        session = self._session

        def build(_run, **options):
            return session.report(**options)

        return _with_fallback_sort(build, run, self._table_options())

    def export_trace(self, directory: str | Path | None = None) -> Path:
        """Write the run's Chrome trace as ``<label>.trace.json`` into ``directory`` (default:
        the working directory, i.e. next to the notebook) and send it to the browser."""
        if self._run is None:
            raise EveryOProfilerError("no run to export: profile a cell first")
        folder = Path(directory or self._export_dir or Path.cwd())
        path = export_chrome_trace(self._run, folder / trace_file_name(self._run.label))
        data = path.read_bytes()
        self.send({"type": "download", "filename": path.name}, buffers=[data])
        self.export_status = f"wrote {path.name} ({len(data):,} bytes)"
        return path

    # -- outputs -------------------------------------------------------------------------------
    def mime_bundle(self) -> dict:
        """The widget view plus static ``text/html`` and ``text/plain`` renderings of the run."""
        bundle = self.widget_bundle()
        bundle.update(self.static_bundle())
        return bundle

    def widget_bundle(self) -> dict:
        """The widget view alone, with a one-line ``text/plain`` for front ends without widgets."""
        label = self._run.label if self._run is not None else "no run"
        if self._gone is not None:
            label = gone_text(*self._gone)
        return {
            WIDGET_MIME: {"version_major": 2, "version_minor": 1, "model_id": self.model_id},
            "text/plain": f"everyo dashboard: {label}",
        }

    def static_bundle(self, *, hide_when_live: bool = False) -> dict:
        """Static ``text/html`` and ``text/plain`` renderings of the run (no kernel needed), from
        the report of the last refresh. ``hide_when_live`` adds the rules that show exactly one
        of the live widget and this static output (the magic shows both; see the module)."""
        if self._run is None:
            return static_bundle(None) if self._gone is None else gone_bundle(*self._gone)
        views = _views()
        report = self._report
        if report is None or report.live:
            report = self._report = self._build_report(self._run)
        bundle = {
            "text/html": views.render_html(self._run, report=report, theme=self.theme),
            "text/plain": views.render_text(self._run, report=report),
        }
        if self.comparison_view is not None:
            from everyo_lab.widgets.compare_link import compare_static_bundle

            extra = compare_static_bundle(self.comparison_view, theme=self.theme)
            if self.compare_only:
                bundle = extra
            else:
                bundle["text/html"] += extra["text/html"]
                bundle["text/plain"] += "\n\n" + extra["text/plain"]
        if hide_when_live:
            bundle["text/html"] = HIDE_WHEN_LIVE + bundle["text/html"]
        return bundle

    def _repr_mimebundle_(self, **kwargs):
        return self.mime_bundle()

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._unsubscribe_removals()
        with self._lock:  # a closed widget shows nothing: let its runs go now
            self._why.follow(None)
            self._run = self._session = self._stream = self._report = self._cmp = None
        super().close()

    def _let_go(self, run, reason: str) -> None:
        """``run`` left the registry (``reason``: ``"evicted"`` by the memory budget, or
        ``"removed"``): stop holding it (the browser keeps what it shows).

        ipywidgets holds every widget until it is closed, and a notebook's dashboards stay open,
        so a dashboard that held its run would keep every run alive whatever the budget.
        """
        with self._lock:
            if self._cmp is not None and self._cmp.run is run:
                self._cmp = None
                self.compare_id = ""
            if self._run is run:
                self._run = self._session = self._stream = self._report = None
                self._why.follow(None)
                self._gone = (run.label, reason)
                self.export_status = f"{gone_text(run.label, reason)}; export runs you want to keep"
        if self.picker:
            self._list_runs()

    def __repr__(self) -> str:
        run = self._run
        if run is None:
            return "Dashboard(run=None)"
        held = self._stream.sent if self._stream is not None else 0
        return (
            f"Dashboard(run={run.label!r}, status={run.status!r}, "
            f"events={run.num_events}, sent={held})"
        )

    # -- wiring --------------------------------------------------------------------------------
    def _send_all(self, messages) -> None:
        for msg in messages:
            self.send(msg.header, buffers=msg.buffers)

    def _on_message(self, _widget, content, _buffers) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind == "plotly":
            from everyo_lab.widgets.plotly_asset import send_plotly

            send_plotly(self)
        elif (
            self._cmp is not None
            and content.get("run") == self._cmp.run_id
            and (self._run is None or self._cmp.run_id != self._run.id)
        ):
            with self._lock:  # about the baseline run of a comparison
                if self._cmp is not None:
                    self._send_all(self._cmp.answer(content))
        elif kind == "resend":
            with self._lock:
                if self._stream is not None:
                    messages = self._stream.resend()
                    if self._report is not None and self._report.live:  # not in the trait
                        report = self._next_report(self._report)
                        messages[-1].header["report"] = report
                    self._send_all(messages)
        elif kind == "detail":
            try:
                x0, x1 = float(content["x0"]), float(content["x1"])
                width = int(content.get("width") or 1600)
            except (KeyError, TypeError, ValueError, OverflowError):
                return  # not a request this front end sends (width=Infinity, x0=10**400)
            if not (math.isfinite(x0) and math.isfinite(x1)):
                return
            with self._lock:
                if self._stream is not None and not self._stream.raw and x1 > x0:
                    self._send_all([self._stream.detail(x0, x1, width)])
        elif kind == "export":
            self.export_busy = True
            try:
                self.export_trace()
            except Exception as exc:  # shown next to the button: a click has no traceback
                self.export_status = f"export failed: {type(exc).__name__}: {exc}"
            finally:
                self.export_busy = False

    def _on_table_options(self, _change) -> None:
        with self._lock:
            run = self._run
            if run is None:
                return
            # a header click re-orders the rows held (the browser has already, from the
            # table's sort orders): no summary of the run again
            held = self._report
            if _change["name"] != "group_by" and held is not None and held.run_id == run.id:
                if not any(n.startswith(FALLBACK_NOTE) for n in held.notes):
                    again = resorted(held, self.sort_by, self.descending)
                    if again is not None:
                        self._show_report(again)
                        return
            if self._session.state is not None and getattr(run, "status", "") == "running":
                report = self._next_report(self._live_report(run))
                self._send_all([Encoded({"type": "report", "run": run.id, "report": report}, [])])
            else:
                self._show_report(self._build_report(run))
            if _change["name"] == "group_by":
                self._refresh_comparison()  # the diff table groups as the summary table

    def _on_theme(self, change) -> None:
        """Only a known theme is kept; the browser recolours the figures itself (the ``themes``
        trait holds both themes' colours), with no round trip to the kernel."""
        if change["new"] not in ("light", "dark"):
            self.theme = change["old"] if change["old"] in ("light", "dark") else "light"

    def _attach_picker(self, run) -> None:
        from everyo.profiler import runs

        self._list_runs()
        self.observe(self._on_pick, "selected")
        self._unsubscribe = runs.subscribe(self._on_new_run)
        if run is None and self.selected:
            run = runs[self.selected]
        self._show(run)
        if run is not None:
            self.selected = run.id

    def _list_runs(self) -> None:
        from everyo.profiler import runs
        from everyo_lab.widgets.picker import run_entry

        entries = [run_entry(r) for r in runs]
        self.runs = entries
        if self.selected not in {e["id"] for e in entries}:
            self.selected = entries[-1]["id"] if entries else ""

    def _on_new_run(self, _run) -> None:
        self._list_runs()

    def _on_pick(self, change) -> None:
        from everyo.profiler import runs

        if change["new"] and (self._run is None or change["new"] != self._run.id):
            try:
                run = runs[change["new"]]
            except KeyError:  # evicted by the memory budget since the list was sent
                self._list_runs()
                return
            self._show(run)

    def _show(self, run) -> None:
        """Show ``run`` from the picker. A run whose report cannot be built (a bad file loaded
        past its checks) is named in the status line: the picker must keep every other run."""
        try:
            self.run = run
        except Exception as exc:  # noqa: BLE001 - any fault of one run, reported, not raised
            message = f"cannot show run {run.label!r}: {type(exc).__name__}: {exc}"
            warnings.warn(f"everyo dashboard: {message}", EveryOProfilerWarning, stacklevel=2)
            with self._lock:
                self._run = self._session = self._stream = self._report = None
            self.report = {}
            self.export_status = message


FALLBACK_NOTE = "sorted by total_ms:"
"""How the note of a report sorted by ``total_ms`` in place of a missing column begins."""


def _with_fallback_sort(build, run, options: dict):
    """``build(run, **options)``; a sort column the rows lack (flops without ``--record-ops``,
    the median while live) sorts by ``total_ms`` instead, and the report's notes say so. (A run
    without shapes grouped by shape needs no fallback: its report says shapes were not
    recorded.)"""
    sort_by = options.get("sort_by", "total_ms")
    try:
        return build(run, **options)
    except EveryOProfilerError:
        if sort_by == "total_ms":
            raise
    report = build(run, **{**options, "sort_by": "total_ms"})
    report.notes.append(
        f"{FALLBACK_NOTE} these rows have no {sort_by} column"
        + (" while the run records (it comes with the final table)" if report.live else "")
    )
    return report


def dashboard(**kwargs) -> Dashboard:
    """A dashboard with a run picker over every run in ``everyo.profiler.runs``.

    The picker lists new runs as they arrive; the latest run is shown first.
    """
    return Dashboard(None, picker=True, **kwargs)


def static_bundle(run, *, top=None, group_by="name", sort_by="total_ms", theme="light") -> dict:
    """``text/html`` and ``text/plain`` renderings of ``run`` that need no kernel."""
    if run is None:
        html = (
            '<div class="everyo-static">No run yet: profile a cell with '
            "<code>%%everyo_profile</code>.</div>"
        )
        return {"text/plain": "everyo dashboard: no runs yet", "text/html": html}
    from everyo_lab.views.report import build_report

    views = _views()
    report = build_report(run, group_by=group_by, sort_by=sort_by, top=top)
    return {
        "text/html": views.render_html(run, report=report, theme=theme),
        "text/plain": views.render_text(run, report=report),
    }
