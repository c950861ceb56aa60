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
  // the fixture tests/lab/test_lod_js.py checks views/lod.py's merge_bars against
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
