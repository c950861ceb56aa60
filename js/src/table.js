// The summary table, laid out from the report's `table` (views/table/table_rows.py: table_dict): the
// columns with their headers and alignment, each cell's text, the share bars, and per column
// the row order ascending and descending. Nothing here formats, labels or compares a figure:
// a header click shows the kernel's order for that column at once (the kernel, busy with the
// cell, answers with a new report later).
import { setText } from "./text.js";

/** The sort state after clicking the header of `clicked`: same column flips, new one descends. */
export function nextSort(state, clicked) {
  if (state.sortBy === clicked) return { sortBy: clicked, descending: !state.descending };
  return { sortBy: clicked, descending: true };
}

/** The row indices of `table` in the order of `sort`: the kernel's order for that column, or
 * the rows' own order (already sorted by the report's sort) when it sent none. */
export function rowOrder(table, sort) {
  const byKey = (table.order || {})[sort.sortBy];
  const order = byKey && byKey[sort.descending ? "descending" : "ascending"];
  const n = (table.rows || []).length;
  if (Array.isArray(order) && order.length === n) return order;
  return [...Array(n).keys()];
}

/**
 * What the body of the table shows: per row (in `sort`'s order), each cell's text and, in the
 * bar column, the bar's width (percent; null in other columns).
 */
export function bodyCells(table, sort) {
  const columns = table.columns || [];
  const rows = table.rows || [];
  return rowOrder(table, sort).map((i) =>
    columns.map((col, c) => ({ text: String(rows[i].texts[c]), bar: col.bar ? rows[i].bar : null })),
  );
}

/** What the table's head shows: the columns and the sort (same: same head). */
export function headKey(table, sort) {
  const heads = (table.columns || []).map((c) => [c.key, c.header, c.align]);
  return JSON.stringify([heads, sort.sortBy, Boolean(sort.descending)]);
}

/**
 * Bring a `<tbody>` to `cells` (from `bodyCells`) in place: rows and cells are reused, a text or
 * bar width is written only when it changed. A live report changes a few times a second with
 * every row; rebuilding the whole table each time cost the page a style and layout pass of
 * every cell. `columns` give each cell its alignment. Returns how many cells were written.
 */
export function patchBody(doc, body, cells, columns = []) {
  let written = 0;
  while (body.rows.length > cells.length) body.deleteRow(body.rows.length - 1);
  for (let r = 0; r < cells.length; r++) {
    const tr = r < body.rows.length ? body.rows[r] : body.insertRow();
    const row = cells[r];
    while (tr.cells.length > row.length) tr.deleteCell(tr.cells.length - 1);
    for (let c = 0; c < row.length; c++) {
      const fresh = c >= tr.cells.length;
      const td = fresh ? tr.insertCell() : tr.cells[c];
      if (fresh && columns[c] && columns[c].align === "right") td.className = "everyo-num";
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
 * Build the table DOM from a report's `table` (header cells call `onSort(key)` when clicked).
 * Later updates with the same head: `patchBody`.
 */
export function renderTable(doc, table, sort, onSort) {
  const el = doc.createElement("table");
  el.className = "everyo-table";
  el.dataset.head = headKey(table, sort);
  const head = el.createTHead().insertRow();
  for (const col of table.columns || []) {
    const th = doc.createElement("th");
    th.dataset.key = col.key;
    if (col.align === "right") th.className = "everyo-num";
    const arrow = sort.sortBy === col.key ? (sort.descending ? " ▼" : " ▲") : "";
    th.textContent = col.header + arrow;
    th.title = `Sort by ${col.header}`;
    th.addEventListener("click", () => onSort(col.key));
    head.appendChild(th);
  }
  patchBody(doc, el.createTBody(), bodyCells(table, sort), table.columns || []);
  return el;
}
