// The summary table: sortable columns, group-by select, share bars.
import { columnLabel, formatCell } from "./format.js";
import { COLUMN_ORDER } from "./schema.js";
import { setText } from "./text.js";

// the column order is generated from everyo/profiler/schema.py
const PREFERRED = COLUMN_ORDER;

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
 * What the body of the table shows: per row (sorted), the text of each cell and, for the share
 * column, the bar's width (percent; null in other columns).
 */
export function bodyCells(rows, columns, sort) {
  return sortRows(rows, sort.sortBy, sort.descending).map((row) =>
    columns.map((key) => ({
      text: formatCell(key, row[key]),
      bar: key === "share" ? shareWidth(row.share) : null,
    })),
  );
}

/** What the table's head shows: the columns, the sort and the headers (same: same head). */
export function headKey(columns, sort, headers = {}) {
  return JSON.stringify([columns, sort.sortBy, Boolean(sort.descending), columns.map((k) => headers[k] || "")]);
}

/**
 * Bring a `<tbody>` to `cells` (from `bodyCells`) in place: rows and cells are reused, a text or
 * bar width is written only when it changed. A live report changes a few times a second with
 * every row; rebuilding the whole table each time cost the page a style and layout pass of
 * every cell. Returns how many cells were written.
 */
export function patchBody(doc, body, cells) {
  let written = 0;
  while (body.rows.length > cells.length) body.deleteRow(body.rows.length - 1);
  for (let r = 0; r < cells.length; r++) {
    const tr = r < body.rows.length ? body.rows[r] : body.insertRow();
    const row = cells[r];
    while (tr.cells.length > row.length) tr.deleteCell(tr.cells.length - 1);
    for (let c = 0; c < row.length; c++) {
      const td = c < tr.cells.length ? tr.cells[c] : tr.insertCell();
      if (writeCell(doc, td, row[c])) written += 1;
    }
  }
  return written;
}

/** One cell: its text, and a share bar before it (`bar`: its width in percent). */
function writeCell(doc, td, { text, bar }) {
  const shown = td.everyoShown;
  if (shown && shown.text === text && shown.bar === bar) return false;
  td.everyoShown = { text, bar };
  if (bar === null) {
    setText(td, text);
    return true;
  }
  let div = td.firstChild;
  if (!div || div.className !== "everyo-share-bar") {
    td.textContent = "";
    div = doc.createElement("div");
    div.className = "everyo-share-bar";
    td.appendChild(div);
  }
  if (!shown || shown.bar !== bar) div.style.width = `${bar}%`;
  const label = div.nextSibling;
  if (label) {
    if (label.data !== text) label.data = text;
  } else {
    td.appendChild(doc.createTextNode(text));
  }
  return true;
}

/**
 * Build the table DOM (header cells call `onSort(key)` when clicked); `headers` names columns
 * whose header is not their `columnLabel`. Later updates with the same head: `patchBody`.
 */
export function renderTable(doc, rows, columns, sort, onSort, headers = {}) {
  const table = doc.createElement("table");
  table.className = "everyo-table";
  table.dataset.head = headKey(columns, sort, headers);
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
  patchBody(doc, table.createTBody(), bodyCells(rows, columns, sort));
  return table;
}
