// A training loop read by steps: step k (counted from 0) ends at step end k and starts at step
// end k - 1 (step 0 at the run's first event). Zoom to a step, and the per-step table.
import { formatMs } from "./format.js";

/** `[start, end]` (ms) of step `k`, or null when there is no such step. */
export function stepBounds(stepEnds, k, firstStart = 0) {
  if (!Number.isInteger(k) || k < 0 || k >= stepEnds.length) return null;
  const start = k === 0 ? Math.min(firstStart, stepEnds[0]) : stepEnds[k - 1];
  return [start, stepEnds[k]];
}

/** A zoom window around `[start, end]` with `margin` of its span on each side. */
export function zoomWindow(start, end, margin = 0.05) {
  const pad = Math.max((end - start) * margin, 1e-6);
  return [start - pad, end + pad];
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

/** "40 steps (optimizer) · mean 1.23 ms · median 1.20 ms · p95 1.50 ms". */
export function stepSummary(steps) {
  const parts = [`${steps.count} steps${steps.source ? ` (${steps.source})` : ""}`];
  for (const [label, key] of [["mean", "mean_ms"], ["median", "median_ms"], ["p95", "p95_ms"]]) {
    if (typeof steps[key] === "number") parts.push(`${label} ${formatMs(steps[key])} ms`);
  }
  return parts.join(" · ");
}

/**
 * The steps panel: summary line, "zoom to step" input, and the table (median, p95, slowest,
 * fastest; each row a zoom button). `onZoom([x0, x1])` zooms the flame chart;
 * `stepWindowOf(k)` gives step k's window or null.
 */
export function renderSteps(doc, steps, { onZoom, stepWindowOf }) {
  const box = doc.createElement("div");
  box.className = "everyo-steps";
  const line = doc.createElement("div");
  line.className = "everyo-controls";
  const summary = doc.createElement("span");
  summary.textContent = stepSummary(steps);
  const input = doc.createElement("input");
  input.type = "number";
  input.min = "0";
  input.max = String(Math.max(0, steps.count - 1));
  input.value = String(steps.slowest ? steps.slowest.index : 0);
  input.className = "everyo-step-input";
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
  for (const text of ["", "step", "duration (ms)", ""]) {
    const th = doc.createElement("th");
    th.textContent = text;
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const row of stepRows(steps)) {
    const tr = body.insertRow();
    tr.dataset.what = row.what;
    tr.insertCell().textContent = row.what;
    tr.insertCell().textContent = `#${row.index}`;
    tr.insertCell().textContent = formatMs(row.dur_ms);
    const button = doc.createElement("button");
    button.className = "everyo-step-row-zoom jp-Button";
    button.textContent = "zoom";
    button.title = `Zoom the flame chart to step ${row.index}`;
    button.addEventListener("click", () => onZoom(zoomWindow(row.start_ms, row.end_ms)));
    tr.insertCell().appendChild(button);
  }
  box.append(line, table);
  return box;
}
