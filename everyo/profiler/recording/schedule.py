"""Step-based recording windows: ``schedule(wait=, warmup=, active=, repeat=)``.

``Profiler(warmup=N)`` skips the first N *recorded events* (the guide's behaviour). A schedule is
the richer alternative that counts *steps*: call ``profiler.step()`` once per training iteration
and the profiler records only during the ``active`` steps of each cycle.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from everyo.errors import EveryOProfilerError


@dataclass(frozen=True)
class Schedule:
    """Cycles of ``wait`` idle steps, ``warmup`` steps run but discarded, ``active`` recorded steps.

    ``repeat=0`` repeats the cycle until the profiler stops.
    """

    wait: int = 0
    warmup: int = 0
    active: int = 1
    repeat: int = 0

    def __post_init__(self):
        for field in ("wait", "warmup", "active", "repeat"):
            value = getattr(self, field)
            # NumPy's integers too (np.int64(2), a count read from an array), held as ints
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
                raise EveryOProfilerError(f"schedule({field}={value!r}): use a whole number >= 0")
            object.__setattr__(self, field, int(value))
        if self.active == 0:
            raise EveryOProfilerError("schedule(active=0) would record nothing: use active >= 1")

    def action(self, step: int) -> str:
        """The phase of ``step`` (0-based): "wait", "warmup", "active" or "done"."""
        cycle = self.wait + self.warmup + self.active
        if self.repeat and step >= cycle * self.repeat:
            return "done"
        pos = step % cycle
        if pos < self.wait:
            return "wait"
        if pos < self.wait + self.warmup:
            return "warmup"
        return "active"


def schedule(*, wait: int = 0, warmup: int = 0, active: int = 1, repeat: int = 0) -> Schedule:
    """Build a step schedule for ``Profiler(schedule=...)``.

    Examples
    --------
    >>> from everyo.profiler import schedule
    >>> s = schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [s.action(i) for i in range(5)]
    ['wait', 'warmup', 'active', 'active', 'done']
    """
    return Schedule(wait=wait, warmup=warmup, active=active, repeat=repeat)
