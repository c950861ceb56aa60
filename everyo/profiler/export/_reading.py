"""What the readers of every format share: interning, checks of values, nesting, the Run."""

from __future__ import annotations

import math

import numpy as np

from everyo import _compiled
from everyo.profiler.export._columns import BLOCK, floats_to_int64
from everyo.profiler.storage.run import Run
from everyo.profiler.storage.store import EventStore

LOOPS = _compiled.load("everyo.profiler.storage._cbatch")  # the compiled batch loops, or None


class Malformed(Exception):
    """A file's content is not what its format says; ``read_run`` adds the path."""


def number(event: dict, field: str, where: str, *, default=None, minimum=None) -> float:
    """``event[field]`` as a finite number, or :class:`Malformed` naming the event and field."""
    value = event.get(field, default)
    if value is None:
        raise Malformed(f"{where} has no {field!r}")
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (isinstance(value, float) and not math.isfinite(value))  # an int of any size is
    ):
        raise Malformed(f"{where} has {field}={shown(value)}: a number is expected")
    if minimum is not None and value < minimum:
        raise Malformed(f"{where} has {field}={shown(value)}: it cannot be below {minimum}")
    return value


def shown(value) -> str:
    """``repr(value)`` cut short; an int too long for ``repr`` (Python refuses over 4,300
    digits) by its size."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<an integer of about {int(value.bit_length() * 0.30103):,} digits>"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# times and durations stay below 2**62 ns (146 years), so a start plus a duration fits int64
LIMITS = {
    "start_ns": (-(2**62), 2**62),
    "step_ns": (-(2**62), 2**62),
    "duration_ns": (0, 2**62),
    "dur_ns": (0, 2**62),
    "depth": (0, 2**15 - 1),
    "flops": (-1, 2**63 - 1),
    "bytes": (-1, 2**63 - 1),
    "mem_bytes": (-1, 2**63 - 1),
    "device_ns": (-1, 2**62),
}


def int64_column(values: list, field: str, where, *, in_place: bool = False) -> np.ndarray:
    """``values`` (``field`` of each event) as int64, checked against ``LIMITS[field]`` at NumPy
    speed; the first value that is no number, not finite or out of range is :class:`Malformed`
    (``where(i)`` names its event). Floats are rounded to whole numbers; ``in_place``: a float64
    array's own memory becomes the int64 column (no second copy of it at the peak)."""
    lo, hi = LIMITS[field]
    try:  # (an array as it is: a copy of a million events is 8 MB more at the peak)
        arr = np.asarray(values) if len(values) else np.zeros(0, np.int64)
    except (ValueError, TypeError, OverflowError):  # lists among the numbers: named below
        arr = np.zeros((0, 0))
    if arr.dtype.kind in "iu" and arr.ndim == 1:
        if not len(arr) or (arr.min() >= lo and arr.max() <= hi):
            return arr.astype(np.int64)
    elif arr.dtype.kind == "f" and arr.ndim == 1:
        with np.errstate(invalid="ignore"):
            if np.isfinite(arr).all() and arr.min() >= lo and arr.max() <= hi:
                if (
                    in_place
                    and arr.dtype == np.float64
                    and arr.flags.writeable
                    and arr.flags.c_contiguous
                ):
                    return floats_to_int64(np.round(arr, out=arr))
                return np.round(arr).astype(np.int64)
    for i, value in enumerate(values):  # slow path: name the offender
        number({field: value}, field, where(i))
        if not lo <= value <= hi:
            raise Malformed(
                f"{where(i)} has {field}={shown(value)}: a whole number from {lo} to {hi} is "
                "expected"
            )
    raise Malformed(f"the {field!r} values do not form a column of numbers")


class Builder:
    """Collects rows of a loaded file and interns keys, shapes and threads."""

    def __init__(self, threads=()):
        self.keys: dict[tuple, int] = {}
        self.shapes: dict[str, int] = {}
        self.threads = [(int(t), str(n)) for t, n in threads]
        self._index_of = {t: i for i, (t, _) in enumerate(self.threads)}  # thread id -> index

    def key(self, kind, name, path) -> int:
        return self.keys.setdefault((str(kind), str(name), str(path)), len(self.keys))

    def shape(self, text) -> int:
        return -1 if text is None else self.shapes.setdefault(str(text), len(self.shapes))

    def thread_index(self, ident, name: str | None = None) -> int:
        """The thread index (row of the thread table) of thread id ``ident``."""
        ident = int(ident)
        if ident not in self._index_of:
            self._index_of[ident] = len(self.threads)
            self.threads.append((ident, name or f"thread {ident}"))
        return self._index_of[ident]

    def store(self, cols: dict, metadata: dict) -> EventStore:
        """The store of the reader's own ``cols`` (given to it, not copied, where they can be)."""
        thread = cols.get("thread")
        if thread is not None and len(self.threads) <= 2**15:
            cols["thread"] = thread.astype(np.int16, copy=False)  # (the store's own type)
        return EventStore.from_columns(
            cols, list(self.keys), list(self.shapes), self.threads, metadata, adopt=True
        )


def interned(raws: list, intern, dtype) -> np.ndarray:
    """``intern(raw)`` of each raw value, one call per distinct value."""
    try:
        memo = dict.fromkeys(raws)
    except TypeError:  # a list or dict among the values: one call each
        return np.array([intern(raw) for raw in raws], dtype)
    for raw in memo:
        memo[raw] = intern(raw)
    return np.array(list(map(memo.__getitem__, raws)), dtype)


def nesting(tid: np.ndarray, start: np.ndarray, end: np.ndarray):
    """Depth and parent row of each interval, from containment on its thread (the compiled
    loop where it was built; this loop is its specification)."""
    n = len(start)
    longest_first = end - start
    np.negative(longest_first, out=longest_first)
    last_first = -np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    order = np.lexsort((last_first, longest_first, start, tid))
    del longest_first, last_first
    if LOOPS is not None and n:
        depth, parent = np.empty(n, np.int64), np.empty(n, np.int64)
        try:
            LOOPS.nest(*map(np.ascontiguousarray, (tid, start, end)), order, depth, parent)
        except TypeError:  # not integer columns: the loop below
            pass
        else:
            if depth.max() < 2**15 and n < 2**31:  # deeper: the loop below says what it says
                return depth.astype(np.int16), parent.astype(np.int32)
    depth = np.zeros(n, np.int16)
    parent = np.full(n, -1, np.int32)
    stack: list[int] = []
    last_tid = None
    for i in order.tolist():
        if tid[i] != last_tid:
            stack, last_tid = [], tid[i]
        while stack and not (start[stack[-1]] <= start[i] and end[i] <= end[stack[-1]]):
            stack.pop()
        if stack:
            parent[i], depth[i] = stack[-1], len(stack)
        stack.append(i)
    return depth, parent


# the latest start time a view can show as a date (datetime's year 9999)
LATEST_START_TIME = 253_402_300_799
STATUSES = ("running", "completed", "failed")


def checked_header(header) -> dict:
    """``header`` (a file's run header) with the fields views compute with checked:
    :class:`Malformed` names the first one that is not what the format says. A bad value would
    otherwise surface later, in every dashboard that lists the run."""
    if not isinstance(header, dict):
        raise Malformed(f"the run header is a {type(header).__name__}, not an object")
    where = "the run header"
    if header.get("start_time") is not None:
        number(header, "start_time", where, minimum=0)
        if header["start_time"] > LATEST_START_TIME:
            raise Malformed(
                f"{where} has start_time={shown(header['start_time'])}: Unix seconds up to "
                f"{LATEST_START_TIME} (the year 9999) are expected"
            )
    for field in ("wall_ns", "skipped_events"):
        if header.get(field) is not None:
            number(header, field, where, minimum=0)
            if header[field] >= 2**63:
                raise Malformed(f"{where} has {field}={shown(header[field])}: too large")
    if header.get("status", "completed") not in STATUSES:
        raise Malformed(
            f"{where} has status={shown(header.get('status'))}: one of {', '.join(STATUSES)} "
            "is expected"
        )
    steps = header.get("step_ns") or []
    if not isinstance(steps, list):
        raise Malformed(f"{where} has a 'step_ns' that is not a list")
    int64_column(steps, "step_ns", lambda i: f"{where} (step mark {i})")
    _check_numbers(header.get("options"), "options", OPTION_NUMBERS)
    _check_numbers(header.get("machine"), "machine", MACHINE_NUMBERS)
    return header


OPTION_NUMBERS = ("sample_ms", "warmup")
MACHINE_NUMBERS = (
    "others_cores",
    "own_cores",
    "usable_cores",
    "blas_threads",
    "openmp_threads",
    "involuntary_switches",
    "window_s",
    "threads_applied",
)
"""The header's numbers that views compute with (issue 44: ``"blas_threads": "many"`` or
``sample_ms: "x"`` loaded, then ``summarize()`` and ``hot_lines()`` raised bare errors)."""


def _check_numbers(part, name: str, fields: tuple) -> None:
    """Each of ``fields`` of the header's ``name`` object, where present and not null, is a
    number from 0 to 2**62 (a missing object or field is an older file's)."""
    if part is None:
        return
    if not isinstance(part, dict):
        raise Malformed(f"the run header's {name!r} is a {type(part).__name__}, not an object")
    for field in fields:
        if part.get(field) is not None:
            value = number(part, field, f"the run header's {name!r}", minimum=0)
            if value > 2**62:
                raise Malformed(f"the run header's {name!r} has {field}={shown(value)}: too large")


SUM_LIMIT = 2**62
"""What the events' durations may add up to, and an event's end (146 years of nanoseconds): the
totals and self times are int64 sums (issue 44: three events of 2^62 - 10 ns each gave negative
totals, and the compiled and NumPy aggregations disagreed)."""


def _check_sums(store: EventStore) -> int:
    """Check the durations' sum and the events' ends against :data:`SUM_LIMIT`; the events'
    span (the latest end, from 0 or the earliest start before it). Read a block of rows at a
    time: a copy of the whole two columns was a load's peak memory."""
    total, last, first = 0.0, -1, 0
    for lo in range(0, len(store), BLOCK):
        cols = store.read(lo, lo + BLOCK, columns=("start_ns", "dur_ns"))
        dur, start = cols["dur_ns"], cols["start_ns"]
        total += float(dur.sum(dtype=np.float64))
        if total > SUM_LIMIT:
            raise Malformed(
                f"the events' durations add up to {total:.3g} ns, more than {SUM_LIMIT} (146 "
                "years): no profile of a program holds that; the file was altered or is not a "
                "trace"
            )
        end = start.astype(np.float64) + dur
        if float(end.max()) > SUM_LIMIT:
            i = int(end.argmax())
            raise Malformed(
                f"event {lo + i} ends at {end[i]:.3g} ns, after {SUM_LIMIT} (146 years): the "
                "file was altered or is not a trace"
            )
        last = max(last, int((start + dur).max()))
        first = min(first, int(start.min()))
    return last - first


def run_from(header: dict, store: EventStore, counters: dict) -> Run:
    """A finished :class:`Run` holding ``store``, with the fields a file's header gives.

    Without a header (files of other tools, the events format) the wall time is the span of
    the events and the status ``"completed"``.
    """
    header = checked_header(header)
    span = _check_sums(store) if len(store) else 0
    run = Run(
        store,
        label=header.get("label"),
        options=header.get("options") or {},
        run_id=header.get("id"),
        start_time=header.get("start_time"),
        environment=header.get("environment") or {},
    )
    wall = header.get("wall_ns")
    if wall is None and len(store):
        wall = span
    run.finish(wall_ns=int(wall or 0))
    run.status = header.get("status", "completed")  # as recorded (a file may hold a failed run)
    run.error = header.get("error")
    run.skipped = int(header.get("skipped_events") or 0)
    run.memory = header.get("memory")
    run.machine = header.get("machine") if isinstance(header.get("machine"), dict) else None
    run.step_ns = [int(t) for t in header.get("step_ns") or []]
    run.processes = {int(t): (int(p), str(n)) for t, p, n in header.get("processes") or []}
    if header.get("process_id") is not None:
        run.process_id = int(header["process_id"])
    for name, (t, v) in counters.items():
        run.add_counter(name, t, v)
    return run
