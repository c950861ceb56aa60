"""``WhyLink``: the dashboard's "why" panel, from the browser's selection to the panel's data.

The browser sets the ``why_target`` trait when a table row or a flame-chart bar is clicked (and
``why_all_frames`` from the panel's fold button); the dashboard asks this object for the panel
and syncs it as the ``why`` trait. While the run records, a :class:`LiveWhy` keeps the
selection's sums (and one each of the live table's first rows'), fed every refresh what the
dashboard's :class:`~everyo_lab.views.live_session.LiveSession` read (:meth:`WhyLink.feed`), and
the panel is rebuilt at most every :data:`LIVE_EVERY_S` (as the live table); once the run has
ended, the panel is :func:`everyo.profiler.hot_lines` of the whole run.
"""

from __future__ import annotations

import time

import numpy as np

from everyo.errors import EveryOError

LIVE_EVERY_S = 1.0
"""A live panel is rebuilt at most this often (the live table's pace)."""


LIVE_ROWS = 3
"""While the run records, the panels of the table's first rows kept up to date (a selection
made then reaches the kernel only when the cell ends: the browser shows these)."""
LIVE_OTHER = (
    "while the cell runs, the hot lines of the table's first {n} rows are kept up to date; "
    "this one's come when the cell ends"
)


class WhyLink:
    def __init__(self, clock=time.monotonic):
        self.session = None  # the LiveSession whose reads feed the live panels
        self.sel = None
        self.live = None  # LiveWhy of the selection while the run records
        self._rows: dict[tuple, object] = {}  # LiveWhy of each of the table's first rows
        self._clock = clock
        self._at = -float("inf")
        self._rows_at = -float("inf")

    def clear(self) -> None:
        self.sel = self.live = None
        self._rows = {}

    def follow(self, session) -> None:
        """Panels of ``session``'s run from now on (``None``: no run)."""
        self.clear()
        self.session = session

    def feed(self, batch, samples) -> None:
        """What the session's read found (its batch and :attr:`new_samples`), to every live
        panel's sums: each read, once."""
        for tracker in (self.live, *self._rows.values()):
            if tracker is not None:
                tracker.feed(batch, samples)

    def live_rows(self, run, report, hide, *, force: bool = False) -> dict | None:
        """The panels of the live table's first :data:`LIVE_ROWS` rows, ``{"panels": [{"key",
        "panel"}], "other": text}`` (without samples: none, and how to get them; ``{}`` once
        the run has ended); ``None``
        when not due yet (at most every :data:`LIVE_EVERY_S`)."""
        from everyo_lab.views.why import why_panel as why
        from everyo_lab.views.why.why_live import LiveWhy

        if run is None or report is None or getattr(run, "status", "completed") != "running":
            self._rows = {}
            return {}
        if _unsampled(run):  # said while live too, not an empty box
            return {"panels": [], "other": why.SAMPLE_HINT.format(what="this row")}
        now = self._clock()
        if not force and now - self._rows_at < LIVE_EVERY_S:
            return None
        self._rows_at = now
        kept, out = {}, []
        for row in report.rows[:LIVE_ROWS]:
            sel = why.row_selection(row, report.group_by)
            key = (sel.group_by, sel.key, sel.shape)
            tracker = self._rows.get(key) or LiveWhy.following(self.session, sel)
            kept[key] = tracker
            panel = why.panel(tracker.hot_lines(hide), sel, live=True)
            out.append({"key": why.row_key(sel), "panel": panel})
        self._rows = kept
        return {"panels": out, "other": LIVE_OTHER.format(n=LIVE_ROWS)}

    def auto_target(self, run) -> dict:
        """The ``why_target`` the panel opens on by itself: the sampled call tree of a run that
        recorded no events but holds samples (nothing else to select; while it records, as
        soon as it holds samples and no events), else ``{}``."""
        from everyo.profiler.sampling.sampled_lines import outside_events
        from everyo_lab.views.why import why_panel as why

        if run is None or self.sel is not None or getattr(run, "num_events", 1):
            return {}
        if getattr(run, "status", "completed") == "running":
            samples = getattr(run, "samples", None)
            if samples is None or not len(samples):
                return {}
        elif outside_events(run) is None:
            return {}
        return why.outside_target(why.outside_selection(run))

    def outside_link(self, run) -> dict:
        """The dashboard's link to the panel of the time outside every event, for a finished
        run with events whose samples put
        :data:`~everyo.profiler.sampling.sampled_lines.OUTSIDE_MIN_SHARE`
        or more of its time there, or to the run's sampled call tree for a run without events
        (which opens by itself: the link opens it again once closed): ``{"text", "title",
        "target"}`` (``target``: the ``why_target`` it selects), else ``{}``."""
        from everyo.profiler.sampling.sampled_lines import outside_events, outside_share
        from everyo_lab.views.why import why_panel as why

        if run is None or _unsampled(run):
            return {}
        hot = outside_events(run, top=1)
        if hot is None:
            return {}
        sel = why.outside_selection(run)
        if not getattr(run, "num_events", 0):
            text = "where the time went: the run's sampled call tree"
            title = "open the panel of every sample, and its call tree in the flame chart"
        else:
            share = why.share_text(outside_share(run, hot))
            text = f"{share} of the sampled time is outside every event: where it went"
            title = "open the sampled call tree of the time no recorded event holds"
        return {"text": text, "title": title, "target": why.outside_target(sel)}

    def select(self, run, target: dict, thread_ids: dict, hide) -> dict:
        """The panel of a new selection (``{}`` for none)."""
        from everyo_lab.views.why import why_panel as why

        self.sel = self.live = None  # (the first rows' panels stay: they do not depend on it)
        if not target or run is None:
            return {}
        try:
            self.sel = why.select(run, target, thread_ids)
        except EveryOError as exc:
            return why.error_panel(str(exc))
        return self.panel(run, hide, force=True)

    def panel(self, run, hide, *, force: bool = False) -> dict | None:
        """The panel now; ``None`` when a live one is not due yet (unless ``force``)."""
        from everyo_lab.views.why import why_panel as why

        sel = self.sel
        if sel is None or run is None:
            return {}
        running = getattr(run, "status", "completed") == "running"
        if sel.is_outside:  # (events may have come since it was selected: its label says)
            sel = self.sel = why.outside_selection(run)
        # the magic's own samples (dropped at the cell's end if it records events) are all a
        # run without events has: its call tree shows from them while the cell runs
        if getattr(run, "samples", None) is None or (_unsampled(run) and not sel.is_outside):
            return why.unsampled_panel(sel)
        if not running:
            self.live = None
            return _exact(run, sel, hide)
        now = self._clock()
        if not force and now - self._at < LIVE_EVERY_S:
            return None
        self._at = now
        if sel.is_outside:  # the exact panel of the samples so far, at the live table's pace
            self.live = None
            return _exact(run, sel, hide, live=True)
        if self.live is None:
            from everyo_lab.views.why.why_live import LiveWhy

            self.live = LiveWhy.following(self.session, sel)
        hot = self.live.hot_lines(hide)
        return why.panel(hot, sel, live=True, expand=self.live.expansion(hide))


def _unsampled(run) -> bool:
    """No samples, or only those the magic takes by itself (``sample_auto``: dropped when the
    cell ends if it recorded events, so its live panels would not last)."""
    return getattr(run, "samples", None) is None or bool(run.options.get("sample_auto"))


def _exact(run, sel, hide, *, live: bool = False) -> dict:
    from everyo_lab.views.why import why_panel as why

    try:
        hot = why.exact_hot_lines(run, sel, hide)
    except EveryOError as exc:
        return why.error_panel(str(exc))
    expand = None
    if sel.is_outside and not getattr(run, "num_events", 1) and hot.tree is not None:
        # no events to draw: the flame chart draws the run's sampled call tree instead
        expand = why.tree_bars(hot.tree, run.wall_ns)
    elif sel.is_event:
        cols = run.samples.read()
        t = cols["t_ns"]
        mine = np.flatnonzero((cols["tid"] == sel.tid) & (t >= sel.start_ns) & (t < sel.end_ns))
        mine = mine[np.argsort(t[mine], kind="stable")]
        wall = cols["wall_ns"][mine]
        expand = why.frame_bars(run.samples, sel, t[mine], cols["stack"][mine], wall, hide)
    return why.panel(hot, sel, live=live, expand=expand)
