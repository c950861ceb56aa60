import { test } from "node:test";
import assert from "node:assert/strict";
import { MIXED, decodeColumns, eventLabel, keyInfo, typedColumn } from "../src/wire.js";
import { message } from "./helpers.mjs";

test("typedColumn reads aligned views in place and copies unaligned ones", () => {
  const buf = new ArrayBuffer(16);
  new Uint8Array(buf).set([0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  const unaligned = typedColumn(new DataView(buf, 1, 8), Uint32Array, 2);
  assert.deepEqual([...unaligned], [1, 2]);
  assert.notEqual(unaligned.buffer, buf);
  const aligned = typedColumn(new DataView(buf, 4, 8), Uint16Array, 2);
  assert.equal(aligned.buffer, buf);
  assert.deepEqual([...typedColumn(buf, Uint8Array, 3)], [0, 1, 0]);
  assert.throws(() => typedColumn(new DataView(buf, 0, 4), Uint32Array, 2), RangeError);
});

test("an events message decodes to ms from the run start, keys and step ends", () => {
  const keys = [["module", "Conv2d", "features.3", "#d62728"], ["op", "add", "", "#636efa"]];
  const [msg, buffers] = message("events", [
    { start: 10, dur: 5, depth: 1, thread: 0, key: 0 },
    { start: 0, dur: 20, depth: 0, thread: 1, key: 1 },
  ], { tickNs: 2000, t0Ms: 1.5, keys, key0: 3, steps: [4.25, 9.5], threads: { 0: "MainThread" } });
  const cols = decodeColumns(msg, buffers);
  assert.equal(cols.type, "events");
  assert.equal(cols.n, 2);
  assert.deepEqual([...cols.start], [1.5 + 10 * 0.002, 1.5]);
  assert.deepEqual([...cols.end], [1.5 + 15 * 0.002, 1.5 + 20 * 0.002]);
  assert.deepEqual([...cols.depth], [1, 0]);
  assert.deepEqual([...cols.thread], [0, 1]);
  assert.deepEqual([...cols.key], [0, 1]);
  assert.deepEqual([...cols.count], [1, 1]);
  assert.deepEqual([...cols.stepEnds], [4.25, 9.5]);
  assert.equal(cols.key0, 3);
  assert.deepEqual(cols.threads, { 0: "MainThread" });
  assert.equal(cols.window, null);
});

test("a bars message decodes counts, MIXED keys (all ones) and its window", () => {
  for (const keyBytes of [2, 4]) {
    const [msg, buffers] = message("bars", [
      { start: 0, dur: 1000, key: 2, count: 1 },
      { start: 1000, dur: 3000, key: -1, count: 17 },
    ], { keyBytes, window: [1, 2.5], pxMs: 0.25, steps: [1, 2, 3] });
    const cols = decodeColumns(msg, buffers);
    assert.deepEqual([...cols.key], [2, MIXED]);
    assert.deepEqual([...cols.count], [1, 17]);
    assert.deepEqual(cols.window, [1, 2.5]);
    assert.equal(cols.pxMs, 0.25);
    assert.deepEqual([...cols.end], [1, 4]);
    assert.deepEqual([...cols.stepEnds], [1, 2, 3]);
  }
});

test("aligned ArrayBuffer copies decode the same as unaligned views", () => {
  const rows = [{ start: 7, dur: 3, depth: 2, thread: 0, key: 5 }];
  const [m1, b1] = message("events", rows, { unaligned: true });
  const [m2, b2] = message("events", rows, { unaligned: false });
  const plain = b2.map((v) => v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
  const a = decodeColumns(m1, b1);
  const b = decodeColumns(m2, plain);
  for (const name of ["start", "end", "depth", "thread", "key", "count"]) assert.deepEqual([...a[name]], [...b[name]]);
});

test("eventLabel and keyInfo", () => {
  assert.equal(eventLabel("Conv2d", "features.3"), "Conv2d [features.3]");
  assert.equal(eventLabel("Sequential", "Sequential"), "Sequential");
  assert.equal(eventLabel("step", ""), "step");
  const info = keyInfo(["module", "Linear", "fc1", "#ff7f0e"]);
  assert.equal(info.colorKey, "Linear");
  assert.equal(info.label, "Linear [fc1]");
  assert.equal(keyInfo(["backward", "Linear", "fc1", "#d62728"]).colorKey, "backward");
});

test("bars carry the key with the most time of each merged bar (all ones: unknown)", async () => {
  const { levelOfDetail } = await import("../src/lod.js");
  const { EventStore } = await import("../src/store.js");
  const [h, b] = message("bars", [
    { start: 0, dur: 100, key: -1, dom: 2, count: 40 },
    { start: 200, dur: 100, key: -1, dom: -1, count: 7 },
    { start: 400, dur: 100, key: 1, count: 1 },
  ], { keys: [["module", "A", "", "#000"], ["module", "B", "", "#111"], ["module", "C", "", "#222"]] });
  const cols = decodeColumns(h, b);
  assert.deepEqual([...cols.key], [MIXED, MIXED, 1]);
  assert.deepEqual([...cols.dom], [2, MIXED, 1]);
  const store = new EventStore("r1");
  store.apply(cols);
  const lane = store.whole.lane(0, 0);
  const bars = levelOfDetail([{ lane, row: 0 }], 0, 1, 1000);
  assert.deepEqual([...bars.key.subarray(0, bars.n)], [MIXED, MIXED, 1]);
  assert.deepEqual([...bars.dom.subarray(0, bars.n)], [2, MIXED, 1]);
});
