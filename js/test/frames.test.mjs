import { test } from "node:test";
import assert from "node:assert/strict";
import { frameBatcher } from "../src/frames.js";

test("frameBatcher: updates asked before a frame run once, together, in that frame", () => {
  const frames = [];
  const inFrame = frameBatcher((fn) => frames.push(fn));
  const calls = [];
  const header = inFrame(() => calls.push("header"));
  const table = inFrame(() => calls.push("table"));
  header();
  table();
  header(); // a second report before the frame: still one header update
  assert.equal(frames.length, 1);
  assert.deepEqual(calls, []);
  frames.shift()();
  assert.deepEqual(calls, ["header", "table"]);
  table(); // after the frame: a new one
  assert.equal(frames.length, 1);
  frames.shift()();
  assert.deepEqual(calls, ["header", "table", "table"]);
});

test("frameBatcher: a view closed before its frame runs nothing more", () => {
  const frames = [];
  const inFrame = frameBatcher((fn) => frames.push(fn));
  let calls = 0;
  const update = inFrame(() => (calls += 1));
  update();
  inFrame.cancel();
  frames.forEach((fn) => fn());
  update();
  assert.equal(calls, 0);
  assert.equal(frames.length, 1);
});

test("reportWaiter: a live refresh's events wait for its report; without one they draw later", async () => {
  const { reportWaiter } = await import("../src/frames.js");
  const timers = new Map();
  let next = 1;
  const later = (fn, ms) => { timers.set(next, { fn, ms }); return next++; };
  const cancel = (id) => timers.delete(id);
  let draws = 0;
  const waiter = reportWaiter(() => { draws += 1; }, 100, { later, cancel });
  waiter.data(true);
  waiter.data(true); // more events before the report: still one wait
  assert.equal(draws, 0);
  assert.equal(timers.size, 1);
  assert.equal([...timers.values()][0].ms, 100);
  waiter.report(); // the report's frame draws the chart: the wait is dropped
  assert.equal(timers.size, 0);
  assert.equal(draws, 0);
  waiter.data(true); // events, and no report comes: drawn after the wait
  const [[id, due]] = timers;
  timers.delete(id);
  due.fn();
  assert.equal(draws, 1);
  waiter.data(false); // not live (a final or a resent run): at once
  assert.equal(draws, 2);
  waiter.data(true);
  waiter.dispose();
  assert.equal(timers.size, 0);
});
