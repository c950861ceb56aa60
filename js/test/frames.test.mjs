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
