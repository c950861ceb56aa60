// A training loop read by steps: step k (counted from 0) ends at step end k and starts at step
// end k - 1 (step 0 where the report's steps say, `first_start_ms`): the kernel's step rule
// (everyo/profiler/analysis/step_stats.py), read back, not made again. Zoom to a step, and the table.
import { setText } from "./text.js";

/** `[start, end]` (ms) of step `k`, or null when there is no such step. */
export function stepBounds(stepEnds, k, firstStart = 0) {
  if (!Number.isInteger(k) || k < 0 || k >= stepEnds.length) return null;
  const start = k === 0 ? Math.min(firstStart, stepEnds[0]) : stepEnds[k - 1];
  return [start, stepEnds[k]];
}

/**
 * A zoom window around `[start, end]` with `margin` of its span on each side, kept inside
 * `extent` (the run's `[x0, x1]`, when given) where the margin would pass it: the first step
 * starts at the run's start, and a window before it would show time the run never had.
 */
export function zoomWindow(start, end, margin = 0.05, extent = null) {
  const pad = Math.max((end - start) * margin, 1e-6);
  let x0 = start - pad;
  let x1 = end + pad;
  if (extent) {
    x0 = Math.max(x0, Math.min(extent[0], start));
    x1 = Math.min(x1, Math.max(extent[1], end));
  }
  return [x0, x1];
}

/** The rows of the per-step table: `[{what, index, dur_ms, start_ms, end_ms}]`. */
export function stepRows(steps) {
  if (!steps) return [];
  const rows = [];
  for (const what of ["median", "p95", "slowest", "fastest"]) {
    const s = steps[what];
    if (s && typeof s.start_ms === "number" && typeof s.end_ms === "number") rows.push({ what, ...s });
  }
  return rows;
}

/**
 * The steps panel: summary line (the kernel's words), "zoom to step" input, and the table (median, p95, slowest,
 * fastest; each row a zoom button). `onZoom([x0, x1])` zooms the flame chart;
 * `stepWindowOf(k)` gives step k's window or null; `extent()` the run's `[x0, x1]` (windows
 * stay inside it). Returns `{el, update(steps, texts)}`: a live run's
 * steps change with every refresh, and `update` rewrites the panel's texts in place (rows are
 * reused; the step number a user typed stays), where a new panel each time cost the page a
 * style and layout pass of its buttons and took the input away from whoever was typing in it.
 */
export function mountSteps(doc, { onZoom, stepWindowOf, extent = () => null }) {
  const el = doc.createElement("div");
  el.className = "everyo-steps";
  const line = doc.createElement("div");
  line.className = "everyo-controls";
  const summary = doc.createElement("span");
  const input = doc.createElement("input");
  input.type = "number";
  input.min = "0";
  input.className = "everyo-step-input";
  let typed = false; // the user's own step number: updates leave it alone
  input.addEventListener("input", () => {
    typed = true;
  });
  const go = doc.createElement("button");
  go.className = "everyo-step-zoom jp-Button";
  go.textContent = "zoom to step";
  const zoomTo = () => {
    const window = stepWindowOf(Number(input.value));
    if (window) onZoom(window);
  };
  go.addEventListener("click", zoomTo);
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") zoomTo();
  });
  line.append(summary, go, input);
  const table = doc.createElement("table");
  table.className = "everyo-table everyo-step-table";
  const head = table.createTHead().insertRow();
  for (const text of ["", "step", "duration", ""]) {
    const th = doc.createElement("th");
    th.textContent = text;
    head.appendChild(th);
  }
  const body = table.createTBody();
  el.append(line, table);

  const newRow = () => {
    const tr = body.insertRow();
    for (let c = 0; c < 3; c++) tr.insertCell();
    const button = doc.createElement("button");
    button.className = "everyo-step-row-zoom jp-Button";
    button.textContent = "zoom";
    // the row's step as it is now (updates replace tr.everyoRow)
    button.addEventListener("click", () => onZoom(zoomWindow(tr.everyoRow.start_ms, tr.everyoRow.end_ms, 0.05, extent())));
    tr.insertCell().appendChild(button);
    return tr;
  };
  // `texts`: the kernel's words (the report's `texts`: `steps`, the summary line, and
  // `step_durations`, each listed step's duration), shown as they are
  const update = (steps, texts = {}) => {
    const durations = texts.step_durations || {};
    setText(summary, texts.steps || "");
    const max = String(Math.max(0, steps.count - 1));
    if (input.max !== max) input.max = max;
    const slowest = String(steps.slowest ? steps.slowest.index : 0);
    if (!typed && input.value !== slowest) input.value = slowest;
    const rows = stepRows(steps);
    while (body.rows.length > rows.length) body.deleteRow(body.rows.length - 1);
    rows.forEach((row, r) => {
      const tr = r < body.rows.length ? body.rows[r] : newRow();
      tr.everyoRow = row;
      if (tr.dataset.what !== row.what) tr.dataset.what = row.what;
      setText(tr.cells[0], row.what);
      setText(tr.cells[1], `#${row.index}`);
      setText(tr.cells[2], durations[row.what] || "");
      const button = tr.cells[3].firstChild;
      const title = `Zoom the flame chart to step ${row.index}`;
      if (button.title !== title) button.title = title;
    });
  };
  return { el, update };
}
