import { test } from "node:test";
import assert from "node:assert/strict";
import { layoutLanes } from "../src/lanes.js";
import { laneAxis } from "../src/lanes.js";
import { MERGED_KEY, legendTraces } from "../src/figure.js";
import { engagesChart, laneTicks, legendEntries, niceStep, paintAxes, paintLegend, tickText, xTicks } from "../src/live_axes.js";
import { keyInfo } from "../src/wire.js";

/** A 2D context that records what is painted (measureText: 7 px a character). */
function recorder() {
  const calls = [];
  const target = { calls, measureText: (s) => ({ width: 7 * s.length }) };
  const ctx = new Proxy(target, {
    get: (t, name) => (name in t ? t[name] : (...args) => calls.push([name, ...args])),
    set: (t, name, value) => { calls.push([`set ${String(name)}`, value]); return true; },
  });
  return { ctx, calls, texts: () => calls.filter((c) => c[0] === "fillText").map((c) => c[1]) };
}

test("niceStep: 1, 2, 2.5 or 5 times a power of ten, giving at most the ticks asked", () => {
  assert.equal(niceStep(2500, 10), 250);
  assert.equal(niceStep(1000, 10), 100);
  assert.equal(niceStep(1001, 10), 200);
  assert.equal(niceStep(0.03, 6), 0.005);
  assert.equal(niceStep(7, 3), 2.5);
  assert.equal(niceStep(0, 5), 1); // an empty span: a step all the same
  for (const [span, n] of [[123.4, 7], [9e6, 4], [0.7, 11]]) {
    const step = niceStep(span, n);
    assert.ok(span / step <= n + 1e-9, `${span}/${step} > ${n}`);
  }
});

test("xTicks: multiples of the step inside the window, at most one per 80 px", () => {
  const { step, values } = xTicks(0, 2500, 880);
  assert.equal(step, 250);
  assert.deepEqual(values, [0, 250, 500, 750, 1000, 1250, 1500, 1750, 2000, 2250, 2500]);
  const zoomed = xTicks(1203.7, 1218.2, 400);
  assert.ok(zoomed.values.every((v) => v >= 1203.7 && v <= 1218.2), zoomed.values);
  assert.ok(zoomed.values.length >= 2 && zoomed.values.length <= 6, zoomed.values);
  const gaps = zoomed.values.slice(1).map((v, i) => v - zoomed.values[i]);
  assert.ok(gaps.every((g) => Math.abs(g - zoomed.step) < 1e-9), gaps);
});

test("tickText: the decimals the step needs; k from 10,000 ms on", () => {
  assert.equal(tickText(1500, 500), "1500");
  assert.equal(tickText(7.5, 2.5), "7.5");
  assert.equal(tickText(0.25, 0.25), "0.25");
  assert.equal(tickText(1203.75, 0.05), "1203.75");
  assert.equal(tickText(0.1 + 0.2, 0.1), "0.3"); // float noise does not show
  assert.equal(tickText(20000, 5000), "20k");
  assert.equal(tickText(12500, 2500), "12.5k");
});

test("laneTicks: the y axis plotly would draw (figure.js laneAxis), depth 0 first", () => {
  const one = layoutLanes(new Map([[0, 3]]));
  const axis = laneAxis(one);
  assert.deepEqual(axis.range, [3.5, -0.5]); // depth 0 on top
  assert.deepEqual(laneTicks(one), {
    title: axis.title.text,
    ticks: [0, 1, 2, 3].map((r) => ({ row: r, text: String(r) })),
  });
  const two = layoutLanes(new Map([[0, 1], [3, 0]]), (t) => `thread ${t}`);
  const axis2 = laneAxis(two);
  const ticks = laneTicks(two);
  assert.equal(ticks.title, axis2.title.text);
  assert.deepEqual(ticks.ticks.map((t) => t.row), axis2.tickvals);
  assert.deepEqual(ticks.ticks.map((t) => t.text), axis2.ticktext);
  const deep = laneTicks(layoutLanes(new Map([[0, 59]])));
  assert.ok(deep.ticks.length <= 12 && deep.ticks[0].row === 0, deep.ticks);
});

test("legendEntries: what plotly's legend lists, merged bars last", () => {
  const keys = [
    ["module", "Linear", "0", "#ff7f0e"],
    ["module", "ReLU", "1", "#2ca02c"],
    ["module", "Linear", "2", "#ff7f0e"],
  ].map(keyInfo);
  const names = legendTraces(keys, new Set(), true).map((t) => t.name);
  assert.deepEqual(legendEntries(keys, true).map(([k]) => k), names);
  assert.equal(names[names.length - 1], MERGED_KEY);
  assert.deepEqual(legendEntries(keys).map(([k]) => k), ["Linear", "ReLU"]);
});

test("paintAxes: ticks under the plot area, lanes left of it with row 0 on top, titles, legend", () => {
  const { ctx, calls, texts } = recorder();
  const lanes = layoutLanes(new Map([[0, 1]]));
  const size = { l: 60, t: 40, w: 800, h: 200 };
  const out = paintAxes(ctx, {
    x0: 0, x1: 2000, lanes, size, width: 880, height: 285, legend: [["Linear", "#ff7f0e"]],
  });
  assert.deepEqual(out.yRange, [1.5, -0.5]);
  const shown = texts();
  for (const label of ["0", "1000", "2000", "time (ms)", "depth", "Linear"]) assert.ok(shown.includes(label), label);
  // the x labels sit under the plot area at their time; the lane labels left of it, depth 0 above depth 1
  const at = (text) => calls.find((c) => c[0] === "fillText" && c[1] === text);
  assert.equal(at("1000")[2], 60 + 400);
  assert.ok(at("1000")[3] > 40 + 200);
  const lane = (text) => calls.find((c) => c[0] === "fillText" && c[1] === text && c[2] < 60);
  assert.ok(lane("0")[3] < lane("1")[3] && lane("1")[3] < 40 + 200, [lane("0"), lane("1")]);
  assert.ok(at("Linear")[3] < 40, "the legend is in the top margin");
});

test("paintLegend: what does not fit is counted, hidden keys are faint", () => {
  const { ctx, calls, texts } = recorder();
  const entries = ["Conv2d", "ReLU", "MaxPool2d", "Linear", "backward", "optimizer"].map((k) => [k, "#123456"]);
  const shown = paintLegend(ctx, entries, { left: 0, bottom: 30, right: 260, color: "#000", hidden: new Set(["ReLU"]) });
  assert.ok(shown >= 1 && shown < entries.length, shown);
  assert.deepEqual(texts().slice(0, shown), entries.slice(0, shown).map(([k]) => k));
  assert.equal(texts()[shown], `+${entries.length - shown} more`);
  const alphas = calls.filter((c) => c[0] === "set globalAlpha").map((c) => c[1]);
  assert.ok(alphas.includes(0.35), alphas);
  assert.equal(paintLegend(recorder().ctx, entries.slice(0, 2), { left: 0, bottom: 30, right: 2000, color: "#000" }), 2);
});

test("engagesChart: a pointer moving over the chart, a press or focus turn to it; a scroll under a resting pointer does not", () => {
  assert.equal(engagesChart({ type: "pointermove", movementX: 3, movementY: 0 }), true);
  assert.equal(engagesChart({ type: "pointermove", movementX: 0, movementY: -1 }), true);
  assert.equal(engagesChart({ type: "pointerdown" }), true);
  assert.equal(engagesChart({ type: "focusin" }), true);
  // what Chromium sends when the page scrolls a chart under a pointer that has not moved
  assert.equal(engagesChart({ type: "pointerenter", movementX: 0, movementY: 0 }), false);
  assert.equal(engagesChart({ type: "pointermove", movementX: 0, movementY: 0 }), false);
  assert.equal(engagesChart({ type: "pointermove" }), false); // no movement reported
  assert.equal(engagesChart({ type: "pointerleave", movementX: 5, movementY: 5 }), false);
});
