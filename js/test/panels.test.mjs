import { test } from "node:test";
import assert from "node:assert/strict";
import { patchHeader, renderHeader } from "../src/header.js";
import { mountSteps } from "../src/steps.js";
import { mountIcicle, themedLayout } from "../src/sections.js";
import { setText } from "../src/text.js";
import { figureColors } from "../src/theme.js";
import { fakeDocument } from "./helpers.mjs";

test("setText rewrites a lone text node in place and writes nothing when the text is the same", () => {
  const doc = fakeDocument();
  const el = doc.createElement("td");
  assert.equal(setText(el, "1.00"), true);
  const node = el.firstChild;
  const inserted = doc.inserted;
  assert.equal(setText(el, "2.00"), true);
  assert.equal(el.firstChild, node); // the same node, its data changed
  assert.equal(el.textContent, "2.00");
  assert.equal(doc.inserted, inserted);
  assert.equal(setText(el, "2.00"), false);
  // an element with other children is replaced by the text
  const b = doc.createElement("b");
  el.append(b);
  assert.equal(setText(el, "x"), true);
  assert.equal(el.textContent, "x");
  assert.equal(el.childNodes.length, 1);
});

const live = (wall, events) => ({
  run_id: "r1", label: "train", status: "running", wall_ms: wall, events,
  hot_spots: [{ label: "Linear [0]", self_ms: 1.5, share: 0.25 }], start_iso: "2026-12-02T10:00:00",
  texts: { wall: `${wall} ms`, events: `${events} events`, hot_spots: ["Linear [0] 1.500 ms (25.0%)"] },
});

test("patchHeader keeps the header of a run and rewrites its texts", () => {
  const doc = fakeDocument();
  const div = renderHeader(doc, live(100, 10));
  assert.equal(div.textContent, "train · running · 100 ms · 10 events · hot spots (self time): Linear [0] 1.500 ms (25.0%)");
  assert.equal(div.title, "started 2026-12-02T10:00:00");
  const inserted = doc.inserted;
  const same = patchHeader(doc, div, live(250, 12));
  assert.equal(same, div);
  assert.equal(doc.inserted, inserted); // no node added: texts written in place
  assert.match(div.textContent, /^train · running · 250 ms · 12 events/);
  // a final report with an error: the same header, its text says so
  const done = patchHeader(doc, div, { ...live(300, 12), status: "failed", error: "ValueError: x" });
  assert.equal(done, div);
  assert.match(div.textContent, /failed \(ValueError: x\)/);
});

test("patchHeader gives a new header between 'no run yet' and a run", () => {
  const doc = fakeDocument();
  const empty = renderHeader(doc, {});
  assert.match(empty.textContent, /No run yet/);
  const run = patchHeader(doc, empty, live(1, 1));
  assert.notEqual(run, empty);
  assert.match(run.textContent, /^train · running/);
  const back = patchHeader(doc, run, null);
  assert.notEqual(back, run);
  assert.match(back.textContent, /No run yet/);
});

const steps = (count, slowest, extra = {}) => ({
  count, source: "optimizer", mean_ms: 2, median_ms: 1.9, p95_ms: 3,
  median: { index: 1, dur_ms: 1.9, start_ms: 2, end_ms: 3.9 },
  slowest: { index: slowest, dur_ms: 5, start_ms: 10 * slowest, end_ms: 10 * slowest + 5 },
  ...extra,
});

test("mountSteps updates its summary, rows and input in place", () => {
  const doc = fakeDocument();
  const zooms = [];
  const panel = mountSteps(doc, { onZoom: (w) => zooms.push(w), stepWindowOf: (k) => [k, k + 1] });
  const words = { steps: "10 steps (optimizer): median 1.9 ms", step_durations: { median: "1.9 ms", slowest: "5.0 ms" } };
  panel.update(steps(10, 4), words);
  const [line, table] = panel.el.childNodes;
  const [summary, go, input] = line.childNodes;
  assert.equal(summary.textContent, "10 steps (optimizer): median 1.9 ms"); // the kernel's words
  assert.deepEqual(table.childNodes[1].rows.map((tr) => tr.cells[2].textContent), ["1.9 ms", "5.0 ms"]);
  assert.equal(input.max, "9");
  assert.equal(input.value, "4");
  const body = table.childNodes[1];
  assert.deepEqual(body.rows.map((tr) => tr.dataset.what), ["median", "slowest"]);
  const slowRow = body.rows[1];
  const button = slowRow.cells[3].firstChild;

  const inserted = doc.inserted;
  panel.update(steps(20, 7));
  assert.equal(doc.inserted, inserted); // same rows, cells and text nodes
  assert.equal(body.rows[1], slowRow);
  assert.equal(slowRow.cells[1].textContent, "#7");
  assert.equal(input.max, "19");
  assert.equal(input.value, "7"); // follows the slowest step until the user types
  assert.equal(button.title, "Zoom the flame chart to step 7");
  button.fire("click");
  assert.deepEqual(zooms.pop().map((x) => Math.round(x * 100) / 100), [69.75, 75.25]); // step 7 now

  // the user types a step: later updates keep it, and the zoom button uses it
  input.value = "3";
  input.fire("input");
  panel.update(steps(30, 9));
  assert.equal(input.value, "3");
  go.fire("click");
  assert.deepEqual(zooms.pop(), [3, 4]);

  // a row more (p95), then fewer
  panel.update(steps(30, 9, { p95: { index: 5, dur_ms: 4, start_ms: 50, end_ms: 54 } }));
  assert.deepEqual(body.rows.map((tr) => tr.dataset.what), ["median", "p95", "slowest"]);
  panel.update({ count: 1, median_ms: 1 });
  assert.equal(body.rows.length, 0);
});

test("mountTable: live numbers with the first report LIVE_TABLE_MS after the last; final and sort at once", async () => {
  const { mountTable, LIVE_TABLE_MS } = await import("../src/sections.js");
  const doc = fakeDocument();
  const state = { group_by: "name", sort_by: "total_ms", descending: true };
  const model = { get: (k) => state[k], set: (k, v) => { state[k] = v; }, save_changes() {}, on() {} };
  let clock = 0;
  const cols = [{ key: "label", header: "name", align: "left" }, { key: "calls", header: "calls", align: "right" }, { key: "total_ms", header: "total ms", align: "right" }];
  const tableOf = (rows) => ({
    columns: cols,
    rows: rows.map(([label, calls, ms]) => ({ texts: [label, String(calls), ms.toFixed(2)], bar: null })),
    order: { calls: { descending: rows.map((_, i) => i).sort((i, j) => rows[j][1] - rows[i][1]) } },
  });
  const report = (ms, live = true) => ({ live, total: ms, table: tableOf([["Linear", 1, ms]]) });
  state.report = report(1);
  const table = mountTable(doc, model, { now: () => clock });
  const shown = () => table.el.textContent;
  assert.match(shown(), /1\.00/);
  state.report = report(2);
  table.update(); // the first live numbers: written at once
  assert.match(shown(), /2\.00/);
  clock = 100;
  state.report = report(3);
  table.update();
  clock = LIVE_TABLE_MS - 1;
  state.report = report(4);
  table.update();
  assert.match(shown(), /2\.00/); // within the interval: not yet, and nothing left pending
  // the report the table shows is the one the header and steps box show (issue 33)
  assert.equal(table.shown().total, 2);
  clock = LIVE_TABLE_MS;
  state.report = report(5);
  table.update();
  assert.match(shown(), /5\.00/); // the first report after the interval: its numbers
  assert.equal(table.shown(), state.report);
  clock += 10;
  state.report = report(4, false); // the final report: at once
  table.update();
  assert.match(shown(), /4\.00/);
  clock += 10;
  state.report = report(6);
  clock += 10;
  table.update(); // live again (a new run in the same view): at once, the interval starts over
  assert.match(shown(), /6\.00/);
  clock += 10;
  state.report = { live: true, table: tableOf([["Linear", 1, 7], ["ReLU", 2, 1]]) };
  state.sort_by = "calls";
  table.update(); // a new sort: a new table at once
  assert.match(shown(), /7\.00/);
  assert.ok(shown().indexOf("ReLU") < shown().indexOf("Linear"));
});

test("the icicle takes the page's theme in the browser, the kernel's figure unchanged", () => {
  const themes = { light: { paper_bgcolor: "#fff", plot_bgcolor: "#fff", font_color: "#222", muted: "#777" },
    dark: { paper_bgcolor: "#111", plot_bgcolor: "#111", font_color: "#eee", muted: "#999" } };
  const layout = { paper_bgcolor: "#fff", font: { color: "#222", size: 12 }, width: 600, height: 360,
    annotations: [{ text: "no events", font: { size: 16, color: "#777" } }] };
  const dark = themedLayout(layout, figureColors(themes, "dark"));
  assert.equal(dark.paper_bgcolor, "#111");
  assert.equal(dark.plot_bgcolor, "#111");
  assert.deepEqual(dark.font, { color: "#eee", size: 12 });
  assert.equal(dark.annotations[0].font.color, "#999");
  assert.equal(dark.width, undefined);
  assert.equal(dark.height, 360);
  assert.equal(layout.paper_bgcolor, "#fff"); // not changed in place
  assert.equal(layout.annotations[0].font.color, "#777");
});

test("the icicle mounts, draws once plotly is there and redraws in a new theme, not twice", async () => {
  const themes = { light: { paper_bgcolor: "#fff" }, dark: { paper_bgcolor: "#111" } };
  const traits = { icicle: { data: [{ type: "icicle" }], layout: { paper_bgcolor: "#fff" } }, report: { live: false },
    theme: "light", themes };
  const model = { get: (name) => traits[name] };
  const drawn = [];
  const plotly = { react: (el, data, layout) => drawn.push(layout.paper_bgcolor), purge: () => drawn.push("purged") };
  const icicle = mountIcicle(fakeDocument(), model);
  assert.deepEqual(icicle.traits, ["icicle", "report", "theme", "themes"]);
  icicle.update();
  assert.equal(icicle.el.hidden, false);
  icicle.setPlotly(plotly);
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.deepEqual(drawn, ["#fff"]);
  icicle.update(); // nothing changed: no second draw
  await new Promise((resolve) => setTimeout(resolve, 5));
  traits.theme = "dark";
  icicle.update();
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.deepEqual(drawn, ["#fff", "#111"]);
  icicle.destroy();
  assert.deepEqual(drawn, ["#fff", "#111", "purged"]);
});
