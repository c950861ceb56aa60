import { test } from "node:test";
import assert from "node:assert/strict";
import { clockText, countText, durationText, secondsText, toNs } from "../src/format.js";
import { NO_VALUE } from "../src/schema.js";

// the same inputs against everyo/spelling.py: tests/lab/test_format_js.py

test("durationText picks a precision by magnitude, from whole nanoseconds", () => {
  assert.equal(durationText(1_234_400_000), "1,234 ms");
  assert.equal(durationText(12_345_000), "12.35 ms");
  assert.equal(durationText(12_345), "0.0123 ms");
  assert.equal(durationText(99_960), "0.100 ms");
  assert.equal(durationText(999_500), "1.00 ms");
  assert.equal(durationText(1_125_000), "1.13 ms"); // half up, as the kernel rounds
  assert.equal(durationText(0), "0 ms");
  assert.equal(durationText(null), NO_VALUE);
  assert.equal(durationText(NaN), NO_VALUE);
});

test("clockText shows the run clock to the microsecond", () => {
  assert.equal(clockText(toNs(100.4)), "100.400");
  assert.equal(clockText(toNs(1234.5678)), "1,234.568");
  assert.equal(clockText(null), NO_VALUE);
});

test("counts and seconds", () => {
  assert.equal(countText(1234567), "1,234,567");
  assert.equal(secondsText(1.25), "1.3 s");
  assert.equal(secondsText(-1), "0.0 s");
});

test("no value is spelt as the kernel spells it", () => {
  assert.equal(NO_VALUE, "\u2013"); // an en dash (everyo/spelling.py)
});
