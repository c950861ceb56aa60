// everyo-lab 0.1.0 | picker.js | sources sha256:75934a28550d98de | built by js/build.mjs from js/src: do not edit

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

// ---- src/picker.js
const __everyo_src_picker_js = (() => {
// The run picker: one <select> over every run in the kernel's store.
const { formatMs } = __everyo_src_format_js;

/** Runs grouped by label (insertion order of first appearance), newest run first in each group. */
function groupRunsByLabel(runs) {
  const groups = new Map();
  for (const run of runs) {
    if (!groups.has(run.label)) groups.set(run.label, []);
    groups.get(run.label).push(run);
  }
  for (const list of groups.values()) list.sort((a, b) => (b.start_time || 0) - (a.start_time || 0));
  return groups;
}

/** The text of one option: "train · completed · 1,234 ms · 5200 events". */
function runOptionText(run) {
  const parts = [run.label, run.status];
  if (typeof run.wall_ms === "number") parts.push(`${formatMs(run.wall_ms)} ms`);
  if (typeof run.events === "number") parts.push(`${run.events} events`);
  return parts.join(" · ");
}

/** Build the <select>; calls `onPick(runId)` when the user chooses a run. */
function renderPicker(doc, runs, selected, onPick) {
  const select = doc.createElement("select");
  select.className = "everyo-picker";
  if (runs.length === 0) {
    const option = doc.createElement("option");
    option.textContent = "no runs yet: profile a cell with %%everyo_profile";
    option.disabled = true;
    select.appendChild(option);
  }
  for (const [label, group] of groupRunsByLabel(runs)) {
    const optgroup = doc.createElement("optgroup");
    optgroup.label = label;
    for (const run of group) {
      const option = doc.createElement("option");
      option.value = run.id;
      option.textContent = runOptionText(run);
      option.selected = run.id === selected;
      optgroup.appendChild(option);
    }
    select.appendChild(optgroup);
  }
  select.addEventListener("change", () => onPick(select.value));
  return select;
}
return { groupRunsByLabel, runOptionText, renderPicker };
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

// ---- src/picker_widget.js (entry)
// anywidget entry: the run picker of dashboard() (traits: runs, selected, theme).
const { renderPicker } = __everyo_src_picker_js;
const { addStyle } = __everyo_src_style_js;
const { syncTheme } = __everyo_src_theme_js;

function render({ model, el }) {
  addStyle(document, el);
  const label = document.createElement("label");
  label.textContent = "run ";
  el.appendChild(label);
  let select = null;
  const draw = () => {
    const next = renderPicker(document, model.get("runs") || [], model.get("selected"), (id) => {
      model.set("selected", id);
      model.save_changes();
    });
    if (select) select.replaceWith(next);
    else label.appendChild(next);
    select = next;
  };
  model.on("change:runs", draw);
  model.on("change:selected", draw);
  draw();
  const stopTheme = syncTheme(model, document);
  return () => {
    stopTheme();
    model.off("change:runs", draw);
    model.off("change:selected", draw);
  };
}

export default { render };
