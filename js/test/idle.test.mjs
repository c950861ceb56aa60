import { test } from "node:test";
import assert from "node:assert/strict";
import { whenIdle } from "../src/idle.js";

test("whenIdle asks requestIdleCallback with a timeout, and cancels through it", () => {
  const asked = [];
  const cancelled = [];
  const g = {
    requestIdleCallback: (fn, options) => asked.push({ fn, options }) + 6,
    cancelIdleCallback: (id) => cancelled.push(id),
  };
  let ran = 0;
  const cancel = whenIdle(() => { ran += 1; }, 150, g);
  assert.deepEqual(asked.map((a) => a.options), [{ timeout: 150 }]);
  asked[0].fn({ didTimeout: false, timeRemaining: () => 10 });
  assert.equal(ran, 1);
  cancel();
  assert.deepEqual(cancelled, [7]);
});

test("whenIdle without requestIdleCallback: a timer, cancellable", async () => {
  let ran = 0;
  whenIdle(() => { ran += 1; }, 150, {});
  const cancel = whenIdle(() => { ran += 10; }, 150, {});
  cancel();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(ran, 1);
});
