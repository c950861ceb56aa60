import { test } from "node:test";
import assert from "node:assert/strict";
import { levelOfDetail } from "../src/lod.js";
import { layoutLanes } from "../src/lanes.js";
import {
  MERGED_COLOR, barGroups, colorKeys, flameHeight, flameLayout, hiddenKeys, legendTraces, traceUid, withAlpha,
} from "../src/figure.js";
import { barPixels, barText, fitText, labelPlan, paintFlame, pixelMap } from "../src/paint.js";
import { MIXED, keyInfo } from "../src/wire.js";
import { lane } from "./helpers.mjs";

const KEYS = [
  ["module", "Linear", "0", "#ff7f0e"],
  ["module", "Linear", "2", "#ff7f0e"],
  ["module", "ReLU", "1", "#2ca02c"],
].map(keyInfo);
const CODES = Int32Array.from([0, 0, 1]); // both Linear keys share a colour

const near = (a, b) => Math.abs(a - b) < 1e-9;

/** A 2D context that records what is painted. */
function recorder() {
  const calls = [];
  const ctx = new Proxy({ calls }, {
    get: (target, name) => (name in target ? target[name] : (...args) => calls.push([name, ...args])),
    set: (target, name, value) => { calls.push([`set ${String(name)}`, value]); return true; },
  });
  return { ctx, calls };
}

test("pixelMap: time to x over the plot width, row 0 on top, bars 90 % of a row", () => {
  const map = pixelMap(10, 20, 4, 1000, 400);
  assert.equal(map.x(10), 0);
  assert.equal(map.x(15), 500);
  assert.ok(near(map.rowTop(0), 5));
  assert.ok(near(map.rowTop(3), 305));
  assert.ok(near(map.rowHeight, 90));
});

test("barPixels: at least one pixel wide, clipped to the plot area, null outside", () => {
  const bars = { start: [0, 5, -50, 200, 99.99], end: [10, 5.001, 50, 300, 100] };
  const map = pixelMap(0, 100, 1, 100, 10);
  assert.deepEqual(barPixels(bars, 0, map), [0, 10]);
  assert.deepEqual(barPixels(bars, 1, map), [5, 6]);
  assert.deepEqual(barPixels(bars, 2, map), [0, 50]);
  assert.equal(barPixels(bars, 3, map), null);
  assert.deepEqual(barPixels(bars, 4, map).map((v) => Math.round(v * 100) / 100), [99.99, 100]);
});

test("bars group by colour key: singles in colour, merged of one key paler, mixed in the main key's colour, palest", () => {
  const items = [
    { lane: lane([[0, 10, 0], [20, 30, 1], [40, 50, 2]]), row: 0 },
    { lane: lane([[0, 0.01, 0], [0.02, 0.03, 1], [60, 60.01, 0], [60.02, 60.03, 2]]), row: 1 },
  ];
  const bars = levelOfDetail(items, 0, 100, 100, 20000, CODES);
  const groups = barGroups(bars, KEYS);
  assert.deepEqual(groups.map((g) => [g.colorKey, g.fill, g.idx.length]), [
    ["Linear", "#ff7f0e", 2],
    ["Linear", "rgba(255,127,14,0.3)", 1],
    ["Linear", "rgba(255,127,14,0.45)", 1],
    ["ReLU", "#2ca02c", 1],
  ]);
  bars.dom.fill(MIXED); // kernel bars of several colours carry no main key: grey
  const grey = barGroups(bars, KEYS).at(-1);
  assert.deepEqual([grey.colorKey, grey.fill, grey.idx.length], ["merged", withAlpha(MERGED_COLOR, 0.6), 1]);
  // a key the table does not have (yet): grey too, whatever the count
  const unknown = { ...bars, key: bars.key.map(() => 7), dom: null };
  assert.deepEqual(barGroups(unknown, KEYS).map((g) => [g.colorKey, g.idx.length]), [["merged", bars.n]]);
});

test("paintFlame paints every bar with one fillRect, skips hidden keys, labels wide bars", () => {
  const items = [{ lane: lane([[0, 50, 0], [50, 55, 2], [60, 100, 2], [100.5, 100.6, 0], [100.7, 100.8, 2]]), row: 0 }];
  const bars = levelOfDetail(items, 0, 200, 400, 20000, CODES); // 2 px per ms
  const map = pixelMap(0, 200, 1, 400, 30);
  const { ctx, calls } = recorder();
  assert.equal(paintFlame(ctx, { bars, keys: KEYS, map, stepEnds: [50, 150] }), 4);
  const rects = calls.filter((c) => c[0] === "fillRect");
  // whole pixels: x floored, y rounded, widths at least one pixel
  assert.deepEqual(rects.map((c) => c.slice(1)), [[0, 1, 100, 27], [201, 1, 1, 27], [100, 1, 10, 27], [120, 1, 80, 27]]);
  const texts = calls.filter((c) => c[0] === "fillText").map((c) => c[1]);
  assert.deepEqual(texts, ["Linear", "ReLU", "#0", "#1"]);
  const dense = recorder();
  paintFlame(dense.ctx, { bars, keys: KEYS, map, stepEnds: Float64Array.from({ length: 1000 }, (_, k) => k / 5) });
  assert.equal(dense.calls.filter((c) => c[0] === "moveTo").length, 50); // one per 8 px of 400
  const hidden = recorder();
  // the mixed bar at 100.5 ms is drawn in Linear's colour (it has the most time): hidden with it
  assert.equal(paintFlame(hidden.ctx, { bars, keys: KEYS, map, hidden: new Set(["ReLU"]) }), 2);
  assert.equal(paintFlame(hidden.ctx, { bars, keys: KEYS, map, hidden: new Set(["Linear"]) }), 2);
});

test("labels only for bars at least 60 px wide, at most `max`, cut to fit", () => {
  const items = [{ lane: lane([[0, 50, 0], [50, 55, 2], [60, 100, 2]]), row: 0 }];
  const bars = levelOfDetail(items, 0, 100, 200);
  const map = pixelMap(0, 100, 1, 200, 20);
  assert.deepEqual(labelPlan(bars, KEYS, map).map((l) => [l.text, l.x, l.width]), [["Linear", 0, 100], ["ReLU", 120, 80]]);
  assert.deepEqual(labelPlan(bars, KEYS, map, new Set(), 60, 1).map((l) => l.text), ["Linear"]);
  assert.deepEqual(labelPlan(bars, KEYS, map, new Set(["Linear"])).map((l) => l.text), ["ReLU"]);
  assert.equal(fitText("BatchNorm2d", 6), "Batch…");
  assert.equal(fitText("ReLU", 6), "ReLU");
  assert.equal(fitText("ReLU", 0), "");
  // a bar of several calls keeps its count whole while its name is cut
  assert.equal(barText("Linear", 412, 20), "Linear ×412");
  assert.equal(barText("BatchNorm2d", 1412, 12), "Batc… ×1,412");
  assert.equal(barText("Linear", 412, 5), "Line…");
  assert.equal(barText("Linear", 1, 20), "Linear");
});

test("legend: one empty trace per colour key, stable uids, hidden ones legendonly", () => {
  assert.deepEqual(colorKeys(KEYS), [["Linear", "#ff7f0e"], ["ReLU", "#2ca02c"]]);
  const traces = legendTraces(KEYS, new Set(["ReLU"]), true);
  assert.deepEqual(traces.map((t) => [t.name, t.uid, t.visible, t.fillcolor]), [
    ["Linear", "ck-Linear", true, "#ff7f0e"],
    ["ReLU", "ck-ReLU", "legendonly", "#2ca02c"],
    ["merged", "ck-merged", true, MERGED_COLOR],
  ]);
  for (const t of traces) assert.deepEqual([t.x, t.y, t.hoverinfo], [[null], [null], "skip"]);
  assert.deepEqual([...hiddenKeys(traces)], ["ReLU"]);
  assert.match(traceUid("my op:x.y"), /^[A-Za-z0-9_-]+$/);
  assert.notEqual(traceUid("a.b"), traceUid("a_b"));
});

test("the layout shows exactly the window, x-only zoom, depth 0 on top, transparent plot", () => {
  const lanes = layoutLanes(new Map([[0, 2]]));
  const layout = flameLayout({ x0: 3, x1: 9, lanes, colors: { font_color: "#222" }, width: 800 });
  assert.deepEqual(layout.xaxis.range, [3, 9]);
  assert.equal(layout.xaxis.autorange, false);
  assert.deepEqual(layout.yaxis.range, [2.5, -0.5]);
  assert.equal(layout.yaxis.autorange, false);
  assert.equal(layout.yaxis.fixedrange, true);
  assert.equal(layout.dragmode, "zoom");
  assert.equal(layout.plot_bgcolor, "rgba(0,0,0,0)");
  assert.equal(layout.height, flameHeight(3));
  // no measuring of every tick label on each redraw (plotly's defaults do)
  for (const axis of [layout.xaxis, layout.yaxis]) {
    assert.equal(axis.ticklabeloverflow, "allow");
    assert.equal(axis.tickangle, 0);
  }
  assert.equal(flameLayout({ x0: 0, x1: 1, lanes, message: "no events" }).annotations[0].text, "no events");
  assert.equal(MIXED, -1);
});
