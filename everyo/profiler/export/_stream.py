"""Read a JSON trace whose events array holds one event per line (everyo writes all its formats
so) in chunks of events, so that loading never holds every event as a Python dict at once.

Two passes over the file: the first finds the array (the line that opens it, and the first
line after it that starts with ``]``: JSON strings hold no raw newline, so such a line is the
array's end) and parses the rest of the document (the run header, ``otherData``) with the array
left empty; the second parses the array a block of whole lines at a time. A file laid out
otherwise (another tool's, a hand-edited one) raises :class:`NotLaidOut`, and the readers get
the whole document from ``json.load`` instead.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
from pathlib import Path

BLOCK_BYTES = 1 << 20  # about 6,000 events of everyo's exports per chunk
# (8 MB blocks held 50,000 events as dicts at once: the peak was 1.7x a 163 MB file; 1 MB
# blocks keep it near the file's size, at the same speed: benchmarks/load_memory.py)
TAIL_BYTES = 8 << 20  # the end of a file searched for the array's end, before a scan


class NotLaidOut(Exception):
    """The file does not hold one event per line: read it whole instead."""


@contextlib.contextmanager
def open_binary(path: Path):
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        yield f


@contextlib.contextmanager
def open_text(path: Path):
    with open_binary(path) as raw, io.TextIOWrapper(raw, encoding="utf-8") as f:
        yield f


class Layout:
    """Where the events array of a file lies: the document without it (``skeleton``, parsed)
    and the byte offsets of its first element line and of its closing ``]``."""

    def __init__(self, path: Path, block_bytes: int | None = None):
        self.path, self.block_bytes = path, block_bytes or BLOCK_BYTES
        with open_binary(path) as f:
            head = []
            for line in iter(f.readline, b""):
                head.append(line)
                if line.rstrip().endswith(b"["):
                    break
            else:
                raise NotLaidOut()
            self.first = sum(map(len, head))
            self.stop, tail = self._find_end(f)
        try:
            self.skeleton = json.loads(b"".join(head) + tail)
        except ValueError:
            raise NotLaidOut() from None
        if not _empty_events(self.skeleton):
            raise NotLaidOut()

    def _find_end(self, f) -> tuple[int, bytes]:
        """The offset of the line that closes the array, and the file from there on."""
        if isinstance(f, io.BufferedReader):  # a plain file: its end holds only the tail
            found = self._find_end_from_the_back(f)
            if found is not None:
                return found
            f.seek(self.first)
        at, prev = self.first, b"\n"  # the array's first line starts right after a newline
        while True:
            block = f.read(self.block_bytes)
            if not block:
                raise NotLaidOut()
            hit = (prev[-1:] + block).find(b"\n]")
            if hit >= 0:
                return at + hit, block[hit:] + f.read()
            at += len(block)
            prev = block

    def _find_end_from_the_back(self, f) -> tuple[int, bytes] | None:
        """The last line starting with ``]`` found in the last block: everyo writes nothing
        after the array but one line of header (``otherData``, ``]}``). ``None`` when the last
        block has none (a block scan from the front finds it)."""
        size = f.seek(0, io.SEEK_END)
        at = max(self.first, size - max(self.block_bytes, TAIL_BYTES))
        f.seek(at)
        block = (b"\n" if at == self.first else b"") + f.read()
        hit = block.rfind(b"\n]")
        if hit < 0:
            return None
        offset = at + hit + (0 if at == self.first else 1)
        return offset, block[hit + 1 :]

    def chunks(self):
        """The events as lists of dicts, a block of lines at a time, in file order."""
        for part in self.parts():
            yield part.events()

    def parts(self):
        """The events array as :class:`Part` blocks of whole lines, in file order."""
        with open_binary(self.path) as f:
            f.seek(self.first)
            left, rest = b"", self.stop - self.first
            while rest > 0 or left:
                block = f.read(min(self.block_bytes, rest)) if rest > 0 else b""
                rest -= len(block)
                block = left + block
                cut = block.rfind(b"\n") + 1 if rest > 0 else len(block)
                if cut == 0:  # one line longer than a block: read on
                    left = block
                    continue
                part, left = block[:cut], block[cut:]
                if part.strip():
                    yield Part(part, last=rest <= 0 and not left)


class Part:
    """A block of whole lines of the events array: ``events()`` parses it with the json module;
    ``_fast`` reads everyo's own line layout from ``text`` without it."""

    __slots__ = ("text", "last")

    def __init__(self, text: bytes, last: bool):
        self.text, self.last = text, last

    def events(self) -> list:
        return _parse(self.text)


def events_of(item) -> list:
    """The events of a chunk: a :class:`Part` parsed by the json module, or a list as it is."""
    return item.events() if isinstance(item, Part) else item


def _parse(part: bytes) -> list:
    lines = part.count(b"\n") + (not part.endswith(b"\n"))
    try:  # decoded first: json.loads of bytes decodes more slowly (surrogatepass)
        events = json.loads("[" + part.decode("utf-8").rstrip().rstrip(",") + "]")
    except ValueError:  # bad UTF-8 or JSON: the whole-file read says what is wrong
        raise NotLaidOut() from None
    if len(events) != lines:  # an element over several lines, or several on one
        raise NotLaidOut()
    return events


def _empty_events(skeleton) -> bool:
    """The skeleton has the events array where a format puts it, and it is empty."""
    if isinstance(skeleton, list):
        return skeleton == []
    if isinstance(skeleton, dict):
        key = "events" if skeleton.get("format") == "everyo.raw" else "traceEvents"
        return skeleton.get(key) == []
    return False
