// The plain-DOM parts of the dashboard bound to the model's traits: run picker, summary table
// with its group-by select, and the icicle. Each `mount*` returns `{el, update, ...}`.
import { whenIdle } from "./idle.js";
import { figureColors } from "./theme.js";
import { renderComparePicker, renderPicker } from "./picker.js";
import { GROUP_HEADERS } from "./schema.js";
import { bodyCells, headKey, nextSort, patchBody, renderTable, rowOrder } from "./table.js";
import { rowTarget, selectsRow } from "./why_view.js";

/** The report's rows in the order the table's body shows them (what a click on a row selects). */
function shownRows(report, spec, sort) {
  const rows = report.rows || [];
  return rowOrder(spec, sort).map((i) => rows[i]);
}

function commit(model, values) {
  for (const [name, value] of Object.entries(values)) model.set(name, value);
  model.save_changes();
}

/**
 * The run select (shown while the `picker` trait is true); a choice sets `selected`. Beside it
 * a "compare with" select sets `compare_id`: the shown run is compared with that one.
 */
export function mountPicker(doc, model) {
  const box = doc.createElement("div");
  box.className = "everyo-picker-row";
  const label = doc.createElement("label");
  label.className = "everyo-picker-box";
  label.textContent = "run ";
  const against = doc.createElement("label");
  against.className = "everyo-compare-box";
  against.textContent = "compare with ";
  box.append(label, against);
  let select = null;
  let other = null;
  const update = () => {
    box.hidden = !model.get("picker");
    if (box.hidden) return;
    const runs = model.get("runs") || [];
    const selected = model.get("selected");
    const next = renderPicker(doc, runs, selected, (id) => commit(model, { selected: id }));
    if (select) select.replaceWith(next);
    else label.appendChild(next);
    select = next;
    const nextOther = renderComparePicker(doc, runs, selected, model.get("compare_id"), (id) => commit(model, { compare_id: id }));
    if (other) other.replaceWith(nextOther);
    else against.appendChild(nextOther);
    other = nextOther;
  };
  update();
  return { el: box, update, traits: ["picker", "runs", "selected", "compare_id"] };
}

// A live table's numbers are rewritten at most this often (the chart follows every refresh; the
// header and the steps box show the report the table shows, so every number on the page comes
// from one report). Rewriting the table at every refresh costs the page a layout and paint of
// it each time (figures: observer_variants.py's CPU rows in benchmarks/RESULTS.md).
export const LIVE_TABLE_MS = 1000;

/**
 * The summary table of the report's `table` (columns, cell texts, share bars and sort orders,
 * all from the kernel): header clicks set `sort_by` / `descending` (the same column flips the
 * order, a new one sorts descending), the select sets `group_by`; the shown rows take the
 * kernel's order for the clicked column at once, and the kernel recomputes them (and `top`)
 * behind. While the report is live, its numbers reach the table with the first report at least
 * `LIVE_TABLE_MS` after the last ones (in that report's frame, with the chart and header: no
 * task of its own); a new sort, grouping or columns, and the final report, show at once. A
 * click on a row calls `onSelect` with what it selects (why_view.js `rowTarget`); the row
 * `why_target` selects is marked. `now` (the clock) is for tests.
 */
export function mountTable(doc, model, { now = () => performance.now(), onSelect = null } = {}) {
  const el = doc.createElement("div");
  el.className = "everyo-table-section";
  const controls = doc.createElement("div");
  controls.className = "everyo-controls";
  const label = doc.createElement("label");
  label.textContent = "group by ";
  const select = doc.createElement("select");
  select.className = "everyo-group-by";
  for (const [value, text] of Object.entries(GROUP_HEADERS)) {
    const option = doc.createElement("option");
    option.value = value;
    option.textContent = text;
    select.appendChild(option);
  }
  select.addEventListener("change", () => commit(model, { group_by: select.value }));
  label.appendChild(select);
  controls.appendChild(label);
  const holder = doc.createElement("div");
  holder.className = "everyo-table-holder";
  el.append(controls, holder);
  let table = null;
  let liveAt = -Infinity; // when live numbers were last written
  let shown = model.get("report") || {}; // the report whose numbers the table shows
  let order = []; // the shown rows in the order of the body's rows
  const groupOf = () => model.get("group_by") || "name";
  const mark = () => {
    if (!table) return;
    const target = model.get("why_target");
    const trs = table.tBodies[0].rows;
    for (let i = 0; i < trs.length; i++) {
      const on = Boolean(order[i]) && selectsRow(target, order[i], groupOf());
      if (Boolean(trs[i].everyoSelected) !== on) {
        trs[i].everyoSelected = on;
        trs[i].className = on ? "everyo-selected" : "";
      }
    }
  };
  holder.addEventListener("click", (ev) => {
    let tr = ev.target;
    while (tr && tr.tagName !== "TR") tr = tr.parentNode || tr.parent;
    const body = tr && (tr.parentNode || tr.parent);
    if (!onSelect || !table || body !== table.tBodies[0]) return;
    const row = order[[...body.rows].indexOf(tr)];
    if (row) onSelect(rowTarget(row, groupOf()));
  });
  const update = () => {
    select.value = model.get("group_by") || "name";
    const report = model.get("report") || {};
    const spec = report.table || { columns: [], rows: [] };
    const sort = { sortBy: model.get("sort_by") || "total_ms", descending: model.get("descending") !== false };
    const onSort = (key) => {
      const next = nextSort(sort, key);
      commit(model, { sort_by: next.sortBy, descending: next.descending });
    };
    if (table && table.dataset.head === headKey(spec, sort)) {
      // the numbers of a live report: the same table, its cells rewritten where they changed
      const t = now();
      if (report.live && t - liveAt < LIVE_TABLE_MS) return; // a later report brings newer numbers
      liveAt = report.live ? t : -Infinity;
      shown = report;
      patchBody(doc, table.tBodies[0], bodyCells(spec, sort), spec.columns);
      order = shownRows(report, spec, sort);
      mark();
      return;
    }
    shown = report;
    table = renderTable(doc, spec, sort, onSort);
    order = shownRows(report, spec, sort);
    holder.replaceChildren(table);
    mark();
  };
  update();
  // `shown()`: the report the table shows now; the header and steps box show that one too
  return { el, update, mark, shown: () => shown, traits: ["report", "group_by", "sort_by", "descending"] };
}

/** True when the icicle should show: a figure with data, and the run not live. */
export function showIcicle(report, figure) {
  return Boolean(!(report && report.live) && figure && Array.isArray(figure.data) && figure.data.length);
}

/**
 * The icicle below the table, drawn with Plotly.react once plotly.js is there. The react waits
 * for an idle moment: the final report, the icicle and a new view's first flame chart arrive
 * together, and one task drawing them all blocked the page for a few hundred milliseconds.
 */
export function mountIcicle(doc, model) {
  const el = doc.createElement("div");
  el.className = "everyo-icicle";
  el.hidden = true;
  let plotly = null;
  let drawn = null; // the figure and theme drawn
  let cancel = null;
  const current = () => ({ figure: model.get("icicle"), theme: model.get("theme"), themes: model.get("themes") });
  const same = (a, b) => a && b && a.figure === b.figure && a.theme === b.theme && a.themes === b.themes;
  const draw = () => {
    cancel = null;
    const now = current();
    if (!plotly || !showIcicle(model.get("report"), now.figure) || same(now, drawn)) return;
    drawn = now;
    plotly.react(el, now.figure.data, themedLayout(now.figure.layout, figureColors(now.themes, now.theme)), {
      displaylogo: false,
      responsive: true,
    });
  };
  const update = () => {
    const now = current();
    el.hidden = !showIcicle(model.get("report"), now.figure);
    if (el.hidden || !plotly || same(now, drawn) || cancel) return;
    cancel = whenIdle(draw);
  };
  const setPlotly = (p) => {
    plotly = p;
    update();
  };
  const destroy = () => {
    if (cancel) cancel();
    cancel = null;
    if (plotly && plotly.purge) plotly.purge(el);
    plotly = null;
  };
  return { el, update, setPlotly, destroy, traits: ["icicle", "report", "theme", "themes"] };
}

/**
 * The icicle's layout in the page's theme: the kernel builds the figure once, and a theme
 * change recolours it here (the class colours of its nodes are the same in both themes).
 */
export function themedLayout(layout, colors) {
  const out = { ...(layout || {}), autosize: true };
  delete out.width;
  out.paper_bgcolor = colors.paper_bgcolor;
  out.plot_bgcolor = colors.plot_bgcolor;
  out.font = { ...(out.font || {}), color: colors.font_color };
  if (Array.isArray(out.annotations)) {
    out.annotations = out.annotations.map((a) => ({ ...a, font: { ...(a.font || {}), color: colors.muted } }));
  }
  return out;
}
