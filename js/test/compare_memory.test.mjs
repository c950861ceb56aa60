import { test } from "node:test";
import assert from "node:assert/strict";
import { compareHeadline, diffCell, sharedExtent, stepsVerdictText } from "../src/compare_view.js";
import { NO_VALUE } from "../src/schema.js";
import { MARGIN } from "../src/figure.js";
import { memoryLayout, memoryTraces, peakText } from "../src/memory_view.js";
import { renderComparePicker } from "../src/picker.js";

test("diff cells and columns are the kernel's texts; a cell it did not spell reads as no value", async () => {
  const { renderDiffTable } = await import("../src/compare_view.js");
  const { fakeDocument } = await import("./helpers.mjs");
  const row = { verdict: "negligible change", why: "slower beyond noise but not relevant", texts: { label: "Linear [0]", ratio: "1.03×", verdict: "negligible change" } };
  assert.equal(diffCell(row, "ratio"), "1.03×");
  assert.equal(diffCell(row, "delta_ms"), NO_VALUE);
  const columns = [{ key: "label", header: "name" }, { key: "ratio", header: "B/A median" }, { key: "verdict", header: "verdict" }];
  const [thead, tbody] = renderDiffTable(fakeDocument(), [row], columns).childNodes;
  assert.deepEqual(thead.rows[0].cells.map((c) => c.textContent), ["name", "B/A median", "verdict"]);
  const cells = tbody.rows[0].cells;
  assert.deepEqual(cells.map((c) => c.textContent), ["Linear [0]", "1.03×", "negligible change"]);
  assert.equal(cells[2].className, "everyo-verdict everyo-verdict-negligible-change");
  assert.equal(cells[2].title, row.why);
});

test("compare header and per-step verdict are the kernel's texts; the shared time axis", () => {
  const c = { a: { label: "before", wall_ms: 12.3 }, b: { label: "after", wall_ms: 8.2 },
    headline: "before 12.300 ms → after 8.200 ms (failed): wall time 1.50× faster",
    steps_text: "per step (median): faster (1.41×, 95% CI 1.30–1.52) over 20 and 21 steps" };
  assert.equal(compareHeadline(c), c.headline); // shown as it is: no speed-up computed here
  assert.equal(stepsVerdictText(c), c.steps_text);
  assert.equal(stepsVerdictText({}), "");
  assert.equal(sharedExtent(c), 12.3);
});

test("memory: the kernel's peak text, traces and a layout aligned with the flame chart", () => {
  const memory = { track: "host tensor bytes", t_ms: [0.1, 0.5, 0.9], bytes: [10, 30, 20], peak: { t_ms: 0.5, bytes: 30000, label: "Linear [2]" } };
  assert.equal(peakText(memory), ""); // no words from the kernel: none made up here
  memory.peak_text = "peak 30.0 kB at 0.500 ms · Linear [2]";
  assert.equal(peakText(memory), memory.peak_text);
  const [line, peak] = memoryTraces(memory);
  assert.equal(line.line.shape, "hv"); // live bytes hold until the next allocation
  assert.deepEqual(line.x, memory.t_ms);
  assert.deepEqual(peak.x, [0.5]);
  const layout = memoryLayout({ memory, x0: 0.2, x1: 0.7, width: 800 });
  assert.deepEqual(layout.xaxis.range, [0.2, 0.7]);
  assert.equal(layout.margin.l, MARGIN.l); // the plot areas line up with the flame chart's
  assert.equal(layout.margin.r, MARGIN.r);
  assert.equal(layout.width, 800);
  assert.match(layout.annotations[0].text, /Linear \[2\]/);
});

test("renderComparePicker lists the other runs and 'nothing'", () => {
  const made = [];
  const el = (tag) => {
    const node = { tag, children: [], attrs: {}, appendChild(c) { this.children.push(c); }, addEventListener() {} };
    made.push(node);
    return node;
  };
  const doc = { createElement: el };
  const runs = [{ id: "1", label: "a", start_time: 1 }, { id: "2", label: "b", start_time: 2 }, { id: "3", label: "a", start_time: 3 }];
  const select = renderComparePicker(doc, runs, "2", "3", () => {});
  const options = made.filter((n) => n.tag === "option");
  assert.deepEqual(options.map((o) => o.value), ["", "3", "1"]);
  assert.equal(options.find((o) => o.value === "3").selected, true);
  assert.equal(select.children[0].value, "");
});


