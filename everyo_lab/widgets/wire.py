"""What the dashboard sends to the browser: events and bars as compact binary columns.

The dashboard widget (``js/src/dashboard_widget.js``) keeps no event data in widget state (it
would be saved in the notebook). The kernel sends it as custom comm messages, each one JSON
header plus binary buffers, and only what is new:

``{"type": "events", ...}`` — raw events to *append* to what the browser holds.
    Header: ``run`` (run id), ``reset`` (true: drop what you hold for this run first),
    ``n`` (rows), ``t0_ms`` (float) and ``tick_ns`` (int): a row's start is
    ``t0_ms + start[i] * tick_ns / 1e6`` ms from the run start and its duration
    ``dur[i] * tick_ns / 1e6`` ms; ``key0`` and ``keys``: entries ``[kind, name, path, colour]``
    of the run's interned keys ``key0``, ``key0 + 1``, ... not sent before (append them);
    ``threads``: ``{thread index (str): thread name}`` for threads not named before;
    ``steps``: how many step ends the last buffer holds and ``step0`` where they go: the
    browser keeps its first ``step0`` step ends and appends these (0: they replace all it
    held; a live run sends only the new ones); ``complete``: true when the browser
    now holds every event of the run (the run has ended and nothing was left out).
    Buffers: ``start`` uint32, ``dur`` uint32, ``depth`` uint16, ``thread`` uint16 (small
    thread index, in order of first appearance), ``key`` uint16 or uint32 (header
    ``key_bytes``: 2 or 4), ``self`` uint32 (the event's self time in ticks, the kernel's:
    :func:`everyo.profiler.analysis.aggregates.children_ns`; the browser shows it, never works it
    out), then ``step_ends`` float64 (ms from the run start, new step ends in time order).

``{"type": "bars", ...}`` — a *replacement* set of bars, used when the run has too many events
    to send them all (more than :data:`RAW_LIMIT`): level-of-detail bars computed in the kernel.
    Header as for events plus ``window``: ``null`` (the bars cover the whole run: they replace
    the browser's whole-run set) or ``[x0_ms, x1_ms]`` (an answer to a ``detail`` request: bars
    at full detail for that window), ``px_ms`` (the pixel width they were merged at).
    Buffers: ``start``, ``dur``, ``depth``, ``thread``, ``key`` as above (a key of all ones,
    ``0xFFFF`` / ``0xFFFFFFFF``, means "merged events of several colours"), ``count`` uint32
    (events in the bar; 1: a single event), ``dom`` (same type as ``key``: the key whose class
    has the most time in the bar; all ones when unknown), then ``step_ends`` float64 (placed
    at ``step0``).

``{"type": "plotly", "version": ...}`` with one buffer: ``plotly.min.js`` from the plotly
    package, sent once per page load, when the browser asks for it.

``{"type": "download", "filename": ...}`` with one buffer: the Chrome trace to save.

The browser sends: ``{"type": "plotly"}`` (load the library), ``{"type": "resend"}`` (a new view
holds nothing: send everything again), ``{"type": "detail", "x0": ms, "x1": ms, "width": px}``
(bars for a zoom window the whole-run bars are too coarse for) and ``{"type": "export"}``.
"""

from __future__ import annotations

import numpy as np

from everyo_lab.views.colors import color_for, color_key
from everyo_lab.views.flame.lod import READABLE_LIMIT

__all__ = ["RAW_LIMIT", "MIXED", "Encoded", "encode_events", "encode_bars", "key_entries"]

RAW_LIMIT = READABLE_LIMIT
"""Most raw events a run streams to the browser (18 bytes each: 2.2 MB); beyond, bars."""

MIXED = -1
"""Key of a bar merging events of several colours (sent as all ones)."""

_U32 = (1 << 32) - 1


class Encoded:
    """One message: a JSON-ready ``header`` and its ``buffers`` (bytes)."""

    __slots__ = ("header", "buffers")

    def __init__(self, header: dict, buffers: list):
        self.header = header
        self.buffers = buffers

    @property
    def nbytes(self) -> int:
        return sum(len(b) for b in self.buffers)


def key_entries(keys, first: int = 0) -> list[list[str]]:
    """``[kind, name, path, colour]`` for the interned keys from index ``first`` on."""
    return [
        [str(kind), str(name), str(path), color_for(color_key(kind, name))]
        for kind, name, path, *_ in list(keys)[first:]
    ]


def _ticks(start_ns: np.ndarray, end_ns: np.ndarray) -> tuple[int, int]:
    """The origin (ns) and tick (ns) that fit every start and end of a message in uint32."""
    if len(start_ns) == 0:
        return 0, 1
    t0 = int(start_ns.min())
    span = int(end_ns.max()) - t0
    return t0, max(1, -(-span // _U32))


def _columns(start_ns, dur_ns, depth, thread, key, n_keys: int) -> tuple[dict, list]:
    start_ns = np.asarray(start_ns, np.int64)
    dur_ns = np.asarray(dur_ns, np.int64)
    t0, tick = _ticks(start_ns, start_ns + dur_ns)
    key = np.asarray(key, np.int64)
    key_bytes = 2 if n_keys < 0xFFFF else 4
    kdt = np.uint16 if key_bytes == 2 else np.uint32
    kcol = np.where(key < 0, np.iinfo(kdt).max, key).astype(kdt)
    # starts round down and ends up, so a bar never shrinks below what it covers
    s = (start_ns - t0) // tick
    e = -(-(start_ns + dur_ns - t0) // tick)
    header = {"n": int(len(start_ns)), "t0_ms": t0 / 1e6, "tick_ns": int(tick)}
    header["key_bytes"] = key_bytes
    buffers = [
        s.astype(np.uint32).tobytes(),
        (e - s).astype(np.uint32).tobytes(),
        np.asarray(depth).astype(np.uint16).tobytes(),
        np.asarray(thread).astype(np.uint16).tobytes(),
        kcol.tobytes(),
    ]
    return header, buffers


def encode_events(
    run_id: str,
    batch,
    thread_index: np.ndarray,
    *,
    reset: bool,
    key0: int,
    threads: dict,
    step_ends_ms=(),
    step0: int = 0,
    complete: bool = False,
    self_ns=None,
) -> Encoded:
    """Raw events of ``batch`` (an ``EventBatch``) as an ``events`` message.

    ``thread_index`` is each row's small thread index; ``key0`` the first key the browser
    does not know yet; ``threads`` the names of threads it has not seen; ``self_ns`` each row's
    self time (ns; default: ``batch.self_ns``, exact when the batch holds every child of its
    rows).
    """
    keys = list(batch.keys)
    header, buffers = _columns(
        batch.start_ns, batch.dur_ns, batch.depth, thread_index, batch.key, len(keys)
    )
    own = np.asarray(batch.self_ns if self_ns is None else self_ns, np.int64)
    tick = header["tick_ns"]
    buffers.append(np.minimum((own + tick // 2) // tick, _U32).astype(np.uint32).tobytes())
    steps = np.asarray(step_ends_ms, np.float64)
    header.update(
        type="events",
        run=run_id,
        reset=bool(reset),
        key0=int(key0),
        keys=key_entries(keys, key0),
        threads={str(k): str(v) for k, v in threads.items()},
        steps=int(len(steps)),
        step0=int(step0),
        complete=bool(complete),
    )
    buffers.append(steps.tobytes())
    return Encoded(header, buffers)


def encode_bars(
    run_id: str,
    bars,
    depth: np.ndarray,
    thread: np.ndarray,
    key: np.ndarray,
    keys,
    *,
    dom: np.ndarray | None = None,
    window=None,
    threads: dict,
    step_ends_ms=(),
    step0: int = 0,
) -> Encoded:
    """Level-of-detail ``bars`` (:class:`everyo_lab.views.flame.lod.Bars`) as a ``bars`` message.

    ``depth``, ``thread`` and ``key`` are per bar (``key`` :data:`MIXED` for a bar of several
    colours, ``dom`` then the key with the most time, :data:`MIXED` when unknown); ``keys`` is
    the run's whole key table (sent whole: a replacement set).
    """
    keys = list(keys)
    header, buffers = _columns(bars.start, bars.end - bars.start, depth, thread, key, len(keys))
    steps = np.asarray(step_ends_ms, np.float64)
    header.update(
        type="bars",
        run=run_id,
        reset=True,
        key0=0,
        keys=key_entries(keys),
        threads={str(k): str(v) for k, v in threads.items()},
        window=None if window is None else [float(window[0]), float(window[1])],
        px_ms=float(bars.pixel_ns) / 1e6,
        steps=int(len(steps)),
        step0=int(step0),
        complete=False,
    )
    buffers.append(np.asarray(bars.count).astype(np.uint32).tobytes())
    dom = np.asarray(key if dom is None else dom, np.int64)
    kdt = np.uint16 if header["key_bytes"] == 2 else np.uint32
    buffers.append(np.where(dom < 0, np.iinfo(kdt).max, dom).astype(kdt).tobytes())
    buffers.append(steps.tobytes())
    return Encoded(header, buffers)
