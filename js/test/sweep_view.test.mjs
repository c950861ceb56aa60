import { test } from "node:test";
import assert from "node:assert/strict";
import { buttonStates, pickNote, progressLine, progressText, tableRows, TABLE_HEADERS } from "../src/sweep_view.js";
import { bundle } from "../build.mjs";

const report = {
  status: "completed",
  rows: [
    { batch_size: 1, status: "ok", message: "", throughput: 100, median_ms: 10, p5_ms: 9, p95_ms: 12, peak_memory: 1048576, gpu_memory: null },
    { batch_size: 8, status: "ok", message: "", throughput: 790, median_ms: 10.1, p5_ms: 9.5, p95_ms: 11, peak_memory: 2097152, gpu_memory: 3145728 },
    { batch_size: 64, status: "oom", message: "MemoryError: out", throughput: null, median_ms: null, p5_ms: null, p95_ms: null, peak_memory: null, gpu_memory: null },
  ],
  recommendation: { recommended: 8, largest_fit: 8, best: 8, text: "Batch size 8 is recommended" },
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

test("table rows: formatted cells, GPU memory first, failed and recommended rows marked", () => {
  const rows = tableRows(report);
  assert.equal(rows.length, 3);
  assert.equal(rows[0].cells.length, TABLE_HEADERS.length);
  assert.deepEqual(rows[0].cells, ["1", "ok", "100.0", "10.0000", "9.0000", "12.0000", "1.00", ""]);
  assert.equal(rows[1].cls, "recommended");
  assert.equal(rows[1].cells[6], "3.00"); // gpu_memory wins
  assert.equal(rows[1].cells[7], "best, recommended, largest fit");
  assert.equal(rows[2].cls, "failed");
  assert.equal(rows[2].title, "MemoryError: out");
  assert.deepEqual(rows[2].cells.slice(2, 7), ["–", "–", "–", "–", "–"]);
  assert.equal(rows[2].cells[7], "MemoryError: out");
  assert.deepEqual(tableRows({}), []);
  assert.equal(pickNote(1, report.recommendation), "");
});

test("the sweep bundle is a small self-contained ES module with the shared plotly loader", async () => {
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
  assert.equal(a.cells[7], "! unreliable, unreliable: rounds disagree");
  assert.equal(b.cls, "flagged");
  assert.match(b.title, /contended machine/);
  assert.equal(c.cls, "recommended");
  assert.equal(c.cells[7], "best, recommended, largest fit, re-measured (first reading 9 samples/s)");
});
