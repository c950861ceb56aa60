import { test } from "node:test";
import assert from "node:assert/strict";
import {
  columnLabel, formatCell, formatClock, formatCount, formatMs, formatShare,
} from "../src/format.js";

test("formatMs picks a precision by magnitude", () => {
  assert.equal(formatMs(1234.4), "1,234");
  assert.equal(formatMs(12.345), "12.35");
  assert.equal(formatMs(0.012345), "0.0123");
  assert.equal(formatMs(0), "0");
  assert.equal(formatMs(null), "");
  assert.equal(formatMs(NaN), "");
});

test("formatShare and formatCount", () => {
  assert.equal(formatShare(0.4567), "45.7 %");
  assert.equal(formatShare(1), "100.0 %");
  assert.equal(formatCount(999), "999");
  assert.equal(formatCount(1500), "1.5 k");
  assert.equal(formatCount(2e9), "2.0 G");
});

test("formatCell formats by column key", () => {
  assert.equal(formatCell("name", "Linear"), "Linear");
  assert.equal(formatCell("total_ms", 3.14159), "3.14");
  assert.equal(formatCell("share", 0.25), "25.0 %");
  assert.equal(formatCell("calls", 20), "20");
  assert.equal(formatCell("calls", 1024), "1,024");
  assert.equal(formatCell("flops", 2048), "2.0 k");
  assert.equal(formatCell("flops", undefined), "");
});

test("columnLabel", () => {
  assert.equal(columnLabel("total_ms"), "total (ms)");
  assert.equal(columnLabel("self_ms"), "self (ms)");
  assert.equal(columnLabel("calls"), "calls");
});

test("formatClock shows the run clock to the microsecond", () => {
  assert.equal(formatClock(100.4), "100.400");
  assert.equal(formatClock(1234.5678), "1,234.568");
  assert.equal(formatClock(null), "");
});
