// Pure parts of the sweep widget: the progress line, the table, the state of the buttons
// (unit-tested in test/sweep_view.test.mjs). The numbers come from the Python SweepReport.
import { NO_VALUE } from "./schema.js";

/** "point 4 of 9, batch 64, 2.1 s" while a point runs (`elapsedS`: seconds since it started);
 * "re-measuring batch 16, 32, 64 interleaved, 2.1 s" while suspects are re-measured. */
export function progressText(progress, elapsedS = 0) {
  const seconds = `${Math.max(elapsedS, 0).toFixed(1)} s`;
  if (progress.rechecking && progress.rechecking.length) {
    return `re-measuring batch ${progress.rechecking.join(", ")} interleaved, ${seconds}`;
  }
  const of = progress.total ? ` of ${progress.total}` : "";
  return `point ${progress.index}${of}, batch ${progress.batch_size}, ${seconds}`;
}

function points(n) {
  return n === 1 ? "1 point" : `${n} points`;
}

/** The line under the title: what runs now, or how the sweep ended (as SweepReport.progress_line). */
export function progressLine(report, elapsedS = 0) {
  const r = report || {};
  const done = (r.rows || []).length;
  if (r.status === "running" && r.progress) return progressText(r.progress, elapsedS);
  if (r.status === "ready" || !r.status) return "not started";
  if (r.status === "stopped") return `stopped after ${points(done)}; the other sizes were not measured`;
  if (r.status === "failed") return `failed after ${points(done)}: ${r.error || ""}`;
  return `${points(done)} measured`;
}

/** Run is offered while no sweep runs, Stop while one does (unless it runs in the cell). */
export function buttonStates(running, stopHint = "") {
  // a sweep that runs in the cell's own thread (%everyo_sweep, widget.run()) cannot read a
  // message before it ends: the kernel's interrupt stops it, as `stopHint` says
  return { run: !running, stop: Boolean(running) && !stopHint, stopTitle: running ? stopHint : "" };
}

function fixed(value, digits, divide = 1) {
  if (value === null || value === undefined || Number.isNaN(value)) return NO_VALUE;
  return (value / divide).toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export const TABLE_HEADERS = ["batch", "status", "samples/s", "median ms", "p5 ms", "p95 ms", "peak MiB", "note"];

/** Notes of an ok row: "best", "recommended", "largest fit" (as the static table). */
export function pickNote(size, rec) {
  const r = rec || {};
  return [["best", "best"], ["recommended", "recommended"], ["largest_fit", "largest fit"]]
    .filter(([key]) => r[key] === size)
    .map(([, label]) => label)
    .join(", ");
}

/** An ok row's note: its flag ("! unreliable", "! contended"), its picks, and the kernel's
 * note on it (why it is flagged, what a re-measurement found), as the static table. */
export function rowNote(row, rec) {
  return [row.flag ? `! ${row.flag}` : "", pickNote(row.batch_size, rec), row.note || ""]
    .filter(Boolean)
    .join(", ");
}

/** Table cells per row, with the row's class: `failed`, `flagged`, `recommended` or "". */
export function tableRows(report) {
  const r = report || {};
  const rec = r.recommendation || {};
  return (r.rows || []).map((row) => {
    const memory = row.gpu_memory !== null && row.gpu_memory !== undefined ? row.gpu_memory : row.peak_memory;
    const ok = row.status === "ok";
    const cls = !ok ? "failed" : row.flag ? "flagged" : row.batch_size === rec.recommended ? "recommended" : "";
    return {
      cls,
      title: ok ? row.note || "" : row.message || "",
      cells: [
        String(row.batch_size), row.status, fixed(row.throughput, 1), fixed(row.median_ms, 4),
        fixed(row.p5_ms, 4), fixed(row.p95_ms, 4), fixed(memory, 2, 1048576),
        ok ? rowNote(row, rec) : row.message || "",
      ],
    };
  });
}

/** The table element of `report.rows`. */
export function renderSweepTable(doc, report) {
  const table = doc.createElement("table");
  table.className = "everyo-table everyo-sweep-table";
  const head = doc.createElement("tr");
  for (const text of TABLE_HEADERS) {
    const th = doc.createElement("th");
    th.textContent = text;
    head.appendChild(th);
  }
  const thead = doc.createElement("thead");
  thead.appendChild(head);
  const body = doc.createElement("tbody");
  for (const row of tableRows(report)) {
    const tr = doc.createElement("tr");
    if (row.cls) tr.className = `everyo-sweep-${row.cls}`;
    if (row.title) tr.title = row.title;
    row.cells.forEach((text, i) => {
      const td = doc.createElement("td");
      td.textContent = text;
      if (i !== 1 && i !== 7) td.className = "everyo-num";
      tr.appendChild(td);
    });
    body.appendChild(tr);
  }
  table.append(thead, body);
  return table;
}
