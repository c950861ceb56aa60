"""One rule for merging a flame chart's sub-pixel events: the kernel's (views/flame/lod.py,
``merge_bars``: the bars of a run past the raw limit) and the browser's (js/src/lod.js,
``levelOfDetail``: a zoom, a smaller run) merge the same events into the same bars, with the
same dominant colour in each mixed bar, so a run's chart reads alike whichever side drew it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from everyo_lab.views.flame.lod import merge_bars

JS = Path(__file__).resolve().parents[2] / "js"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")

SCRIPT = """
import { readFileSync } from "node:fs";
import { levelOfDetail } from "%(js)s/src/lod.js";
import { lane } from "%(js)s/test/helpers.mjs";
import { MIXED } from "%(js)s/src/wire.js";
const { lanes, x1, width, max } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const items = lanes.map((pairs, row) => ({ lane: lane(pairs), row }));
const codes = Int32Array.from({ length: 8 }, (_, k) => k);  // a key's colour is its own
const b = levelOfDetail(items, 0, x1, width, max, codes);
const out = [];
for (let i = 0; i < b.n; i++) {
  out.push([b.lane[i], b.start[i], b.end[i], b.count[i], b.key[i] !== MIXED, codes[b.dom[i]]]);
}
console.log(JSON.stringify(out));
"""

PIXEL_NS = 1000  # a 1-ms window 1,000 pixels wide


def _lane_events(rng, n: int, ties: bool = False) -> list[tuple[int, int, int]]:
    """``n`` events of one lane, in time order, none overlapping: mostly narrow, some wide;
    gaps short and long. No start on a pixel column's edge, and no duration or gap of exactly
    a pixel: there the kernel's integer nanoseconds and the browser's float milliseconds
    could round to different sides of the same rule. With ``ties`` narrow events last 100,
    200 or 300 ns, so colours often tie for the most time in a merged bar."""
    events, t = [], 137
    for _ in range(n):
        narrow = rng.choice([100, 200, 300]) if ties else rng.integers(40, 400)
        dur = int(rng.choice([narrow, rng.integers(1200, 4000)], p=[0.85, 0.15]))
        gap = int(rng.choice([rng.integers(20, 300), rng.integers(1100, 3000)], p=[0.8, 0.2]))
        t += gap
        if t % PIXEL_NS in range(0, 5) or t % PIXEL_NS > PIXEL_NS - 5:
            t += 11
        events.append((t, dur, int(rng.integers(0, 3))))
        t += dur
    return events


@needs_node
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("max_bars", [100_000, 400])  # 400: the pixel is widened to fit
def test_the_browser_and_the_kernel_merge_the_same_events_into_the_same_bars(
    tmp_path, seed, max_bars, ties
):
    rng = np.random.default_rng(seed)
    lanes = [_lane_events(rng, 300, ties) for _ in range(3)]
    span = max(s + d for events in lanes for s, d, _ in events) + 500
    width = span // PIXEL_NS
    span = width * PIXEL_NS  # a whole number of pixels
    rows = [(s, d, lane, k) for lane, events in enumerate(lanes) for s, d, k in events]
    start, dur, lane, code = (np.array(c, np.int64) for c in zip(*rows, strict=True))
    bars = merge_bars(
        start, dur, lane, code, x_range_ns=(0, span), width_px=width, max_shapes=max_bars
    )
    kernel = sorted(
        (int(b_lane), int(b_start), int(b_end), int(count), bool(uniform), int(dom))
        for b_lane, b_start, b_end, count, uniform, dom in zip(
            bars.lane, bars.start, bars.end, bars.count, bars.uniform, bars.dom, strict=True
        )
    )
    data = tmp_path / "lanes.json"
    pairs = [[[s / 1e6, (s + d) / 1e6, k] for s, d, k in events] for events in lanes]
    data.write_text(
        json.dumps({"lanes": pairs, "x1": span / 1e6, "width": int(width), "max": max_bars})
    )
    script = tmp_path / "lod.mjs"
    script.write_text(SCRIPT % {"js": JS.as_posix()})
    result = subprocess.run(
        [NODE, str(script), str(data)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    browser = sorted(
        (int(b_lane), round(b_start * 1e6), round(b_end * 1e6), int(count), bool(uniform), dom)
        for b_lane, b_start, b_end, count, uniform, dom in json.loads(result.stdout)
    )
    assert len(kernel) < min(0.8 * len(rows), max_bars + 1)  # the events did merge
    assert sum(not b[4] for b in kernel) > 10  # with many mixed bars
    assert browser == kernel


FIXTURE = JS / "test" / "fixtures" / "lod_dominant.json"


def test_the_kernel_reads_the_dominant_colour_fixture_the_browser_reads():
    """The cases js/test/lod.test.mjs gives the browser's merge: no majority, float-sum ties,
    keys sharing a colour."""
    for case in json.loads(FIXTURE.read_text())["cases"]:
        start, dur, key = (np.array(c, np.int64) for c in zip(*case["events"], strict=True))
        codes = np.array(case.get("codes") or range(int(key.max()) + 1), np.int64)
        bars = merge_bars(
            start,
            dur,
            np.zeros(len(start), np.int64),
            codes[key],
            x_range_ns=(0, case["span_ns"]),
            width_px=case["width_px"],
        )
        got = [
            [int(s), int(e), int(n), int(d)]
            for s, e, n, d in zip(bars.start, bars.end, bars.count, bars.dom, strict=True)
        ]
        assert got == case["expect"], case["name"]


READABLE = """
import { readFileSync } from "node:fs";
import { readableLanes } from "%(js)s/src/lod.js";
import { lane } from "%(js)s/test/helpers.mjs";
const { lanes, paths, parent, edges, min } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const pathed = (pairs, row) => ({ ...lane(pairs), path: Int32Array.from(paths[row]) });
const items = lanes.map((pairs, row) => ({ lane: pathed(pairs, row), row }));
const edgesMs = Float64Array.from([-Infinity, ...edges, Infinity]);
const ranges = items.map((item) => [0, item.lane.n]);
const out = [];
readableLanes(items, ranges, edgesMs, min, parent).forEach(({ lane: b, row }) => {
  for (let i = 0; i < b.n; i++) {
    out.push([row, b.start[i], b.end[i], b.key[i], b.count[i], b.group[i]]);
  }
});
console.log(JSON.stringify(out));
"""


def _nested_run(rng, steps: int):
    """Two lanes of a training loop: per step, calls of keys 0 and 1 (now and then one too
    wide to merge, or a lone one) holding calls of keys 2 to 4; the step ends; each event's
    call path (its key under its parent's path) and every path's parent."""
    ids: dict[tuple[int, int], int] = {}
    parent: list[int] = []

    def path_id(up: int, key: int) -> int:
        if (up, key) not in ids:
            ids[(up, key)] = len(parent)
            parent.append(up)
        return ids[(up, key)]

    top, below, step_ends, t = [], [], [], 0
    for _ in range(steps):
        for _ in range(int(rng.integers(1, 4))):
            t += int(rng.integers(10, 200))
            key = int(rng.integers(0, 2))
            wide = rng.random() < 0.1
            s, up = t, path_id(-1, key)
            for _ in range(int(rng.integers(0, 5))):
                t += int(rng.integers(5, 50))
                d = int(rng.integers(20, 400))
                below.append((t, t + d, int(rng.integers(2, 5)), up))
                t += d
            t += int(rng.integers(5, 50)) + (5000 if wide else 0)
            top.append((s, t, key, -1))
        t += int(rng.integers(10, 100))
        step_ends.append(t)
    lanes = [[(s, e, k) for s, e, k, _ in top], [(s, e, k) for s, e, k, _ in below]]
    paths = [[path_id(-1, k) for _, _, k, _ in top], [path_id(up, k) for _, _, k, up in below]]
    return lanes, paths, parent, step_ends


@needs_node
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_browser_and_the_kernel_merge_calls_by_call_path_alike(tmp_path, seed):
    """The readable merge of a zoomed-out chart: the kernel's (``merge_readable``) and the
    browser's (``readableLanes``) give the same bars for the same events and cells."""
    from everyo_lab.views.flame.lod import merge_readable

    rng = np.random.default_rng(seed)
    lanes, paths, parent, step_ends = _nested_run(rng, 200)
    edges = step_ends[int(rng.integers(2, 6)) :: 8]  # a cell: 8 steps
    min_ns = 2000
    rows = [
        (s, e, lane, k, p)
        for lane, events in enumerate(lanes)
        for (s, e, k), p in zip(events, paths[lane], strict=True)
    ]
    start, end, lane, key, path = (np.array(c, np.int64) for c in zip(*rows, strict=True))
    cells = [-np.inf, *edges, np.inf]
    kernel = merge_readable(start, end, lane, key, path, parent, edges=cells, min_ns=min_ns)
    kernel_bars = sorted(
        (int(ln), int(s), int(e), int(k), int(c), int(g))
        for s, e, ln, k, c, g, _ in zip(*kernel, strict=True)
    )
    data = tmp_path / "readable.json"
    data.write_text(
        json.dumps(
            {
                "lanes": [[[s / 1e6, e / 1e6, k] for s, e, k in events] for events in lanes],
                "paths": paths,
                "parent": parent,
                "edges": [e / 1e6 for e in edges],
                "min": min_ns / 1e6,
            }
        )
    )
    script = tmp_path / "readable.mjs"
    script.write_text(READABLE % {"js": JS.as_posix()})
    result = subprocess.run(
        [NODE, str(script), str(data)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    browser = sorted(
        (int(row), round(s * 1e6), round(e * 1e6), int(k), int(c), int(g))
        for row, s, e, k, c, g in json.loads(result.stdout)
    )
    assert sum(g for *_, g in kernel_bars) > 20  # calls did merge
    assert sum(c for *_, c, _ in kernel_bars) == len(rows)  # each call in one bar
    assert sum(not g for *_, g in kernel_bars) > 5  # and some stayed their own bars
    assert len(browser) == len(kernel_bars)
    for b, k in zip(browser, kernel_bars, strict=True):
        # float milliseconds against whole nanoseconds: sums may differ by a rounding
        assert (
            b[0] == k[0] and b[3:] == k[3:] and abs(b[1] - k[1]) <= 2 and abs(b[2] - k[2]) <= 2
        ), (b, k)
