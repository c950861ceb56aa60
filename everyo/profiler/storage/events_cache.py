"""``Profiler.events``, built once per state of the run.

Building a :class:`~everyo.profiler.storage.batch.ProfileEvent` costs about 1.8 µs, so code that
reads
``profiler.events`` in a loop paid that for every event on every read. The events are now kept
and rebuilt only when the run has changed (more events, or a new status: stopping can add device
times) or when a reader edited an event's metadata: each read must show the run's own metadata,
so the kept events' metadata dicts note an edit and the next read builds them again. Each read
returns a list of its own; edits nested inside a metadata value (a list in it) are not noticed.
"""

from __future__ import annotations

import gc

__all__ = ["EventsCache"]


class _Metadata(dict):
    """An event's metadata dict that marks its cache stale when it is edited; each build has a
    subclass of its own whose class attribute ``stale`` is that build's flag (a plain
    ``dict(...)`` call per event then: no Python ``__init__``)."""

    __slots__ = ()
    stale: list = [False]

    def __reduce__(self):  # pickles and copies as the plain dict it is to its readers
        return dict, (dict(self),)


def _editing(name: str):
    method = getattr(dict, name)

    def edit(self, *args, **kwargs):
        self.stale[0] = True
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
            tracked = type("_Metadata", (_Metadata,), {"__slots__": (), "stale": stale})
            events = run.snapshot().events()
            paused = gc.isenabled()
            gc.disable()  # 10^5 new dicts would start collections that find nothing to free
            try:
                for e in events:
                    e.__dict__["metadata"] = tracked(e.metadata)
            finally:
                if paused:
                    gc.enable()
            self._run, self._key, self._events, self._stale = run, key, events, stale
        return list(self._events)
