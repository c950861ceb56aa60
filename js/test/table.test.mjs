import { test } from "node:test";
import assert from "node:assert/strict";
import {
  bodyCells, headKey, nextSort, patchBody, shareWidth, sortRows, summaryColumns, tableColumns,
} from "../src/table.js";
import { fakeDocument } from "./helpers.mjs";

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

const texts = (body) => body.rows.map((tr) => tr.cells.map((td) => td.textContent));

test("bodyCells: sorted rows, formatted texts, share bar widths", () => {
  const cells = bodyCells(
    [{ label: "a", total_ms: 1, share: 0.25 }, { label: "b", total_ms: 3, share: 0.75 }],
    ["label", "total_ms", "share"],
    { sortBy: "total_ms", descending: true },
  );
  assert.deepEqual(cells.map((row) => row.map((c) => c.text)), [["b", "3.00", "75.0 %"], ["a", "1.00", "25.0 %"]]);
  assert.deepEqual(cells.map((row) => row.map((c) => c.bar)), [[null, null, 75], [null, null, 25]]);
});

test("headKey: the same columns, sort and headers give the same head", () => {
  const sort = { sortBy: "total_ms", descending: true };
  const key = headKey(["label", "calls"], sort, { label: "name" });
  assert.equal(headKey(["label", "calls"], { ...sort }, { label: "name" }), key);
  assert.notEqual(headKey(["label", "calls"], { ...sort, descending: false }, { label: "name" }), key);
  assert.notEqual(headKey(["label", "calls", "share"], sort, { label: "name" }), key);
  assert.notEqual(headKey(["label", "calls"], sort, { label: "module path" }), key);
});

test("patchBody reuses rows and cells and writes only what changed", () => {
  const doc = fakeDocument();
  const body = doc.createElement("tbody");
  const columns = ["label", "calls", "share"];
  const sort = { sortBy: "calls", descending: true };
  const rows = [{ label: "Linear", calls: 40, share: 0.5 }, { label: "ReLU", calls: 20, share: 0.1 }];
  assert.equal(patchBody(doc, body, bodyCells(rows, columns, sort)), 6);
  assert.deepEqual(texts(body), [["Linear", "40", "50.0 %"], ["ReLU", "20", "10.0 %"]]);
  const shareCell = body.rows[0].cells[2];
  assert.equal(shareCell.firstChild.className, "everyo-share-bar");
  assert.equal(shareCell.firstChild.style.width, "50%");
  const first = body.rows[0];
  const inserted = doc.inserted;

  const next = [{ label: "Linear", calls: 41, share: 0.5 }, { label: "ReLU", calls: 20, share: 0.2 }];
  assert.equal(patchBody(doc, body, bodyCells(next, columns, sort)), 2); // two cells changed
  assert.equal(doc.inserted, inserted); // their texts rewritten in place: no node added
  assert.equal(body.rows[0], first);
  assert.deepEqual(texts(body), [["Linear", "41", "50.0 %"], ["ReLU", "20", "20.0 %"]]);
  assert.equal(body.rows[1].cells[2].firstChild.style.width, "20%");
  assert.equal(body.rows[1].cells[2].childNodes.length, 2); // the bar and one text

  // fewer rows, then more
  patchBody(doc, body, bodyCells(next.slice(0, 1), columns, sort));
  assert.deepEqual(texts(body), [["Linear", "41", "50.0 %"]]);
  patchBody(doc, body, bodyCells([...next, { label: "Sequential", calls: 1, share: null }], columns, sort));
  assert.deepEqual(texts(body), [["Linear", "41", "50.0 %"], ["ReLU", "20", "20.0 %"], ["Sequential", "1", ""]]);
  assert.equal(body.rows[2].cells[2].firstChild.style.width, "0%");
});
