import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { MAX_BARS, findBar, levelOfDetail, windowRange } from "../src/lod.js";
import { MIXED } from "../src/wire.js";
import { lane } from "./helpers.mjs";

const bars = (b) => Array.from({ length: b.n }, (_, i) => [b.start[i], b.end[i], b.count[i], b.key[i], b.row[i]]);

test("every event at least a pixel wide is its own bar", () => {
  // 100 ms over 100 px: one pixel is 1 ms
  const l = lane([[0, 10], [10, 11], [20, 45], [50, 51.5]]);
  const b = levelOfDetail([{ lane: l, row: 0 }], 0, 100, 100);
  assert.equal(b.n, 4);
  assert.deepEqual(bars(b).map((r) => r[2]), [1, 1, 1, 1]);
  assert.equal(b.screenPx, 1);
});

test("runs of sub-pixel events separated by less than a pixel merge, one bar per pixel column", () => {
  const pairs = [];
  for (let i = 0; i < 50; i++) pairs.push([10 + i * 0.2, 10 + i * 0.2 + 0.1, i % 2]);
  pairs.push([30, 40, 0]); // wide: its own bar, and it ends the run
  pairs.push([40.2, 40.3, 1], [60, 60.1, 1]); // a lone narrow event, then one far away
  const b = levelOfDetail([{ lane: lane(pairs), row: 3 }], 0, 100, 100);
  const got = bars(b);
  const merged = got.slice(0, -3);
  // 50 events every 0.2 ms at 1 ms a pixel: one bar per pixel column (columns counted from the
  // window's start, as the kernel's merge does), five events each, every event in one of them
  assert.equal(merged.length, 10);
  assert.deepEqual(merged.map((r) => r[2]), Array(10).fill(5));
  assert.ok(merged.every((r) => r[3] === MIXED && r[1] - r[0] <= b.screenPx));
  assert.deepEqual(merged.map((r) => Math.floor(r[0])), [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
  assert.deepEqual(got.at(-3), [30, 40, 1, 0, 3]);
  assert.deepEqual(got.at(-2), [40.2, 40.3, 1, 1, 3]); // within a pixel of the wide bar, but narrow runs never absorb wide events
  assert.deepEqual(got.at(-1), [60, 60.1, 1, 1, 3]);
});

test("a mixed merged bar names the key with the most time in it", () => {
  const pairs = [];
  for (let i = 0; i < 8; i++) pairs.push([i * 0.1, i * 0.1 + (i % 2 ? 0.01 : 0.05), i % 2 ? 5 : 9]);
  const b = levelOfDetail([{ lane: lane(pairs), row: 0 }], 0, 100, 100);
  assert.equal(b.n, 1);
  assert.equal(b.key[0], MIXED);
  assert.equal(b.dom[0], 9); // 4 x 0.05 ms of key 9 against 4 x 0.01 ms of key 5
  const one = levelOfDetail([{ lane: lane([[0, 0.1, 4], [0.2, 0.3, 4]]), row: 0 }], 0, 100, 100);
  assert.equal(one.dom[0], 4); // not mixed: its own key
});

test("a merged run of one key keeps the key", () => {
  const b = levelOfDetail([{ lane: lane([[0, 0.1], [0.3, 0.4], [0.5, 0.6]], { key: 7 }), row: 0 }], 0, 100, 100);
  assert.deepEqual(bars(b), [[0, 0.6, 3, 7, 0]]);
});

test("with colour codes, a run of keys of one colour keeps its first key", () => {
  const l = lane([[0, 0.1, 4], [0.2, 0.3, 5], [0.4, 0.5, 6]]);
  const codes = Int32Array.from([0, 0, 0, 0, 1, 1, 2]);
  assert.deepEqual(bars(levelOfDetail([{ lane: l, row: 0 }], 0, 100, 100, 20000, codes)), [[0, 0.5, 3, MIXED, 0]]);
  const l2 = lane([[0, 0.1, 4], [0.2, 0.3, 5]]);
  assert.deepEqual(bars(levelOfDetail([{ lane: l2, row: 0 }], 0, 100, 100, 20000, codes)), [[0, 0.3, 2, 4, 0]]);
  assert.deepEqual(bars(levelOfDetail([{ lane: l2, row: 0 }], 0, 100, 100)), [[0, 0.3, 2, MIXED, 0]]);
});

test("the window clips: events outside are dropped, partly overlapping ones count", () => {
  const l = lane([[0, 5], [8, 12], [20, 30], [39, 45], [50, 60]]);
  const b = levelOfDetail([{ lane: l, row: 0 }], 10, 40, 300);
  assert.deepEqual(bars(b).map((r) => r.slice(0, 2)), [[8, 12], [20, 30], [39, 45]]);
  assert.deepEqual(windowRange(l, 10, 40), [1, 4]);
  assert.deepEqual(windowRange(l, 100, 200), [5, 5]);
});

test("a parent spanning the window is found although it starts long before", () => {
  const l = lane([[0, 1000]]);
  const b = levelOfDetail([{ lane: l, row: 0 }], 500, 501, 100);
  assert.equal(b.n, 1);
});

test("the bar count is bounded by maxBars, whatever the events", () => {
  const pairs = [];
  for (let i = 0; i < 100000; i++) pairs.push([i * 1.0, i * 1.0 + 0.6, i % 5]);
  const items = [0, 1, 2].map((row) => ({ lane: lane(pairs), row }));
  for (const max of [20000, 4000, 50]) {
    const b = levelOfDetail(items, 0, 100000, 5000, max);
    assert.ok(b.n <= max, `${b.n} bars for max ${max}`);
    assert.ok(b.n > 0);
    const events = Array.from(b.count).reduce((s, c) => s + c, 0);
    assert.equal(events, 300000); // every event is in exactly one bar
    assert.ok(b.pixel >= b.screenPx);
  }
});

test("more lanes than maxBars still returns at most maxBars", () => {
  const items = Array.from({ length: 30 }, (_, row) => ({ lane: lane([[0, 10]]), row }));
  const b = levelOfDetail(items, 0, 10, 100, 12);
  assert.equal(b.n, 12);
});

test("bars are indexed by row, in start order, for the hover lookup", () => {
  const b = levelOfDetail([
    { lane: lane([[0, 10], [20, 30]]), row: 2 },
    { lane: lane([[5, 5.2]]), row: 0 },
  ], 0, 100, 100);
  assert.deepEqual(b.rows.get(2), [0, 2]);
  assert.deepEqual(b.rows.get(0), [2, 3]);
  assert.equal(findBar(b, 2, 25), 1);
  assert.equal(findBar(b, 2, 5), 0);
  assert.equal(findBar(b, 2, 15), -1);
  assert.equal(findBar(b, 2, 14, 5), 0); // within the slack of the nearer bar
  assert.equal(findBar(b, 2, 16, 5), 1);
  assert.equal(findBar(b, 1, 5), -1);
  assert.equal(findBar(b, 0, 5.1), 2);
  assert.equal(findBar(b, 0, 5.8), 2); // drawn at least a pixel (1 ms) wide
  assert.equal(findBar(b, 0, 6.2), -1);
});

test("a mixed bar's dominant colour is the kernel's: the most time, the lowest code on a tie", () => {
  // the fixture tests/lab/test_lod_js.py checks views/flame/lod.py's merge_bars against
  const url = new URL("./fixtures/lod_dominant.json", import.meta.url);
  const { cases } = JSON.parse(readFileSync(url, "utf8"));
  for (const c of cases) {
    const pairs = c.events.map(([s, d, k]) => [s / 1e6, (s + d) / 1e6, k]);
    const codes = c.codes ? Int32Array.from(c.codes) : null;
    const b = levelOfDetail([{ lane: lane(pairs), row: 0 }], 0, c.span_ns / 1e6, c.width_px, MAX_BARS, codes);
    const got = Array.from({ length: b.n }, (_, i) => [
      Math.round(b.start[i] * 1e6),
      Math.round(b.end[i] * 1e6),
      b.count[i],
      codes ? codes[b.dom[i]] : b.dom[i],
    ]);
    assert.deepEqual(got, c.expect, c.name);
  }
});

// The readable merge: call paths 0 (Sequential, key 1), 1 (Linear under it, key 2) and 2 (ReLU
// under it, key 3); `steps` steps of 1 ms, each a Sequential of 0.8 ms holding Linear, ReLU,
// Linear of 0.2 ms each.
const PATH_PARENT = [-1, 0, 0];
function pathed(pairs, paths) {
  return { ...lane(pairs), path: Int32Array.from(paths) };
}
function training(steps) {
  const top = [];
  const below = [];
  for (let k = 0; k < steps; k++) {
    const t = k * 1;
    top.push([t + 0.1, t + 0.9, 1]);
    below.push([t + 0.15, t + 0.35, 2], [t + 0.4, t + 0.6, 3], [t + 0.65, t + 0.85, 2]);
  }
  const items = [
    { lane: pathed(below, below.map((p) => (p[2] === 2 ? 1 : 2))), row: 1 },
    { lane: pathed(top, top.map(() => 0)), row: 0 },
  ];
  const stepEnds = Float64Array.from({ length: steps }, (_, k) => k + 1);
  return { items, stepEnds };
}
const rowBars = (b, row) => bars(b).filter((r) => r[4] === row);

test("zoomed out, a call path's calls in a cell of steps are one bar as wide as their total time", () => {
  const { items, stepEnds } = training(1000);
  // 1,000 steps over 750 px: 4 steps in 3 pixels; a cell is 512 steps (CELL_PX, 427 ms, at least)
  const b = levelOfDetail(items, 0, 1000, 750, MAX_BARS, null, { stepEnds, pathParent: PATH_PARENT });
  const top = rowBars(b, 0);
  assert.deepEqual(top.map((r) => [r[2], r[3]]), [[512, 1], [488, 1]]);
  assert.ok(top.every((r, k) => Math.abs(r[1] - r[0] - 0.8 * r[2]) < 1e-6 && r[0] === (k === 0 ? 0.1 : stepEnds[512 * k - 1] + 0.1)));
  const below = rowBars(b, 1);
  // per cell: Linear x1024 then ReLU x512, inside their Sequential bar, in the order first seen
  assert.deepEqual(below.map((r) => [r[2], r[3]]), [[1024, 2], [512, 3], [976, 2], [488, 3]]);
  assert.ok(Math.abs(below[0][0] - top[0][0]) < 1e-9 && Math.abs(below[1][1] - top[0][0] - 0.6 * 512) < 1e-6);
  assert.ok(Array.from(b.group).every((g) => g === 1));
  const events = Array.from(b.count).reduce((s, c) => s + c, 0);
  assert.equal(events, 4000); // every call is in exactly one bar
});

test("zoomed in, calls at least READABLE_PX wide are their own bars again", () => {
  const { items, stepEnds } = training(1000);
  const b = levelOfDetail(items, 10, 12, 1000, MAX_BARS, null, { stepEnds, pathParent: PATH_PARENT });
  assert.ok(Array.from(b.group).every((g) => g === 0));
  assert.deepEqual(rowBars(b, 1).map((r) => r.slice(0, 3)), [
    [10.15, 10.35, 1], [10.4, 10.6, 1], [10.65, 10.85, 1],
    [11.15, 11.35, 1], [11.4, 11.6, 1], [11.65, 11.85, 1],
  ]);
});

test("without steps the cells are slices of CELL_PX pixels; a lone narrow call is not merged", () => {
  const pairs = [];
  for (let k = 0; k < 100; k++) pairs.push([k, k + 0.5, 2]);
  pairs.push([500, 500.5, 2]); // alone in its cell
  const l = pathed(pairs, pairs.map(() => 1));
  const top = pathed([[-1, 501, 1]], [0]);
  // 1,000 ms over 1,000 px: a cell is 320 ms; a call half a pixel wide
  const b = levelOfDetail([{ lane: top, row: 0 }, { lane: l, row: 1 }], 0, 1000, 1000, MAX_BARS, null, { stepEnds: null, pathParent: PATH_PARENT });
  const got = rowBars(b, 1);
  assert.deepEqual(got.map((r) => r[2]), [100, 1]);
  assert.deepEqual(got[0].slice(0, 2), [0, 50]); // at its first call, as wide as 100 x 0.5 ms
  assert.deepEqual(got[1].slice(0, 3), [500, 500.5, 1]);
  assert.deepEqual(Array.from(b.group), [0, 1, 0]); // the parent spans every cell: its own bar
});

test("a call whose path is not known yet is never merged", () => {
  const pairs = [[0, 0.1, 2], [0.2, 0.3, 2], [0.4, 0.5, 2]];
  const l = pathed(pairs, [1, -1, 1]);
  const b = levelOfDetail([{ lane: l, row: 0 }], 0, 1000, 1000, MAX_BARS, null, { stepEnds: null, pathParent: PATH_PARENT });
  assert.deepEqual(Array.from(b.group), [0]); // three sub-pixel events: one pixel-merged bar
  assert.equal(b.count[0], 3);
});
