// everyo-lab 0.1.0 | table.js | sources sha256:15ec14144b00c196 | built by js/build.mjs from js/src: do not edit

// ---- src/format.js
const __everyo_src_format_js = (() => {
// Pure formatting helpers shared by the widgets (unit-tested in test/format.test.mjs).

const MS_KEYS = new Set([
  "total_ms", "mean_ms", "max_ms", "min_ms", "median_ms", "std_ms", "self_ms", "device_ms",
]);

// Exact counts stay exact ("1,024 calls"); FLOPs, bytes and the like get SI suffixes.
const COUNT_KEYS = new Set(["calls", "events"]);

/** Milliseconds with a precision that suits their size: 1234 ms -> "1,234", 0.0123 -> "0.0123". */
function formatMs(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "";
  const abs = Math.abs(value);
  if (abs >= 100) return Math.round(value).toLocaleString("en-US");
  if (abs >= 1) return value.toFixed(2);
  if (abs === 0) return "0";
  return value.toPrecision(3);
}

/** A share in [0, 1] as a percentage string: 0.4567 -> "45.7 %". */
function formatShare(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "";
  return `${(value * 100).toFixed(1)} %`;
}

/** Large counts with SI suffixes: 1500 -> "1.5 k", 2e9 -> "2.0 G". */
function formatCount(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "";
  const abs = Math.abs(value);
  const units = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  for (const [scale, suffix] of units) {
    if (abs >= scale) return `${(value / scale).toFixed(1)} ${suffix}`;
  }
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

/** Format one table cell by its column key. */
function formatCell(key, value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (MS_KEYS.has(key)) return formatMs(value);
  if (key === "share") return formatShare(value);
  if (key === "pct") return `${value.toFixed(1)} %`;
  if (COUNT_KEYS.has(key) && Number.isInteger(value)) return value.toLocaleString("en-US");
  if (typeof value === "number") return formatCount(value);
  return String(value);
}

/** A column key as a header label: "total_ms" -> "total (ms)". */
function columnLabel(key) {
  if (key.endsWith("_ms")) return `${key.slice(0, -3).replace(/_/g, " ")} (ms)`;
  if (key === "pct") return "% of run";
  return key.replace(/_/g, " ");
}

/** The file name the Chrome trace of a run is saved under: "my run/1" -> "my_run_1.trace.json". */
function traceFileName(label) {
  const safe = String(label || "run").replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[._]+/, "");
  return `${safe || "run"}.trace.json`;
}
return { formatMs, formatShare, formatCount, formatCell, columnLabel, traceFileName };
})();

// ---- src/table.js
const __everyo_src_table_js = (() => {
// The summary table: sortable columns, group-by select, share bars, nested-time warning.
const { columnLabel, formatCell } = __everyo_src_format_js;

const NESTED_WARNING =
  "Nested module timing intervals overlap: do not add parent and child totals together " +
  "and read the result as wall-clock time. Use self time to find where time is spent.";

/** Rows sorted by `key` (numbers numerically, strings by locale; missing values last). */
function sortRows(rows, key, descending = true) {
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
function nextSort(state, clicked) {
  if (state.sortBy === clicked) return { sortBy: clicked, descending: !state.descending };
  return { sortBy: clicked, descending: true };
}

/** Columns to show, in a stable order: known columns first, then any others the rows carry. */
function tableColumns(rows, preferred) {
  const present = new Set();
  for (const row of rows) for (const key of Object.keys(row)) present.add(key);
  const cols = preferred.filter((k) => present.has(k));
  for (const key of present) if (!cols.includes(key) && !key.startsWith("_")) cols.push(key);
  return cols;
}

/** Width of a share bar in percent, clamped to [0, 100]. */
function shareWidth(share) {
  if (typeof share !== "number" || Number.isNaN(share)) return 0;
  return Math.max(0, Math.min(100, share * 100));
}

/** Build the table DOM (header cells call `onSort(key)` when clicked). */
function renderTable(doc, rows, columns, sort, onSort) {
  const table = doc.createElement("table");
  table.className = "everyo-table";
  const head = table.createTHead().insertRow();
  for (const key of columns) {
    const th = doc.createElement("th");
    th.dataset.key = key;
    const arrow = sort.sortBy === key ? (sort.descending ? " ▼" : " ▲") : "";
    th.textContent = columnLabel(key) + arrow;
    th.title = `Sort by ${columnLabel(key)}`;
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
return { NESTED_WARNING, sortRows, nextSort, tableColumns, shareWidth, renderTable };
})();

// ---- src/style.js
const __everyo_src_style_js = (() => {
// One <style> per widget view; colours come from JupyterLab's CSS variables so both themes work.

const CSS = `
.everyo-widget { font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px); color: var(--jp-ui-font-color1, #222); }
.everyo-table { border-collapse: collapse; width: 100%; }
.everyo-table th { cursor: pointer; text-align: left; padding: 2px 8px; user-select: none;
  border-bottom: 1px solid var(--jp-border-color1, #bbb); white-space: nowrap; }
.everyo-table td { padding: 2px 8px; position: relative; white-space: nowrap;
  border-bottom: 1px solid var(--jp-border-color3, #eee); }
.everyo-share-bar { position: absolute; left: 0; top: 2px; bottom: 2px; z-index: 0;
  background: var(--jp-brand-color2, #90caf9); opacity: 0.45; }
.everyo-warning { margin: 4px 0; color: var(--jp-warn-color1, #b26a00); }
.everyo-controls { display: flex; gap: 8px; align-items: center; margin-bottom: 4px; }
.everyo-export { display: flex; gap: 8px; align-items: center; }
.everyo-export-button { padding: 4px 10px; cursor: pointer; }
.everyo-export-status { color: var(--jp-ui-font-color2, #555); }
.everyo-picker { min-width: 24em; }
`;

function addStyle(doc, el) {
  const style = doc.createElement("style");
  style.textContent = CSS;
  el.appendChild(style);
  el.classList.add("everyo-widget");
}
return { CSS, addStyle };
})();

// ---- src/theme.js
const __everyo_src_theme_js = (() => {
// Follow JupyterLab's light/dark theme and report it to Python (which re-templates figures).

/** "light" or "dark" from JupyterLab's body attributes (`data-jp-theme-light`), else `fallback`. */
function detectTheme(body, fallback = "light") {
  if (!body) return fallback;
  const flag = body.dataset ? body.dataset.jpThemeLight : undefined;
  if (flag === "true") return "light";
  if (flag === "false") return "dark";
  const classes = body.classList;
  if (classes && classes.contains("jp-theme-dark")) return "dark";
  if (classes && classes.contains("jp-theme-light")) return "light";
  return fallback;
}

/** Call `onChange(theme)` now and whenever JupyterLab switches theme; returns a disconnect fn. */
function watchTheme(doc, onChange) {
  const body = doc.body;
  let current = detectTheme(body);
  onChange(current);
  if (typeof MutationObserver === "undefined" || !body) return () => {};
  const observer = new MutationObserver(() => {
    const next = detectTheme(body);
    if (next !== current) {
      current = next;
      onChange(next);
    }
  });
  observer.observe(body, { attributes: true, attributeFilter: ["data-jp-theme-light", "class"] });
  return () => observer.disconnect();
}

/** Report the page theme through the model's `theme` trait (only when it differs). */
function syncTheme(model, doc) {
  return watchTheme(doc, (theme) => {
    if (model.get("theme") !== theme) {
      model.set("theme", theme);
      model.save_changes();
    }
  });
}
return { detectTheme, watchTheme, syncTheme };
})();

// ---- src/table_widget.js (entry)
// anywidget entry: the summary table (traits: rows, sort_by, descending, group_by, theme).
const { NESTED_WARNING, nextSort, renderTable, tableColumns } = __everyo_src_table_js;
const { addStyle } = __everyo_src_style_js;
const { syncTheme } = __everyo_src_theme_js;

const PREFERRED = [
  "name", "path", "shape", "kind", "calls", "total_ms", "self_ms", "share", "mean_ms",
  "median_ms", "min_ms", "max_ms", "std_ms", "pct", "gflops", "device_ms",
];
const GROUPS = ["name", "path", "shape"];
const TRAITS = ["rows", "sort_by", "descending", "group_by"]; // a change of any redraws

function render({ model, el }) {
  addStyle(document, el);
  const controls = document.createElement("div");
  controls.className = "everyo-controls";
  const label = document.createElement("label");
  label.textContent = "group by ";
  const select = document.createElement("select");
  select.className = "everyo-group-by";
  for (const g of GROUPS) {
    const option = document.createElement("option");
    option.value = g;
    option.textContent = g;
    select.appendChild(option);
  }
  select.addEventListener("change", () => {
    model.set("group_by", select.value);
    model.save_changes();
  });
  label.appendChild(select);
  controls.appendChild(label);
  const warning = document.createElement("div");
  warning.className = "everyo-warning";
  warning.textContent = `⚠ ${NESTED_WARNING}`;
  const holder = document.createElement("div");
  holder.className = "everyo-table-holder";
  el.append(controls, warning, holder);

  const draw = () => {
    select.value = model.get("group_by");
    const rows = model.get("rows") || [];
    const sort = { sortBy: model.get("sort_by"), descending: model.get("descending") };
    const onSort = (key) => {
      const next = nextSort(sort, key);
      model.set("sort_by", next.sortBy);
      model.set("descending", next.descending);
      model.save_changes();
    };
    holder.replaceChildren(renderTable(document, rows, tableColumns(rows, PREFERRED), sort, onSort));
  };
  for (const name of TRAITS) model.on(`change:${name}`, draw);
  draw();
  const stopTheme = syncTheme(model, document);
  return () => {
    stopTheme();
    for (const name of TRAITS) model.off(`change:${name}`, draw);
  };
}

export default { render };
