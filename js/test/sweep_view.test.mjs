import { test } from "node:test";
import assert from "node:assert/strict";
import { buttonStates, progressLine, progressText, renderSweepTable, tableRows } from "../src/sweep_view.js";
import { fakeDocument } from "./helpers.mjs";
import { HAVE_ESBUILD, bundle } from "../build.mjs";

const needsEsbuild = { skip: !HAVE_ESBUILD && 'esbuild is not installed: run "npm ci" in js/' };

const report = {
  status: "completed",
  rows: [
    { batch_size: 1, status: "ok", message: "", throughput: 100, median_ms: 10, p5_ms: 9, p95_ms: 12, peak_memory: 1048576, gpu_memory: null },
    { batch_size: 8, status: "ok", message: "", throughput: 790, median_ms: 10.1, p5_ms: 9.5, p95_ms: 11, peak_memory: 2097152, gpu_memory: 3145728 },
    { batch_size: 64, status: "oom", message: "MemoryError: out", throughput: null, median_ms: null, p5_ms: null, p95_ms: null, peak_memory: null, gpu_memory: null },
  ],
  recommendation: { recommended: 8, largest_fit: 8, best: 8, text: "Batch size 8 is recommended" },
  // the kernel's texts (views/sweep/sweep_report.py: table_cells), shown as they are
  headers: ["batch", "status", "samples/s", "median ms", "p5 ms", "p95 ms", "peak MiB", "note"],
  cells: [
    ["1", "ok", "100.0", "10.0000", "9.0000", "12.0000", "1.00", ""],
    ["8", "ok", "790.0", "10.1000", "9.5000", "11.0000", "3.00", "best, recommended, largest fit"],
    ["64", "oom", "–", "–", "–", "–", "–", "MemoryError: out"],
  ],
};

test("the progress line names the point being measured, as the Python report does", () => {
  assert.equal(progressText({ index: 4, total: 9, batch_size: 64 }, 2.14), "point 4 of 9, batch 64, 2.1 s");
  assert.equal(progressText({ index: 3, total: null, batch_size: 4 }, -1), "point 3, batch 4, 0.0 s");
  const rechecking = { index: 7, total: 7, batch_size: 8, rechecking: [8, 16, 32] };
  assert.equal(progressText(rechecking, 1.25), "re-measuring batch 8, 16, 32 interleaved, 1.3 s");
  const running = { status: "running", rows: [{}], progress: { index: 2, total: 5, batch_size: 2 } };
  assert.equal(progressLine(running, 0.25), "point 2 of 5, batch 2, 0.3 s");
  assert.equal(progressLine({ status: "running", rows: [{}, {}] }), "2 points measured");
  assert.equal(progressLine(report), "3 points measured");
  assert.equal(progressLine({ status: "stopped", rows: [{}] }), "stopped after 1 point; the other sizes were not measured");
  assert.equal(progressLine({ status: "failed", rows: [], error: "RuntimeError: x" }), "failed after 0 points: RuntimeError: x");
  assert.equal(progressLine({ status: "ready", rows: [] }), "not started");
  assert.equal(progressLine(undefined), "not started");
});

test("Run while idle, Stop while running", () => {
  assert.deepEqual(buttonStates(false), { run: true, stop: false, stopTitle: "" });
  assert.deepEqual(buttonStates(true), { run: false, stop: true, stopTitle: "" });
  const inCell = buttonStates(true, "interrupt the kernel to stop it");
  assert.deepEqual(inCell, { run: false, stop: false, stopTitle: "interrupt the kernel to stop it" });
});

test("table rows: the kernel's cells as they are, failed and recommended rows marked", () => {
  const rows = tableRows(report);
  assert.deepEqual(rows.map((r) => r.cells), report.cells);
  assert.deepEqual(rows.map((r) => r.cls), ["", "recommended", "failed"]);
  assert.equal(rows[2].title, "MemoryError: out");
  assert.deepEqual(tableRows({}), []);
});

test("the sweep bundle is a small self-contained ES module with the shared plotly loader", needsEsbuild, async () => {
  const text = bundle("sweep", "src/sweep_widget.js");
  assert.match(text.split("\n")[0], /^\/\/ everyo-lab \d+\.\d+\.\d+ \| sweep\.js \| sources sha256:[0-9a-f]{16}/);
  assert.ok(text.length < 30000, `${text.length} bytes`);
  assert.match(text, /__everyoPlotly/); // the page-wide cache the dashboard uses too
  const mod = await import(`data:text/javascript;base64,${Buffer.from(text).toString("base64")}`);
  assert.equal(typeof mod.default.render, "function");
  assert.equal(typeof mod.default.initialize, "function");
});

test("tableRows marks a point the kernel does not trust and says why", () => {
  const ok = { status: "ok", throughput: 1000, median_ms: 1, p5_ms: 1, p95_ms: 1, peak_memory: 1 };
  const report = {
    recommendation: { recommended: 64, best: 64, largest_fit: 64 },
    rows: [
      { ...ok, batch_size: 16, flag: "unreliable", note: "unreliable: rounds disagree" },
      { ...ok, batch_size: 32, flag: "contended", note: "measured on a contended machine" },
      { ...ok, batch_size: 64, flag: null, note: "re-measured (first reading 9 samples/s)" },
    ],
  };
  const [a, b, c] = tableRows(report);
  assert.equal(a.cls, "flagged");
  assert.equal(b.cls, "flagged");
  assert.match(b.title, /contended machine/);
  assert.equal(c.cls, "recommended");
});

test("the table element shows the kernel's headers and cells", () => {
  const table = renderSweepTable(fakeDocument(), report);
  const [thead, tbody] = table.childNodes;
  assert.deepEqual(thead.childNodes[0].childNodes.map((th) => th.textContent), report.headers);
  assert.deepEqual(tbody.childNodes.map((tr) => tr.childNodes.map((td) => td.textContent)), report.cells);
});
