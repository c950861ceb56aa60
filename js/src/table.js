// The summary table: sortable columns, group-by select, share bars.
import { columnLabel, formatCell } from "./format.js";

/** How a grouping is named, as the first column's header and in the group-by select. */
export const GROUP_HEADERS = { name: "name", path: "module path", shape: "input shapes" };

const PREFERRED = [
  "label", "kind", "calls", "total_ms", "self_ms", "share", "mean_ms", "median_ms", "min_ms",
  "max_ms", "std_ms", "gflops", "device_ms", "shapes",
];

/**
 * The columns of report rows: the label first (it holds the name and the module path), then
 * the numbers. Name and path are not repeated; shapes are not when they are the grouping; a
 * column no row has a value for (median while live) is left out.
 */
export function summaryColumns(rows, groupBy) {
  const hidden = new Set(["name", "path", "module"]);
  if (groupBy === "shape") hidden.add("shapes");
  const known = (key) => rows.some((row) => row[key] !== null && row[key] !== undefined);
  return tableColumns(rows, PREFERRED).filter((key) => !hidden.has(key) && known(key));
}

/** Rows sorted by `key` (numbers numerically, strings by locale; missing values last). */
export function sortRows(rows, key, descending = true) {
  const sign = descending ? -1 : 1;
  return [...rows].sort((a, b) => {
    const x = a[key];
    const y = b[key];
    const xMissing = x === null || x === undefined;
    const yMissing = y === null || y === undefined;
    if (xMissing || yMissing) return xMissing === yMissing ? 0 : xMissing ? 1 : -1;
    if (typeof x === "number" && typeof y === "number") return sign * (x - y);
    return sign * String(x).localeCompare(String(y));
  });
}

/** The sort state after clicking the header of `clicked`: same column flips, new one descends. */
export function nextSort(state, clicked) {
  if (state.sortBy === clicked) return { sortBy: clicked, descending: !state.descending };
  return { sortBy: clicked, descending: true };
}

/** Columns to show, in a stable order: known columns first, then any others the rows carry. */
export function tableColumns(rows, preferred) {
  const present = new Set();
  for (const row of rows) for (const key of Object.keys(row)) present.add(key);
  const cols = preferred.filter((k) => present.has(k));
  for (const key of present) if (!cols.includes(key) && !key.startsWith("_")) cols.push(key);
  return cols;
}

/** Width of a share bar in percent, clamped to [0, 100]. */
export function shareWidth(share) {
  if (typeof share !== "number" || Number.isNaN(share)) return 0;
  return Math.max(0, Math.min(100, share * 100));
}

/**
 * Build the table DOM (header cells call `onSort(key)` when clicked); `headers` names columns
 * whose header is not their `columnLabel`.
 */
export function renderTable(doc, rows, columns, sort, onSort, headers = {}) {
  const table = doc.createElement("table");
  table.className = "everyo-table";
  const head = table.createTHead().insertRow();
  for (const key of columns) {
    const th = doc.createElement("th");
    th.dataset.key = key;
    const arrow = sort.sortBy === key ? (sort.descending ? " ▼" : " ▲") : "";
    const label = headers[key] || columnLabel(key);
    th.textContent = label + arrow;
    th.title = `Sort by ${label}`;
    th.addEventListener("click", () => onSort(key));
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const row of sortRows(rows, sort.sortBy, sort.descending)) {
    const tr = body.insertRow();
    for (const key of columns) {
      const td = tr.insertCell();
      td.textContent = formatCell(key, row[key]);
      if (key === "share") {
        const bar = doc.createElement("div");
        bar.className = "everyo-share-bar";
        bar.style.width = `${shareWidth(row.share)}%`;
        td.prepend(bar);
      }
    }
  }
  return table;
}
