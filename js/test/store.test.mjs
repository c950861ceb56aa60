import { test } from "node:test";
import assert from "node:assert/strict";
import { EventStore, Lane, lowerBound, upperBound } from "../src/store.js";
import { decodeColumns } from "../src/wire.js";
import { message } from "./helpers.mjs";

const KEYS = [["module", "Sequential", "", "#1f77b4"], ["module", "Linear", "0", "#ff7f0e"], ["module", "ReLU", "1", "#2ca02c"]];
const decode = (...args) => decodeColumns(...message(...args));

test("binary searches", () => {
  const a = Float64Array.from([1, 2, 2, 5]);
  assert.equal(lowerBound(a, 4, 2), 1);
  assert.equal(upperBound(a, 4, 2), 3);
  assert.equal(lowerBound(a, 4, 9), 4);
  assert.equal(upperBound(a, 4, 0), 0);
});

test("a lane keeps appends sorted, and sorts once when one arrives out of order", () => {
  const lane = new Lane(0, 0, 2);
  lane.push(0, 1, 0, 1);
  lane.push(2, 3, 0, 1);
  lane.push(5, 9, 0, 1);
  assert.equal(lane.sorted, true);
  lane.push(3, 4, 1, 1);
  assert.equal(lane.sorted, false);
  assert.deepEqual(lane.range(3.5, 6), [2, 4]);
  assert.equal(lane.sorted, true);
  assert.deepEqual([...lane.start.slice(0, 4)], [0, 2, 3, 5]);
  assert.deepEqual([...lane.key.slice(0, 4)], [0, 0, 1, 0]);
  assert.deepEqual([...lane.reach.slice(0, 4)], [1, 3, 4, 9]);
});

test("events append per (thread, depth); another run's messages are ignored", () => {
  const store = new EventStore("r1");
  // post-order recording: children end (and are written) before their parent
  const ok = store.apply(decode("events", [
    { start: 1, dur: 2, depth: 1, key: 1 },
    { start: 4, dur: 2, depth: 1, key: 2 },
    { start: 0, dur: 10, depth: 0, key: 0 },
  ], { keys: KEYS, steps: [0.01], threads: { 0: "MainThread" }, reset: true }));
  assert.equal(ok, true);
  assert.equal(store.whole.n, 3);
  assert.equal(store.whole.lane(0, 1).n, 2);
  assert.equal(store.whole.x1, 0.01);
  assert.equal(store.keys[1].label, "Linear [0]");
  assert.equal(store.threadName(0), "MainThread");
  assert.equal(store.threadName(4), "thread 4");
  assert.equal(store.apply(decode("events", [{ start: 1, dur: 1 }], { run: "other" })), false);
  store.apply(decode("events", [{ start: 20, dur: 1, depth: 2, thread: 1, key: 3 }], {
    keys: [["op", "add", "", "#000000"]], key0: 3, steps: [0.02],
  }));
  assert.equal(store.whole.n, 4);
  assert.deepEqual([...store.whole.depths()], [[0, 1], [1, 2]]);
  assert.equal(store.keys[3].name, "add");
  assert.deepEqual([...store.stepEnds], [0.01, 0.02]);
  assert.equal(store.raw, true);
  assert.deepEqual([...store.codes], [0, 1, 2, 3]);
});

test("a reset message drops what was held", () => {
  const store = new EventStore("r1");
  store.apply(decode("events", [{ start: 1, dur: 2 }], { keys: KEYS, steps: [1] }));
  store.apply(decode("events", [{ start: 5, dur: 2 }], { keys: KEYS, reset: true }));
  assert.equal(store.whole.n, 1);
  assert.equal(store.stepEnds.length, 0);
});

test("an event's self time is the kernel's, as sent; none when not sent", () => {
  const store = new EventStore("r1");
  // self times in ticks of 1 us; the parent's is not its duration less its children's
  // overlaps (a child sticks out of it): the browser shows what the kernel worked out
  store.apply(decode("events", [
    { start: 1000, dur: 2000, depth: 1, key: 1, self: 2000 },
    { start: 4000, dur: 1000, depth: 1, key: 2, self: 1000 },
    { start: 9000, dur: 3000, depth: 1, key: 2, self: 3000 },
    { start: 0, dur: 10000, depth: 0, key: 0, self: 4000 },
  ], { keys: KEYS }));
  assert.equal(store.selfNs(0, 0, 0, 10), 4000 * 1000);
  assert.equal(store.selfNs(0, 1, 1, 3), 2e6);
  assert.equal(store.selfNs(0, 1, 1, 2.5), null); // no such event
  assert.equal(store.selfNs(3, 0, 0, 10), null); // no such lane
  const old = new EventStore("r1");
  old.apply(decode("events", [{ start: 0, dur: 10000, key: 0 }], { keys: KEYS }));
  assert.equal(old.selfNs(0, 0, 0, 10), null); // a message without self times
});

test("whole-run bars replace the events; a detail answer that covers the window is used", () => {
  const store = new EventStore("r1");
  store.apply(decode("events", [{ start: 1, dur: 2 }], { keys: KEYS, steps: [1] }));
  store.apply(decode("bars", [
    { start: 0, dur: 50000, count: 40, key: 1 },
    { start: 50000, dur: 50000, count: 60, key: -1 },
  ], { keys: KEYS, pxMs: 0.5, steps: [10, 20, 30] }));
  assert.equal(store.raw, false);
  assert.equal(store.whole.n, 2);
  assert.equal(store.whole.events, 100);
  assert.deepEqual([...store.stepEnds], [10, 20, 30]);
  let src = store.source(0, 100, 100 / 1000);
  assert.equal(src.set, store.whole);
  assert.equal(src.coarse, true);
  assert.equal(store.source(0, 100, 1).coarse, false);
  store.apply(decode("bars", [{ start: 10000, dur: 1, count: 1, key: 1 }], { keys: KEYS, window: [5, 15], pxMs: 0.01 }));
  src = store.source(6, 14, 8 / 1000);
  assert.equal(src.set, store.detail.set);
  assert.equal(src.coarse, false);
  assert.equal(store.source(0, 14, 0.014).set, store.whole); // not covered: the coarse bars
  assert.equal(store.whole.n, 2); // a detail answer leaves the whole-run set alone
  store.apply(decode("bars", [{ start: 0, dur: 1, count: 1 }], { keys: KEYS, pxMs: 0.5 }));
  assert.equal(store.source(6, 14, 0.008).stale, true);
});

test("step ends: a message's step0 says where its ends go (append, or replace from there)", async () => {
  const { withSteps } = await import("../src/store.js");
  const held = Float64Array.from([1, 2, 3]);
  assert.deepEqual([...withSteps(held, 3, Float64Array.from([4]))], [1, 2, 3, 4]);
  assert.deepEqual([...withSteps(held, 0, Float64Array.from([9]))], [9]);
  assert.deepEqual([...withSteps(held, 1, Float64Array.from([5, 6]))], [1, 5, 6]);
  assert.deepEqual([...withSteps(held, Infinity, Float64Array.from([7]))], [1, 2, 3, 7]);
});

test("each event gets its call path; a call whose parent has not ended waits for it", () => {
  const store = new EventStore("r1");
  // a Linear of a Sequential that has not ended yet, then the Sequential and a second step
  store.apply(decode("events", [{ start: 1, dur: 2, depth: 1, key: 1 }], { keys: KEYS, reset: true }));
  let parent = store.resolvePaths();
  assert.deepEqual([...store.whole.lane(0, 1).path.slice(0, 1)], [-1]);
  store.apply(decode("events", [
    { start: 0, dur: 10, depth: 0, key: 0 },
    { start: 11, dur: 2, depth: 1, key: 1 },
    { start: 14, dur: 2, depth: 1, key: 2 },
    { start: 10.5, dur: 10, depth: 0, key: 0 },
  ], { keys: [] }));
  parent = store.resolvePaths();
  const seq = store.whole.lane(0, 0).path;
  const below = store.whole.lane(0, 1).path;
  assert.deepEqual([...seq.slice(0, 2)], [0, 0]);
  assert.deepEqual([...below.slice(0, 3)], [1, 1, 2]); // Linear under Sequential twice, then ReLU
  assert.deepEqual(parent, [-1, 0, 0]);
  assert.equal(store.resolvePaths(), parent); // nothing new: no work
});
