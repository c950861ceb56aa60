import { test } from "node:test";
import assert from "node:assert/strict";
import { followWindow, parseRelayout, sameWindow, wholeWindow } from "../src/zoom.js";
import { stepBounds, stepRows, zoomWindow } from "../src/steps.js";
import { stepsInWindow } from "../src/figure.js";

test("parseRelayout reads the three range forms and autorange", () => {
  assert.deepEqual(parseRelayout({ "xaxis.range[0]": 2, "xaxis.range[1]": 5 }), { x0: 2, x1: 5 });
  assert.deepEqual(parseRelayout({ "xaxis.range": [7, 3] }), { x0: 3, x1: 7 });
  assert.deepEqual(parseRelayout({ xaxis: { range: [1, 4] } }), { x0: 1, x1: 4 });
  assert.deepEqual(parseRelayout({ "xaxis.range[1]": 9 }, [1, 4]), { x0: 1, x1: 9 });
  assert.deepEqual(parseRelayout({ "xaxis.autorange": true }), { whole: true });
  assert.deepEqual(parseRelayout({ "xaxis.autorange": true, "yaxis.autorange": true }), { whole: true });
  assert.equal(parseRelayout({ autosize: true }), null);
  assert.equal(parseRelayout({ "yaxis.range[0]": 1, "yaxis.range[1]": 2 }), null);
  assert.equal(parseRelayout({ "xaxis.range[0]": 3, "xaxis.range[1]": 3 }), null);
  assert.equal(parseRelayout({ "xaxis.range[1]": 9 }), null); // no current window to complete it
  assert.equal(parseRelayout(null), null);
});

test("sameWindow and wholeWindow", () => {
  assert.equal(sameWindow([0, 100], [0, 100 + 1e-9]), true);
  assert.equal(sameWindow([0, 100], [0, 101]), false);
  assert.equal(sameWindow(null, null), true);
  assert.equal(sameWindow(null, [0, 1]), false);
  assert.deepEqual(wholeWindow(120, 80), [0, 120]);
  assert.deepEqual(wholeWindow(120, 150), [0, 150]); // events past the reported wall time
  assert.deepEqual(wholeWindow(0, -Infinity), [0, 1]);
});

test("followWindow: a round end at least 10 % past the run's, so the axis changes rarely", () => {
  assert.deepEqual(followWindow(1827, 1800), [0, 2500]);
  assert.deepEqual(followWindow(900, 950), [0, 2000]);
  assert.deepEqual(followWindow(3, 0), [0, 5]);
  assert.deepEqual(followWindow(0.05, 0), [0, 0.1]);
  for (let end = 0.7; end < 1e5; end *= 1.37) {
    const [, x1] = followWindow(end, 0);
    assert.ok(x1 >= 1.1 * end - 1e-9 && x1 <= 2.3 * end, `${end} -> ${x1}`);
  }
});

test("step k spans from step end k - 1 (the first event for step 0) to step end k", () => {
  const ends = [10, 25, 31];
  assert.deepEqual(stepBounds(ends, 0, 2), [2, 10]);
  assert.deepEqual(stepBounds(ends, 1, 2), [10, 25]);
  assert.deepEqual(stepBounds(ends, 2, 2), [25, 31]);
  assert.equal(stepBounds(ends, 3, 2), null);
  assert.equal(stepBounds(ends, -1, 2), null);
  assert.equal(stepBounds(ends, 1.5, 2), null);
  assert.equal(stepBounds([], 0, 0), null);
});

test("zoomWindow adds a small margin", () => {
  assert.deepEqual(zoomWindow(10, 30), [9, 31]);
  assert.deepEqual(zoomWindow(10, 30, 0.5), [0, 40]);
  const [a, b] = zoomWindow(5, 5);
  assert.ok(a < 5 && b > 5);
});

test("zoomWindow stays inside the run: the first and last steps get no margin beyond it", () => {
  assert.deepEqual(zoomWindow(0, 20, 0.05, [0, 100]), [0, 21]);
  assert.deepEqual(zoomWindow(80, 100, 0.05, [0, 100]), [79, 100]);
  assert.deepEqual(zoomWindow(10, 30, 0.05, [0, 100]), [9, 31]); // inside: as without
  // a step reaching past the extent (events after the wall time) keeps its own end
  assert.deepEqual(zoomWindow(90, 110, 0.05, [0, 100]), [89, 110]);
});

test("step rows from report.steps", () => {
  const steps = {
    count: 40, source: "optimizer", mean_ms: 1.25, median_ms: 1.2, p95_ms: 1.5,
    median: { index: 3, start_ms: 4, end_ms: 5.2, dur_ms: 1.2 },
    p95: { index: 7, start_ms: 9, end_ms: 10.5, dur_ms: 1.5 },
    slowest: { index: 0, start_ms: 0, end_ms: 3, dur_ms: 3 },
    fastest: { index: 9, start_ms: 11, end_ms: 12, dur_ms: 1 },
  };
  assert.deepEqual(stepRows(steps).map((r) => [r.what, r.index]), [["median", 3], ["p95", 7], ["slowest", 0], ["fastest", 9]]);
  assert.deepEqual(stepRows(null), []);
});

test("step markers in a window are thinned evenly", () => {
  const ends = Float64Array.from({ length: 1000 }, (_, i) => i + 0.5);
  assert.deepEqual(stepsInWindow(ends, 10, 14), [10, 11, 12, 13]);
  const many = stepsInWindow(ends, 0, 1000, 200);
  assert.equal(many.length, 200);
  assert.equal(many[1] - many[0], 5);
  assert.deepEqual(stepsInWindow(ends, 2000, 3000), []);
});
