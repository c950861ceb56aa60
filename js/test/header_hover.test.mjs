import { test } from "node:test";
import assert from "node:assert/strict";
import { headerParts } from "../src/header.js";
import { pointerToData, tooltipLines } from "../src/hover.js";
import { figureColors } from "../src/theme.js";

test("header parts: status with error, then the kernel's words as they are", () => {
  const report = {
    run_id: "r1", label: "train", status: "failed", error: "ValueError", wall_ms: 1234.5, events: 5200,
    hot_spots: [{ name: "Conv2d", path: "features.3", label: "Conv2d [features.3]", self_ms: 12.3, share: 0.456 }],
    texts: { wall: "1234.500 ms", events: "5,200 events", hot_spots: ["Conv2d [features.3] 12.300 ms (45.6%)", "a", "b", "c"] },
  };
  assert.deepEqual(headerParts(report), [
    "failed (ValueError)",
    "1234.500 ms",
    "5,200 events",
    "hot spots (self time): Conv2d [features.3] 12.300 ms (45.6%), a, b",
  ]);
  // numbers without the kernel's words are not formatted here
  assert.deepEqual(headerParts({ status: "running", wall_ms: 3, events: 2 }), ["running"]);
});

test("pointerToData maps pixels to (time, row) with depth 0 on top", () => {
  const size = { l: 60, t: 40, w: 1000, h: 400 };
  const p = pointerToData(250, 50, size, [0, 100], [3.5, -0.5]);
  assert.equal(p.t, 25);
  assert.equal(p.y, 0);
  assert.equal(p.row, 0);
  assert.equal(pointerToData(250, 350, size, [0, 100], [3.5, -0.5]).row, 3);
  assert.equal(pointerToData(-1, 50, size, [0, 100], [3.5, -0.5]), null);
  assert.equal(pointerToData(10, 401, size, [0, 100], [3.5, -0.5]), null);
});

test("tooltip lines of an event and of a merged bar", () => {
  const info = { label: "Conv2d [features.3]", kind: "module", colorKey: "Conv2d" };
  assert.deepEqual(tooltipLines({ start: 1.5, end: 4, count: 1, info, selfNs: 750000 }), [
    "Conv2d [features.3]", "module", "start 1.500 ms · duration 2.50 ms", "self 0.750 ms",
  ]);
  assert.equal(tooltipLines({ start: 1.5, end: 4, count: 1, info, selfNs: null }).length, 3);
  // a tie of float milliseconds rounds as the kernel rounds its nanoseconds (half up)
  assert.equal(tooltipLines({ start: 0.1, end: 1.225, count: 1, info })[2], "start 0.100 ms · duration 1.13 ms");
  assert.deepEqual(tooltipLines({ start: 0, end: 12, count: 1500, info: null }), [
    "merged: 1,500 events · 12.00 ms", "mixed", "from 0.000 to 12.000 ms", "zoom in to see them",
  ]);
  assert.equal(tooltipLines({ start: 0, end: 1, count: 3, info })[1], "Conv2d");
  // one call path's calls (the readable merge): how many, and their total time
  assert.deepEqual(tooltipLines({ start: 2, end: 14.5, count: 412, info, group: true }), [
    "Conv2d [features.3] ×412", "412 calls · total 12.50 ms", "module", "merged by call path: zoom in to see each call",
  ]);
});

test("figureColors: the theme's colours over the light ones over the defaults", () => {
  const themes = { light: { paper_bgcolor: "#fff", muted: "#666" }, dark: { paper_bgcolor: "#111" } };
  assert.equal(figureColors(themes, "dark").paper_bgcolor, "#111");
  assert.equal(figureColors(themes, "dark").muted, "#666");
  assert.equal(figureColors(undefined, "dark").font_color, "#2a3f5f");
});

test("headerParts shows the kernel's words when the report carries them (issue 33)", () => {
  const report = {
    status: "running", wall_ms: 12.3456, events: 1234, hot_spots: [{ label: "Linear", self_ms: 1 }],
    texts: { wall: "12.346 ms", events: "1,234 events", hot_spots: ["Linear 1.000 ms (8.1%)"] },
  };
  assert.deepEqual(headerParts(report), [
    "running", "12.346 ms", "1,234 events", "hot spots (self time): Linear 1.000 ms (8.1%)",
  ]);
});
