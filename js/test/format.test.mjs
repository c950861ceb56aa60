import { test } from "node:test";
import assert from "node:assert/strict";
import { formatClock, formatMs } from "../src/format.js";
import { NO_VALUE } from "../src/schema.js";

test("formatMs picks a precision by magnitude", () => {
  assert.equal(formatMs(1234.4), "1,234");
  assert.equal(formatMs(12.345), "12.35");
  assert.equal(formatMs(0.012345), "0.0123");
  assert.equal(formatMs(0), "0");
  assert.equal(formatMs(null), NO_VALUE);
  assert.equal(formatMs(NaN), NO_VALUE);
});

test("formatClock shows the run clock to the microsecond", () => {
  assert.equal(formatClock(100.4), "100.400");
  assert.equal(formatClock(1234.5678), "1,234.568");
  assert.equal(formatClock(null), NO_VALUE);
});

test("no value is spelt as the kernel spells it", () => {
  assert.equal(NO_VALUE, "\u2013"); // an en dash (everyo/spelling.py)
});
