"""The nesting rule trace viewers apply to a Chrome trace, checked exactly as they read it.

Viewers (chrome://tracing, Perfetto, speedscope and others) parse ``ts`` and ``dur`` as doubles
and compare ``ts + dur`` exactly: on each thread, a child must lie within its parent and a later
sibling must start at or after the earlier one's ``ts + dur``. One event that ends a float ulp
after its sibling starts makes every later event nest inside it (a staircase). ``conftest.py``
applies this to every trace the suite exports.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path


def read_trace(path) -> list[dict]:
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def misnested(events: list[dict]) -> list[tuple[dict, dict]]:
    """(event, enclosing event) pairs where the event ends after the one it starts inside."""
    lanes: dict = {}
    for e in events:
        if e.get("ph") == "X":
            lanes.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    bad = []
    for lane in lanes.values():
        lane.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack: list[dict] = []
        for e in lane:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
                stack.pop()  # ended at or before e starts: a sibling, not a parent
            if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"]:
                bad.append((e, stack[-1]))
            stack.append(e)
    return bad


def assert_trace_nests(path) -> None:
    bad = misnested(read_trace(path))
    assert not bad, f"{path}: {len(bad)} events end after their parent, e.g. {bad[:2]}"
