"""Reading everyo's own line layout without the json module (issue 44, case 10: loading a
700,000-event export ran at 55k-145k events/s; ``json.loads`` of the lines alone, building a
dict per event, capped it near 150k/s).

The compiled ``scan_lines`` (``_cbatch.c``) splits a block of lines, each one JSON object with
the keys a format writes, into columns: integer fields straight into int64, numbers into the
float64 the json module gives, the members of one nested object (a Chrome event's ``args``) as
fields of their own, the others (names, shapes, metadata) as the raw text of each value, of
which only the distinct ones are decoded (by ``json.loads``). Anything else, a block it refuses
(another layout, whitespace, an unknown or repeated key, a number out of range, a name that is
no string) is ``None`` here, and the reader parses that block with the json module as before:
that path raises every error a file deserves, so what is refused, and how, is unchanged. A
Chrome trace also holds lines of other shapes (names, counters, samples): those alone are read
by the json module, as the json path would read them in the block. Where the extension is not
in use (:mod:`everyo._compiled`) every block takes the json path.
"""

from __future__ import annotations

import json

import numpy as np

from everyo import _compiled
from everyo.profiler.export._reading import LIMITS

SCAN = getattr(_compiled.load("everyo.profiler.storage._cbatch"), "scan_lines", None)

EVENTS_INTS = ("duration_ns", "start_ns", "process_id", "thread_id", "depth", "parent", "row")
EVENTS_RAW = ("name", "metadata", "kind", "path")
EVENTS_OPTIONAL = ("flops", "mem_bytes", "device_ns")
RAW_INTS = ("row", "start_ns", "dur_ns", "depth", "parent", "tid")
RAW_RAW = ("name", "kind", "path")
RAW_OPTIONAL = ("flops", "bytes", "mem_bytes", "device_ns")


class _Refused(Exception):
    """The block is not exactly in the layout: the json module reads it."""


RAW, INT, FLOAT, NULL, OBJECT = 0, 1, 2, 4, 8  # how scan_lines reads a key's value


def _scan(part, fields: dict, lenient: bool = False):
    """``({field: (values, present)}, starts, fits)`` of a block, or ``None``: values an int64
    or float64 array for numbers (``fields[name]`` ``INT`` or ``FLOAT``), a list of raw texts
    (``None`` where absent) for ``RAW``, ``None`` for an ``OBJECT``; present a bool array (uint8,
    2 for null, where ``NULL`` allows it); starts the offset of each line in ``part.text`` and
    of its end; fits which lines are in the layout (all of them unless ``lenient``)."""
    if SCAN is None or not hasattr(part, "text"):
        return None
    keys = tuple(fields)
    got = SCAN(part.text, tuple(k.encode() for k in keys), bytes(fields.values()), part.last,
               lenient)  # fmt: skip
    if got is None:
        return None
    columns, starts, fits = got
    out = {}
    for name, (values, present) in zip(keys, columns):
        kind = fields[name] & ~NULL
        if kind in (INT, FLOAT):
            values = np.frombuffer(values, np.int64 if kind == INT else np.float64)
        present = np.frombuffer(present, np.uint8)
        out[name] = (values, present if fields[name] & NULL else present.view(np.bool_))
    return out, np.frombuffer(starts, np.int64), np.frombuffer(fits, np.bool_)


def _fields(ints: tuple, raws: tuple) -> dict:
    return {**dict.fromkeys(ints, INT), **dict.fromkeys(raws, RAW)}


def _decoded(raws, kinds) -> dict:
    """Each distinct raw text of ``raws`` (``None`` skipped) decoded; :class:`_Refused` when one
    is no valid JSON or not of one of ``kinds``."""
    memo = dict.fromkeys(raws)
    memo.pop(None, None)
    for raw in memo:
        try:
            value = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            raise _Refused() from None
        if not isinstance(value, kinds):
            raise _Refused()
        memo[raw] = value
    return memo


def _in_range(values: np.ndarray, field: str) -> np.ndarray:
    lo, hi = LIMITS[field]
    if len(values) and (values.min() < lo or values.max() > hi):
        raise _Refused()
    return values


def _required(cols: dict, names) -> None:
    for name in names:
        if not cols[name][1].all():
            raise _Refused()


def _key_texts(cols: dict, names=("kind", "name", "path"), texts=None) -> tuple[list, list]:
    """The (kind, name, path) of each event as raw texts, and the decoded ones by raw text;
    ``texts`` may give some raw texts already (``None``: a missing path)."""
    raws = [cols[name][0] for name in names]
    texts = dict(texts or {})
    for column in raws:
        texts.update(_decoded(column, str))
    keys = list(zip(*raws))
    memo = dict.fromkeys(keys)
    for key in memo:
        memo[key] = tuple(map(texts.__getitem__, key))
    return keys, memo


class Chunk:
    """The columns of one block, decoded and checked as the json path would."""

    def __init__(self, n: int):
        self.n = n
        self.ints: dict[str, np.ndarray] = {}
        self.optional: dict[str, np.ndarray | None] = {}
        self.keys: list = []  # each event's (kind, name, path) raw texts
        self.key_of: dict = {}  # raw texts -> (kind, name, path)
        self.shapes: list = []  # each event's shape text or None
        self.shapes_present = False
        self.meta: dict[int, object] = {}  # offset in the block -> metadata kept


def events_chunk(part) -> Chunk | None:
    """A block of the events format (``export_json``'s default) as everyo writes it, or None."""
    got = _scan(part, _fields(EVENTS_INTS + EVENTS_OPTIONAL, EVENTS_RAW + ("shapes",)))
    if got is None:
        return None
    cols = got[0]
    try:
        _required(cols, EVENTS_INTS + EVENTS_RAW)
        c = Chunk(len(cols["row"][0]))
        for name, field in (("start_ns", "start_ns"), ("duration_ns", "duration_ns")):
            c.ints[name] = _in_range(cols[name][0], field)
        c.ints["thread_id"] = cols["thread_id"][0]
        c.ints["process_id"] = cols["process_id"][0]
        c.ints["depth"] = _in_range(cols["depth"][0], "depth")
        for name in EVENTS_OPTIONAL:
            values, present = cols[name]
            c.optional[name] = (
                _in_range(np.where(present, values, -1), name) if present.any() else None
            )
        c.keys, c.key_of = _key_texts(cols)
        shape_raws, shape_present = cols["shapes"]
        shape_text = _decoded(shape_raws, str)
        c.shapes = [None if r is None else shape_text[r] or None for r in shape_raws]
        c.shapes_present = bool(shape_present.any())
        c.meta = _events_metadata(cols["metadata"][0], shape_raws, shape_text)
    except _Refused:
        return None
    return c


def _events_metadata(meta_raws: list, shape_raws: list, shape_text: dict) -> dict:
    """The metadata each event keeps: its object less ``input_shapes`` where that is what its
    shapes give (as ``reader._from_events``); the decision made once per distinct pair."""
    from everyo.profiler.storage.batch import input_shapes

    parsed = _decoded(meta_raws, dict)
    kept = {}
    decided: dict = {}
    for i, pair in enumerate(zip(meta_raws, shape_raws)):
        keep = decided.get(pair)
        if keep is None:
            m = parsed[pair[0]]
            if m and pair[1] is not None:
                derived = input_shapes(shape_text[pair[1]] or "") or []
                if m.get("input_shapes") == derived:
                    m = {k: v for k, v in m.items() if k != "input_shapes"}
            keep = decided[pair] = bool(m)
        if keep:  # a fresh object for each event, as the json path gives
            m = json.loads(pair[0].decode("utf-8"))
            if pair[1] is not None:
                derived = input_shapes(shape_text[pair[1]] or "") or []
                if m.get("input_shapes") == derived:
                    m = {k: v for k, v in m.items() if k != "input_shapes"}
            kept[i] = dict(m)
    return kept


def raw_chunk(part) -> Chunk | None:
    """A block of everyo's raw format as everyo writes it, or None."""
    got = _scan(part, _fields(RAW_INTS + RAW_OPTIONAL, RAW_RAW + ("shapes", "metadata")))
    if got is None:
        return None
    cols = got[0]
    try:
        _required(cols, RAW_INTS + RAW_RAW)
        c = Chunk(len(cols["row"][0]))
        c.ints["start_ns"] = _in_range(cols["start_ns"][0], "start_ns")
        c.ints["dur_ns"] = _in_range(cols["dur_ns"][0], "dur_ns")
        c.ints["tid"] = cols["tid"][0]
        c.ints["depth"] = _in_range(cols["depth"][0], "depth")
        for name in RAW_OPTIONAL:  # the first event tells whether the block has the column
            values, present = cols[name]
            c.optional[name] = (
                _in_range(np.where(present, values, -1), name) if present[:1].any() else None
            )
        c.keys, c.key_of = _key_texts(cols)
        shape_raws, shape_present = cols["shapes"]
        shape_text = _decoded(shape_raws, (str, type(None)))
        c.shapes = [None if r is None else shape_text[r] for r in shape_raws]
        c.shapes_present = bool(shape_present[:1].any())
        meta_raws, meta_present = cols["metadata"]
        for i in np.flatnonzero(meta_present).tolist():
            try:
                m = json.loads(meta_raws[i].decode("utf-8"))
            except (ValueError, RecursionError):
                raise _Refused() from None
            if m:
                c.meta[i] = m
    except _Refused:
        return None
    return c


# everyo's Chrome trace events (``chrome.format_chunk``, ``format_rows``); NULL where it writes
# null for an unknown number
CHROME = {
    "ph": RAW,
    "cat": RAW,
    "name": RAW,
    "pid": INT,
    "tid": INT,
    "ts": FLOAT,
    "dur": FLOAT,
    "args": OBJECT,
    "args.flops": INT | NULL,
    "args.bytes": INT | NULL,
    "args.mem_bytes": INT | NULL,
    "args.device_us": FLOAT | NULL,
    "args.path": RAW,
    "args.shapes": RAW,
    "args.metadata": RAW,
}
CHROME_NUMBERS = ("flops", "bytes", "mem_bytes", "device_us")
_TIMED = ("X", "i", "I")  # the phases the json path makes regions of


class ChromeChunk:
    """A block of a Chrome trace written by everyo: its complete (``"X"``) events as columns,
    in file order, decoded and checked as the json path would; its other lines (names,
    counters, samples) parsed by the json module, as ``(line, event)``."""

    def __init__(self, lines: int):
        self.lines = lines
        self.rows = np.zeros(0, np.int64)  # the line of each X event in the block
        self.ts = self.dur = np.zeros(0)  # µs, as the json module reads them
        self.pairs: list = []  # each X event's (pid, tid)
        self.keys: list = []  # each X event's (cat, name, path) raw texts
        self.key_of: dict = {}  # raw texts -> (cat, name, path)
        self.shapes: list = []  # each X event's shape text or None
        self.shapes_present = False
        self.numbers: dict[str, tuple] = {}  # arg -> (values, present: 0 no, 1 yes, 2 null)
        self.meta: dict[int, dict] = {}  # offset among the X events -> metadata
        self.others: list[tuple[int, dict]] = []


def chrome_chunk(part) -> ChromeChunk | None:
    """A block of a Chrome trace as everyo writes it, or None. Lines in another layout are
    read one by one by the json module (everyo's own name and sample events among them); a
    block with a timed event among those, or a line the json path would read otherwise, is
    None."""
    got = _scan(part, CHROME, lenient=True)
    if got is None:
        return None
    cols, starts, fits = got
    ph = cols["ph"][0]
    x = fits & np.fromiter((r == b'"X"' for r in ph), bool, len(ph))
    c = ChromeChunk(len(fits))
    try:
        c.others = [(i, _line_event(part, starts, i)) for i in np.flatnonzero(~x).tolist()]
        if any(e.get("ph") in _TIMED for _, e in c.others):
            raise _Refused()
        c.rows = np.flatnonzero(x)
        every = len(c.rows) == len(x)
        cols = {k: _rows(v, p, c.rows, every) for k, (v, p) in cols.items() if k != "args"}
        _required(cols, ("cat", "name", "pid", "tid", "ts"))
        c.ts, c.dur = cols["ts"][0], cols["dur"][0]  # (no dur: 0, as the json path reads it)
        if not (np.isfinite(c.ts).all() and np.isfinite(c.dur).all() and (c.dur >= 0).all()):
            raise _Refused()
        c.pairs = list(zip(cols["pid"][0].tolist(), cols["tid"][0].tolist()))
        c.keys, c.key_of = _key_texts(cols, ("cat", "name", "args.path"), {None: ""})
        shape_raws, shape_present = cols["args.shapes"]
        shape_text = _decoded(shape_raws, (str, type(None)))
        c.shapes = [None if r is None else shape_text[r] for r in shape_raws]
        c.shapes_present = bool(shape_present.any())
        for name in CHROME_NUMBERS:
            values, present = cols["args." + name]
            if values.dtype.kind == "f" and not _whole_ns(values[present == 1]):
                raise _Refused()
            c.numbers[name] = (values, present)
        meta_raws = cols["args.metadata"][0]
        for i in np.flatnonzero(cols["args.metadata"][1]).tolist():
            m = _decoded([meta_raws[i]], dict)[meta_raws[i]]  # a fresh object for each event
            if m:
                c.meta[i] = m
    except _Refused:
        return None
    return c


def _rows(values, present, rows: np.ndarray, every: bool) -> tuple:
    if every:
        return values, present
    if isinstance(values, list):
        return [values[i] for i in rows.tolist()], present[rows]
    return (None if values is None else values[rows]), present[rows]


def _whole_ns(us: np.ndarray) -> bool:
    """µs that the json path rounds to int64 nanoseconds without an error."""
    ns = us * 1e3
    return bool(np.isfinite(ns).all() and (np.abs(ns) < 2.0**63).all())


def _line_event(part, starts: np.ndarray, i: int):
    """Line ``i`` of the block as the json module reads it within the block: a JSON object
    followed by a comma (optional on the file's last line), or :class:`_Refused`."""
    line = part.text[starts[i] : starts[i + 1]].rstrip(b" \t\r\n")
    if line.endswith(b","):
        line = line[:-1]
    elif not (part.last and i == len(starts) - 2):
        raise _Refused()
    try:
        event = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):
        raise _Refused() from None
    if type(event) is not dict:
        raise _Refused()
    return event
