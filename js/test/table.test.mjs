import { test } from "node:test";
import assert from "node:assert/strict";
import { bodyCells, headKey, nextSort, patchBody, renderTable, rowOrder } from "../src/table.js";
import { fakeDocument } from "./helpers.mjs";

// a report's `table` as views/table/table_rows.py's table_dict sends it (rows in total_ms order)
const col = (key, header, align = "right", bar = false) => ({ key, label: header, unit: "", align, header, bar });
const TABLE = {
  columns: [col("label", "name", "left"), col("calls", "calls"), col("total_ms", "total ms"), col("share", "share", "left", true)],
  rows: [
    { texts: ["Sequential", "20", "12.000", "60.0%"], bar: 60 },
    { texts: ["Linear", "40", "9.250", "46.3%"], bar: 46.25 },
    { texts: ["ReLU", "20", "1.500", "7.5%"], bar: 7.5 },
    { texts: ["gpu", "1", "–", "0.0%"], bar: 0 },
  ],
  order: {
    total_ms: { descending: [0, 1, 2, 3], ascending: [2, 1, 0, 3] },
    calls: { descending: [1, 2, 0, 3], ascending: [3, 2, 0, 1] },
  },
  sort_by: "total_ms",
  descending: true,
};
const names = (cells) => cells.map((row) => row[0].text);

test("rows take the kernel's order for the sorted column, either way; no rules of their own", () => {
  assert.deepEqual(names(bodyCells(TABLE, { sortBy: "total_ms", descending: true })), ["Sequential", "Linear", "ReLU", "gpu"]);
  assert.deepEqual(names(bodyCells(TABLE, { sortBy: "total_ms", descending: false })), ["ReLU", "Linear", "Sequential", "gpu"]);
  assert.deepEqual(names(bodyCells(TABLE, { sortBy: "calls", descending: false })), ["gpu", "ReLU", "Sequential", "Linear"]);
  // a column the kernel sent no order for: the rows as they came
  assert.deepEqual(rowOrder(TABLE, { sortBy: "label", descending: true }), [0, 1, 2, 3]);
  // an order of another length (a stale table) is not trusted
  assert.deepEqual(rowOrder({ ...TABLE, order: { calls: { descending: [1, 0] } } }, { sortBy: "calls", descending: true }), [0, 1, 2, 3]);
});

test("cells are the kernel's texts; the bar column carries the bar's width", () => {
  const cells = bodyCells(TABLE, { sortBy: "total_ms", descending: true });
  assert.deepEqual(cells[3].map((c) => c.text), ["gpu", "1", "–", "0.0%"]);
  assert.deepEqual(cells[1].map((c) => c.bar), [null, null, null, 46.25]);
});

test("nextSort flips the same column and starts a new one descending", () => {
  assert.deepEqual(nextSort({ sortBy: "total_ms", descending: true }, "total_ms"), { sortBy: "total_ms", descending: false });
  assert.deepEqual(nextSort({ sortBy: "total_ms", descending: false }, "calls"), { sortBy: "calls", descending: true });
});

test("headKey: the same columns and sort give the same head", () => {
  const sort = { sortBy: "total_ms", descending: true };
  const key = headKey(TABLE, sort);
  assert.equal(headKey({ ...TABLE }, { ...sort }), key);
  assert.notEqual(headKey(TABLE, { ...sort, descending: false }), key);
  assert.notEqual(headKey({ ...TABLE, columns: TABLE.columns.slice(1) }, sort), key);
  const renamed = { ...TABLE, columns: [col("label", "module [path]", "left"), ...TABLE.columns.slice(1)] };
  assert.notEqual(headKey(renamed, sort), key);
});

test("renderTable: the kernel's headers, alignment and the sort arrow", () => {
  const doc = fakeDocument();
  const sorted = [];
  const el = renderTable(doc, TABLE, { sortBy: "calls", descending: false }, (k) => sorted.push(k));
  const [thead, tbody] = el.childNodes;
  const heads = thead.rows[0].cells;
  assert.deepEqual(heads.map((th) => th.textContent), ["name", "calls ▲", "total ms", "share"]);
  assert.deepEqual(heads.map((th) => th.className || ""), ["", "everyo-num", "everyo-num", ""]);
  assert.deepEqual(tbody.rows.map((tr) => tr.cells[0].textContent), ["gpu", "ReLU", "Sequential", "Linear"]);
  assert.equal(tbody.rows[0].cells[1].className, "everyo-num");
  heads[2].fire("click");
  assert.deepEqual(sorted, ["total_ms"]);
});

const texts = (body) => body.rows.map((tr) => tr.cells.map((td) => td.textContent));
const table = (rows) => ({ ...TABLE, rows, order: {} });

test("patchBody reuses rows and cells and writes only what changed", () => {
  const doc = fakeDocument();
  const body = doc.createElement("tbody");
  const sort = { sortBy: "calls", descending: true };
  const two = [{ texts: ["Linear", "40", "1.000", "50.0%"], bar: 50 }, { texts: ["ReLU", "20", "0.200", "10.0%"], bar: 10 }];
  assert.equal(patchBody(doc, body, bodyCells(table(two), sort)), 8);
  assert.deepEqual(texts(body), [["Linear", "40", "1.000", "50.0%"], ["ReLU", "20", "0.200", "10.0%"]]);
  const shareCell = body.rows[0].cells[3];
  assert.equal(shareCell.firstChild.className, "everyo-share-bar");
  assert.equal(shareCell.firstChild.style.width, "50%");
  const first = body.rows[0];
  const inserted = doc.inserted;

  const next = [{ texts: ["Linear", "41", "1.000", "50.0%"], bar: 50 }, { texts: ["ReLU", "20", "0.200", "20.0%"], bar: 20 }];
  assert.equal(patchBody(doc, body, bodyCells(table(next), sort)), 2); // two cells changed
  assert.equal(doc.inserted, inserted); // their texts rewritten in place: no node added
  assert.equal(body.rows[0], first);
  assert.deepEqual(texts(body), [["Linear", "41", "1.000", "50.0%"], ["ReLU", "20", "0.200", "20.0%"]]);
  assert.equal(body.rows[1].cells[3].firstChild.style.width, "20%");
  assert.equal(body.rows[1].cells[3].childNodes.length, 2); // the bar and one text

  // fewer rows, then more
  patchBody(doc, body, bodyCells(table(next.slice(0, 1)), sort));
  assert.deepEqual(texts(body), [["Linear", "41", "1.000", "50.0%"]]);
  patchBody(doc, body, bodyCells(table([...next, { texts: ["Sequential", "1", "–", "0.0%"], bar: 0 }]), sort));
  assert.deepEqual(texts(body), [["Linear", "41", "1.000", "50.0%"], ["ReLU", "20", "0.200", "20.0%"], ["Sequential", "1", "–", "0.0%"]]);
  assert.equal(body.rows[2].cells[3].firstChild.style.width, "0%");
});
