"""``Profiler.events``, built once per state of the run.

Building a :class:`~everyo.profiler.batch.ProfileEvent` costs about 1.8 µs, so code that reads
``profiler.events`` in a loop paid that for every event on every read. The events are now kept
and rebuilt only when the run has changed (more events, or a new status: stopping can add device
times) or when a reader edited an event's metadata: each read must show the run's own metadata,
so the kept events' metadata dicts note an edit and the next read builds them again. Each read
returns a list of its own; edits nested inside a metadata value (a list in it) are not noticed.
"""

from __future__ import annotations

__all__ = ["EventsCache"]


class _Metadata(dict):
    """An event's metadata dict that marks its cache stale when it is edited."""

    __slots__ = ("_stale",)

    def __init__(self, values: dict, stale: list) -> None:
        super().__init__(values)
        self._stale = stale

    def _edited(self) -> None:
        self._stale[0] = True

    def __reduce__(self):  # pickles and copies as the plain dict it is to its readers
        return dict, (dict(self),)


def _editing(name: str):
    method = getattr(dict, name)

    def edit(self, *args, **kwargs):
        self._stale[0] = True
        return method(self, *args, **kwargs)

    edit.__name__ = name
    return edit


for _name in ("__setitem__", "__delitem__", "__ior__", "clear", "pop", "popitem", "setdefault",
              "update"):  # fmt: skip
    setattr(_Metadata, _name, _editing(_name))


class EventsCache:
    """The events of one profiler's run, kept between reads."""

    __slots__ = ("_run", "_key", "_events", "_stale")

    def __init__(self) -> None:
        self._run = self._key = None
        self._events: list = []
        self._stale = [False]

    def events(self, run) -> list:
        """Every event of ``run`` (row order), built again only when something changed."""
        key = (run.num_events, run.status)
        if run is not self._run or key != self._key or self._stale[0]:
            stale = [False]
            events = run.snapshot().events()
            for e in events:
                e.__dict__["metadata"] = _Metadata(e.metadata, stale)
            self._run, self._key, self._events, self._stale = run, key, events, stale
        return list(self._events)
