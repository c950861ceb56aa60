import { test } from "node:test";
import assert from "node:assert/strict";
import { laneAxis, layoutLanes } from "../src/lanes.js";

test("one thread: depth d is row d, depth 0 on top", () => {
  const lanes = layoutLanes(new Map([[0, 3]]));
  assert.equal(lanes.offset.get(0), 0);
  assert.equal(lanes.nLanes, 4);
  const axis = laneAxis(lanes);
  assert.deepEqual(axis.range, [3.5, -0.5]);
  assert.equal(axis.autorange, false);
  assert.equal(axis.fixedrange, true);
  assert.equal(axis.dtick, 1);
});

test("threads are bands in order of first appearance, one empty row between", () => {
  const names = { 0: "MainThread", 1: "loader", 2: "worker" };
  const lanes = layoutLanes(new Map([[2, 0], [0, 2], [1, 1]]), (t) => names[t]);
  assert.deepEqual([...lanes.offset.entries()], [[0, 0], [1, 4], [2, 7]]);
  assert.equal(lanes.nLanes, 8);
  const axis = laneAxis(lanes);
  assert.deepEqual(axis.range, [7.5, -0.5]);
  assert.deepEqual(axis.tickvals, [0, 4, 7]);
  assert.deepEqual(axis.ticktext, ["MainThread", "loader", "worker"]);
});

test("no lanes still gives a one-row axis", () => {
  const lanes = layoutLanes(new Map());
  assert.equal(lanes.nLanes, 1);
  assert.deepEqual(laneAxis(lanes).range, [0.5, -0.5]);
});

test("a band of no thread on top (a run's sampled call tree): the threads' bands below it", () => {
  const lanes = layoutLanes(new Map([[0, 1]]), () => "MainThread", { rows: 3, name: "sampled" });
  assert.deepEqual(lanes.bands.map((b) => [b.thread, b.first, b.size, b.name]), [[null, 0, 3, "sampled"], [0, 4, 2, "MainThread"]]);
  assert.equal(lanes.offset.get(0), 4);
  assert.equal(lanes.nLanes, 6);
  const alone = layoutLanes(new Map(), undefined, { rows: 2, name: "sampled" }); // no events
  assert.equal(alone.nLanes, 2);
  assert.deepEqual(laneAxis(alone).range, [1.5, -0.5]);
});
