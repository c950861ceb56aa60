// The comparison of two runs: header (both wall times, speed-up, per-step verdict), the flame
// charts of A and B stacked on one time axis (each zoom or pan moves both), and the diff table
// with a verdict per row. Numbers and their texts come from the `comparison` trait
// (views/compare/compare_view.py; nothing here formats a figure); A's
// events from the model's second store (messages tagged with `compare_id`).
import { FlameView } from "./flame_view.js";
import { NO_VALUE } from "./schema.js";

/** The text of one diff cell: the kernel's (views/compare/compare_view.py: diff_texts), as every rendering
 * of the comparison shows it. */
export function diffCell(row, key) {
  const texts = row.texts || {};
  return key in texts ? String(texts[key]) : NO_VALUE;
}

/** The header line and the per-step verdict: the kernel's texts (views/compare/compare_view.py), shown as
 * they are, so the widget, the static HTML and the text say the same ("" when absent). */
export function compareHeadline(c) {
  return String(c.headline || "");
}

export function stepsVerdictText(c) {
  return String(c.steps_text || "");
}

/** The time axis both charts share: to the longer run's end. */
export function sharedExtent(c) {
  return Math.max(Number(c.a && c.a.wall_ms) || 0, Number(c.b && c.b.wall_ms) || 0);
}

/** The diff table element: the kernel's columns and texts, rows in its order (biggest change
 * first). */
export function renderDiffTable(doc, rows, columns = []) {
  const table = doc.createElement("table");
  table.className = "everyo-table everyo-diff-table";
  const head = table.createTHead().insertRow();
  for (const { header } of columns) {
    const th = doc.createElement("th");
    th.textContent = header;
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    for (const { key } of columns) {
      const td = tr.insertCell();
      td.textContent = diffCell(row, key);
      if (key === "verdict") {
        td.className = `everyo-verdict everyo-verdict-${String(row.verdict).replace(/[^a-z]+/g, "-")}`;
        if (row.why) td.title = row.why;
      } else if (key !== "label") {
        td.className = "everyo-num";
      }
    }
  }
  return table;
}

function flameBox(doc, side) {
  const box = doc.createElement("div");
  box.className = "everyo-compare-flame";
  box.dataset.side = side;
  const title = doc.createElement("div");
  title.className = "everyo-compare-title";
  box.appendChild(title);
  return { box, title };
}

/**
 * The comparison section: `{el, update, schedule, setPlotly, destroy, traits}`. `state` holds
 * the model's stores: `store` (B, the shown run) and `compareStore` (A).
 */
export function mountCompare(doc, model, state) {
  const el = doc.createElement("div");
  el.className = "everyo-compare";
  el.hidden = true;
  const header = doc.createElement("div");
  header.className = "everyo-compare-header";
  const steps = doc.createElement("div");
  steps.className = "everyo-compare-steps";
  const a = flameBox(doc, "a");
  const b = flameBox(doc, "b");
  const tableHolder = doc.createElement("div");
  tableHolder.className = "everyo-diff-holder";
  const notes = doc.createElement("ul");
  notes.className = "everyo-notes";
  el.append(header, steps, a.box, b.box, tableHolder, notes);

  const comparison = () => model.get("comparison") || {};
  const sideReport = (side) => () => {
    const c = comparison();
    const run = c[side] || {};
    return { run_id: run.run_id || side, wall_ms: sharedExtent(c), live: false, events: run.events || 0 };
  };
  // The two charts exist only once there is a comparison: a dashboard of one run pays nothing
  // (no hidden plotly figures drawn when plotly.js arrives).
  let flames = null;
  let plotly = null;
  const makeFlames = () => {
    const flameA = new FlameView(doc, model, { get store() { return state.compareStore; } }, a.box, { report: sideReport("a") });
    const flameB = new FlameView(doc, model, { get store() { return state.store; } }, b.box, { report: sideReport("b") });
    a.box.appendChild(flameA.el);
    b.box.appendChild(flameB.el);
    // one time axis: the window either chart shows, the other shows too
    flameA.windowListeners.add((w) => flameB.setZoom(w));
    flameB.windowListeners.add((w) => flameA.setZoom(w));
    if (plotly) for (const f of [flameA, flameB]) f.setPlotly(plotly);
    return [flameA, flameB];
  };

  let shown = null;
  const update = () => {
    const c = comparison();
    el.hidden = !c.a || !c.b;
    if (el.hidden || c === shown) return;
    shown = c;
    if (!flames) flames = makeFlames();
    header.textContent = compareHeadline(c);
    steps.textContent = stepsVerdictText(c);
    steps.hidden = !c.steps;
    a.title.textContent = `A · ${c.a.label} · ${c.a.wall || ""}`;
    b.title.textContent = `B · ${c.b.label} · ${c.b.wall || ""}`;
    tableHolder.replaceChildren(renderDiffTable(doc, c.rows || [], c.columns || []));
    notes.replaceChildren(...(c.notes || []).map((text) => {
      const li = doc.createElement("li");
      li.textContent = text;
      return li;
    }));
    el.dataset.rows = String((c.rows || []).length);
    schedule();
  };
  const schedule = () => {
    if (el.hidden || !flames) return;
    for (const f of flames) f.schedule();
  };
  const setPlotly = (p) => {
    plotly = p;
    if (flames) for (const f of flames) f.setPlotly(p);
  };
  const destroy = () => {
    if (flames) for (const f of flames) f.destroy();
  };
  update();
  return { el, update, schedule, setPlotly, destroy, traits: ["comparison", "compare_id"] };
}
