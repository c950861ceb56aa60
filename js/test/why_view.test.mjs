import { test } from "node:test";
import assert from "node:assert/strict";
import { mountTable } from "../src/sections.js";
import { barTarget, framesOf, mountWhy, renderWhy, rowTarget, selectsRow } from "../src/why_view.js";
import { fakeDocument } from "./helpers.mjs";

// a panel as everyo_lab/views/why/why_panel.py writes it (texts exactly as the kernel sends them)
const PANEL = {
  state: "lines", title: "why 'work'", target: "work", live: true, status: "live: updated while the cell runs",
  summary: "117 calls · 603 ms · 1,166 samples at 0.5 ms (wall time)", hide: "everyo",
  toggle: "show everyo's frames", folded: "everyo's own frames folded", message: "",
  headers: ["self", "total", "line", "source"], function_headers: ["total", "self", "function"],
  functions: [{ function: "heavy", where: "app.py", file: "/x/app.py", total: "60.8 %", self: "0.2 %", bar: 0.608 }],
  lines: [
    { self: "99.4 %", total: "99.4 %", where: "app.py:29", function: "spin", source: "while t < end:", file: "/x/app.py:29", bar: 0.994 },
    { self: "0.2 %", total: "60.8 %", where: "app.py:34", function: "heavy", source: "spin(0.003)", file: "/x/app.py:34", bar: 0.002 },
  ],
  tree: {
    share: "100.0 %", where: "work", function: "work", source: "", bar: 1, more: "",
    children: [{ share: "60.8 %", where: "app.py:52", function: "planted", source: "heavy()", bar: 0.608, children: [], more: "2 smaller calls not shown" }],
  },
  expand: {
    caption: "its sampled frames (5.00 ms) are drawn in the flame chart, under its thread", rows: 2,
    bars: [
      { row: 0, left: 0, width: 0.6, text: "heavy", title: "heavy · app.py:34 · 3.00 ms (60.0 %)" },
      { row: 1, left: 0.05, width: 0.5, text: "spin", title: "spin · app.py:29 · 2.50 ms (50.0 %)" },
    ],
  },
  hint: "select a bar of the flame chart to expand one event into its sampled frames",
};

function find(el, className) {
  const out = [];
  const walk = (n) => {
    if (n.nodeType !== 1) return;
    if (String(n.className).split(" ").includes(className)) out.push(n);
    n.childNodes.forEach(walk);
  };
  walk(el);
  return out;
}

function fakeModel(state) {
  const listeners = {};
  return {
    state,
    sent: 0,
    get: (k) => state[k],
    set: (k, v) => { state[k] = v; },
    save_changes() { this.sent += 1; },
    on: (e, fn) => { (listeners[e] ||= []).push(fn); },
  };
}

test("renderWhy lays out the kernel's texts: lines, functions, the tree and an event's frames", () => {
  const doc = fakeDocument();
  const box = renderWhy(doc, PANEL);
  assert.equal(box.dataset.state, "lines");
  assert.equal(find(box, "everyo-why-title")[0].textContent, "why 'work'");
  assert.equal(find(box, "everyo-why-summary")[0].textContent, PANEL.summary);
  const [lines] = find(box, "everyo-why-lines");
  const first = lines.tBodies[0].rows[0];
  assert.deepEqual(first.cells.map((td) => td.textContent), ["99.4 %", "99.4 %", "app.py:29  spin", "while t < end:"]);
  assert.equal(first.cells[2].title, "/x/app.py:29"); // the full path on hover
  assert.equal(find(first, "everyo-share-bar")[0].style.width, "99.4%");
  const [fns] = find(box, "everyo-why-functions");
  assert.deepEqual(fns.tBodies[0].rows[0].cells.map((td) => td.textContent), ["60.8 %", "0.2 %", "heavy  (app.py)"]);
  // the tree: nested, open, each node's share and line as sent, and what was left out
  const nodes = find(box, "everyo-why-node");
  assert.equal(nodes.length, 2);
  assert.ok(nodes.every((n) => n.open));
  assert.match(nodes[1].textContent, /^60\.8 %app\.py:52plantedheavy\(\)2 smaller calls not shown$/);
  // one event's frames are drawn by the flame chart: the panel says so
  assert.deepEqual(find(box, "everyo-why-caption").map((c) => c.textContent), [PANEL.expand.caption, "call tree"]);
  assert.equal(find(box, "everyo-why-hint")[0].textContent, PANEL.hint);
});

test("an unsampled run's panel says how to get samples, with no empty tables", () => {
  const doc = fakeDocument();
  const message = "This run has no stack samples ... %%everyo_profile --sample ...";
  const box = renderWhy(doc, { state: "unsampled", title: "why 'work'", message });
  assert.equal(find(box, "everyo-why-message")[0].textContent, message);
  assert.equal(find(box, "everyo-table").length, 0);
  assert.equal(find(box, "everyo-why-toggle").length, 0);
  assert.equal(renderWhy(doc, {}), null); // nothing selected: no panel
});

test("mountWhy: the fold button flips why_all_frames, the close button clears the selection", () => {
  const doc = fakeDocument();
  const model = fakeModel({ why: {}, why_all_frames: false, why_target: {} });
  const why = mountWhy(doc, model);
  assert.equal(why.el.hidden, true);
  why.select({ type: "row", name: "work" });
  assert.deepEqual(model.state.why_target, { type: "row", name: "work" });
  model.state.why = PANEL;
  why.update();
  assert.equal(why.el.hidden, false);
  find(why.el, "everyo-why-toggle")[0].fire("click");
  assert.equal(model.state.why_all_frames, true);
  find(why.el, "everyo-why-close")[0].fire("click");
  assert.deepEqual(model.state.why_target, {});
  model.state.why = {};
  why.update();
  assert.equal(why.el.hidden, true);
});

test("a click on a table row selects that row (in the order shown) and marks it", () => {
  const doc = fakeDocument();
  const rows = [
    { label: "small", name: "small", kind: "user", total_ms: 1 },
    { label: "Linear [0]", name: "0", kind: "module", path: "0", total_ms: 9 },
  ];
  // the table as the kernel lays it out (views/table/table_rows.py table_dict): rows in the report's
  // order, and per column the order to show them in
  const col = (key, header, align = "right") => ({ key, label: header, unit: "", align, header, bar: false });
  const table = {
    columns: [col("label", "path", "left"), col("total_ms", "total ms")],
    rows: [{ texts: ["small", "1.000"], bar: 10 }, { texts: ["Linear [0]", "9.000"], bar: 90 }],
    order: { total_ms: { descending: [1, 0], ascending: [0, 1] } },
  };
  const model = fakeModel({
    group_by: "path", sort_by: "total_ms", descending: true, report: { rows, table }, why_target: {},
  });
  const picked = [];
  const mounted = mountTable(doc, model, { onSelect: (t) => picked.push(t) });
  const [holder] = find(mounted.el, "everyo-table-holder");
  const body = holder.firstChild.tBodies[0];
  holder.fire("click", { target: body.rows[0].cells[1] }); // the first row shown: the biggest
  assert.deepEqual(picked, [{ type: "row", group_by: "path", kind: "module", name: "0", label: "Linear [0]" }]);
  model.state.why_target = picked[0];
  mounted.mark();
  assert.deepEqual(body.rows.map((tr) => tr.className), ["everyo-selected", ""]);
  holder.fire("click", { target: holder.firstChild.childNodes[0] }); // the head: no selection
  assert.equal(picked.length, 1);
});

test("rowTarget and selectsRow agree, shapes included", () => {
  const row = { name: "Linear", kind: "module", label: "Linear", shapes: "[(3, 4)] -> (3, 8)" };
  const target = rowTarget(row, "shape");
  assert.equal(target.shapes, row.shapes);
  assert.ok(selectsRow(target, row, "shape"));
  assert.ok(!selectsRow(target, { ...row, shapes: "[(3, 8)] -> (3, 2)" }, "shape"));
  assert.ok(!selectsRow(target, row, "name"));
});

test("barTarget: one event, every event of a merged bar's name, nothing for a mixed bar", () => {
  const info = { kind: "user", name: "work", path: "", label: "work" };
  const lane = { thread: 1, depth: 2 };
  assert.deepEqual(barTarget({ start: 1.5, end: 2.5, count: 1 }, lane, info), {
    type: "bar", thread: 1, depth: 2, start_ms: 1.5, end_ms: 2.5, kind: "user", name: "work", path: "", label: "work",
  });
  assert.deepEqual(barTarget({ start: 1, end: 9, count: 40 }, lane, info), {
    type: "row", group_by: "name", kind: "user", name: "work", label: "work",
  });
  assert.equal(barTarget({ start: 1, end: 9, count: 40 }, lane, null), null);
});

test("while the run records, a selection shows its row's live panel (a bar: its name's row)", async () => {
  const { livePanel } = await import("../src/why_view.js");
  const live = {
    panels: [
      { key: { group_by: "name", kind: "user", name: "work" }, panel: PANEL },
      { key: { group_by: "name", kind: "user", name: "step" }, panel: { ...PANEL, title: "why 'step'" } },
    ],
    other: "while the cell runs, the hot lines of the table's first 3 rows are kept up to date; this one's come when the cell ends",
  };
  assert.equal(livePanel(live, rowTarget({ kind: "user", name: "step" }, "name")).title, "why 'step'");
  const bar = barTarget({ start: 1, end: 2, count: 1 }, { thread: 0, depth: 0 }, { kind: "user", name: "work", path: "", label: "work" });
  assert.equal(livePanel(live, bar), PANEL);
  const other = livePanel(live, rowTarget({ kind: "user", name: "rare", label: "rare" }, "name"));
  assert.deepEqual(other, { state: "pending", title: "rare", message: live.other });
  assert.equal(livePanel({}, bar), null);

  // mounted: the live entry while there is one, then the kernel's answer, the last one meanwhile
  const doc = fakeDocument();
  const model = fakeModel({ why: {}, why_live: live, why_target: {} });
  const why = mountWhy(doc, model);
  why.select(rowTarget({ kind: "user", name: "work", label: "work" }, "name"));
  assert.equal(find(why.el, "everyo-why-title")[0].textContent, "why 'work'");
  model.state.why_live = {}; // the run ended; the kernel has not answered the selection yet
  why.update();
  assert.equal(why.el.hidden, false);
  model.state.why = { ...PANEL, status: "", summary: "final" };
  why.update();
  assert.equal(find(why.el, "everyo-why-summary")[0].textContent, "final");
});

test("a selected bar's frames go to the flame chart, placed under its thread's band in its span", async () => {
  const { FlameView } = await import("../src/flame_view.js");
  const doc = fakeDocument();
  const model = fakeModel({ why: {}, why_target: {} });
  const given = [];
  const why = mountWhy(doc, model, { onFrames: (f) => given.push(f) });
  const bar = barTarget({ start: 10, end: 15, count: 1 }, { thread: 1, depth: 0 }, { kind: "user", name: "work", path: "", label: "work" });
  why.select(bar);
  model.state.why = PANEL;
  why.update();
  const frames = given[given.length - 1];
  assert.deepEqual([frames.thread, frames.start, frames.end, frames.rows], [1, 10, 15, 2]);
  // laid out: x by the fractions of [10, 15] ms, rows from the band's first free row
  const map = { w: 1000, x: (t) => t * 10, rowTop: (r) => r * 20, rowHeight: 18 };
  const drawn = FlameView.prototype.frameBars.call({}, { frames: { ...frames, row0: 4 } }, map);
  assert.deepEqual(drawn.map((f) => [f.x0, f.x1, f.row, f.bar.text]), [[100, 130, 4, "heavy"], [102.5, 127.5, 5, "spin"]]);
  // a row selection has no frames to draw: the chart collapses them
  why.select(rowTarget({ kind: "user", name: "work", label: "work" }, "name"));
  model.state.why = { ...PANEL, expand: null };
  why.update();
  assert.equal(given[given.length - 1], null);
});

test("the selection is the why_target trait: a new view keeps it, the kernel's clearing hides the panel", () => {
  const doc = fakeDocument();
  const target = rowTarget({ kind: "user", name: "work", label: "work" }, "name");
  const model = fakeModel({ why: PANEL, why_target: target });
  const again = mountWhy(doc, model); // a new view of a widget whose row was selected
  assert.equal(again.el.hidden, false);
  model.state.why_target = {}; // another run shown: the kernel clears the selection
  model.state.why = {};
  again.update();
  assert.equal(again.el.hidden, true);
});

// the panel of a run without events (everyo_lab/views/why/why_panel.py tree_bars): its call tree over the run
const RUN_PANEL = {
  ...PANEL, title: "where the time went: the run (sampled call tree)", hint: undefined,
  expand: {
    caption: "its sampled call tree is drawn in the flame chart", rows: 2, start_ms: 0, end_ms: 400,
    bars: [
      { row: 0, left: 0, width: 1, text: "<module>", title: "<module> · app.py:1 · 400 ms (100.0 %)" },
      { row: 1, left: 0, width: 0.75, text: "fn1", title: "fn1 · app.py:11 · 300 ms (75.0 %)" },
    ],
  },
};

test("a run's sampled call tree goes to the flame chart as a band of no thread, over the run's time", async () => {
  const { FlameView } = await import("../src/flame_view.js");
  const doc = fakeDocument();
  const model = fakeModel({ why: {}, why_target: { type: "outside", label: "the run" } });
  const given = [];
  const why = mountWhy(doc, model, { onFrames: (f) => given.push(f) });
  model.state.why = RUN_PANEL;
  why.update();
  const frames = given[given.length - 1];
  assert.deepEqual([frames.thread, frames.start, frames.end, frames.rows], [null, 0, 400, 2]);
  const map = { w: 800, x: (t) => t * 2, rowTop: (r) => r * 20, rowHeight: 18 };
  const drawn = FlameView.prototype.frameBars.call({}, { frames: { ...frames, row0: 0 } }, map);
  assert.deepEqual(drawn.map((f) => [f.x0, f.x1, f.row, f.bar.text]), [[0, 800, 0, "<module>"], [0, 600, 1, "fn1"]]);
  // a row selection's panel has no tree to draw; an outside panel without one draws nothing
  assert.equal(framesOf(RUN_PANEL, rowTarget({ kind: "user", name: "work" }, "name")), null);
  assert.equal(framesOf({ ...RUN_PANEL, expand: null }, { type: "outside" }), null);
});

test("the outside panel is the why trait, also while the live rows' panels are there", () => {
  const doc = fakeDocument();
  const live = { panels: [{ key: { group_by: "name", kind: "user", name: "work" }, panel: PANEL }], other: "later" };
  const model = fakeModel({ why: RUN_PANEL, why_live: live, why_target: { type: "outside", label: "the run" } });
  const why = mountWhy(doc, model);
  assert.equal(find(why.el, "everyo-why-title")[0].textContent, RUN_PANEL.title);
});

test("the link to the time outside every event shows the kernel's text and selects that panel", () => {
  const doc = fakeDocument();
  const model = fakeModel({ why: {}, why_target: {}, why_outside: {} });
  const picked = [];
  const why = mountWhy(doc, model);
  assert.equal(why.link.hidden, true);
  assert.ok(why.traits.includes("why_outside"));
  const target = { type: "outside", label: "time outside every event" };
  model.state.why_outside = { text: "58.0 % of the sampled time is outside every event: where it went", title: "open it", target };
  why.update();
  assert.equal(why.link.hidden, false);
  const button = find(why.link, "everyo-why-outside-link")[0];
  assert.equal(button.textContent, model.state.why_outside.text);
  button.fire("click");
  assert.deepEqual(model.state.why_target, target); // selected: the kernel answers with the panel
  assert.equal(why.link.hidden, true); // its panel is open: no link to it
  find(why.el, "everyo-why-close")[0]?.fire("click");
  model.state.why_target = {}; // closed: the link opens it again
  why.update();
  assert.equal(why.link.hidden, false);
  // the dashboard places the panel first (onOutside), then selects
  const placed = mountWhy(doc, fakeModel({ why_outside: model.state.why_outside }), { onOutside: (t) => picked.push(t) });
  find(placed.link, "everyo-why-outside-link")[0].fire("click");
  assert.deepEqual(picked, [target]);
  model.state.why_outside = {}; // another run: no link
  why.update();
  assert.equal(why.link.hidden, true);
});
