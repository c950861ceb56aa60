import { test } from "node:test";
import assert from "node:assert/strict";
import { nextSort, shareWidth, sortRows, summaryColumns, tableColumns } from "../src/table.js";

const rows = [
  { name: "ReLU", calls: 20, total_ms: 1.5 },
  { name: "Linear", calls: 40, total_ms: 9.25 },
  { name: "Sequential", calls: 20, total_ms: 12.0 },
  { name: "gpu", calls: 1, total_ms: null },
];

test("sortRows sorts numbers descending and ascending, missing values last", () => {
  assert.deepEqual(sortRows(rows, "total_ms", true).map((r) => r.name), ["Sequential", "Linear", "ReLU", "gpu"]);
  assert.deepEqual(sortRows(rows, "total_ms", false).map((r) => r.name), ["ReLU", "Linear", "Sequential", "gpu"]);
});

test("sortRows sorts strings and does not mutate its input", () => {
  const before = rows.map((r) => r.name);
  assert.deepEqual(sortRows(rows, "name", false).map((r) => r.name), ["gpu", "Linear", "ReLU", "Sequential"]);
  assert.deepEqual(rows.map((r) => r.name), before);
});

test("sortRows is stable for ties", () => {
  assert.deepEqual(sortRows(rows, "calls", true).map((r) => r.name), ["Linear", "ReLU", "Sequential", "gpu"]);
});

test("nextSort flips the same column and starts a new one descending", () => {
  assert.deepEqual(nextSort({ sortBy: "total_ms", descending: true }, "total_ms"), { sortBy: "total_ms", descending: false });
  assert.deepEqual(nextSort({ sortBy: "total_ms", descending: false }, "calls"), { sortBy: "calls", descending: true });
});

test("tableColumns keeps preferred order, appends extras, hides private keys", () => {
  const cols = tableColumns([{ total_ms: 1, name: "a", extra: 2, _hidden: 3 }], ["name", "calls", "total_ms"]);
  assert.deepEqual(cols, ["name", "total_ms", "extra"]);
});

test("shareWidth clamps", () => {
  assert.equal(shareWidth(0.5), 50);
  assert.equal(shareWidth(1.7), 100);
  assert.equal(shareWidth(-1), 0);
  assert.equal(shareWidth(undefined), 0);
});

test("summaryColumns: the label first, name and path folded into it", () => {
  const reportRows = [{
    label: "Conv2d [features.3]", name: "Conv2d", path: "features.3", kind: "module", calls: 2,
    total_ms: 3, self_ms: 1, share: 0.5, mean_ms: 1.5, shapes: "(8, 3, 32, 32)",
  }];
  assert.deepEqual(summaryColumns(reportRows, "name"), [
    "label", "kind", "calls", "total_ms", "self_ms", "share", "mean_ms", "shapes",
  ]);
  assert.ok(!summaryColumns(reportRows, "shape").includes("shapes"));
  const live = [{ label: "Linear", calls: 1, total_ms: 2, median_ms: null, std_ms: null }];
  assert.deepEqual(summaryColumns(live, "name"), ["label", "calls", "total_ms"]);
});
