// Pure parts of the sweep widget: the progress line, the table, the state of the buttons
// (unit-tested in test/sweep_view.test.mjs). The table's texts come from the Python SweepReport
// (`cells`); the browser spells only the seconds the running point has taken (format.js).
import { secondsText } from "./format.js";

/** "point 4 of 9, batch 64, 2.1 s" while a point runs (`elapsedS`: seconds since it started);
 * "re-measuring batch 16, 32, 64 interleaved, 2.1 s" while suspects are re-measured. */
export function progressText(progress, elapsedS = 0) {
  const seconds = secondsText(elapsedS);
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

/** Table cells per row (the kernel's texts, `report.cells`), with the row's class: `failed`,
 * `flagged`, `recommended` or "". */
export function tableRows(report) {
  const r = report || {};
  const rec = r.recommendation || {};
  const cells = r.cells || [];
  return (r.rows || []).map((row, i) => {
    const ok = row.status === "ok";
    const cls = !ok ? "failed" : row.flag ? "flagged" : row.batch_size === rec.recommended ? "recommended" : "";
    return { cls, title: ok ? row.note || "" : row.message || "", cells: cells[i] || [] };
  });
}

/** The table element of `report.rows`. */
export function renderSweepTable(doc, report) {
  const table = doc.createElement("table");
  table.className = "everyo-table everyo-sweep-table";
  const head = doc.createElement("tr");
  for (const text of (report && report.headers) || []) {
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
