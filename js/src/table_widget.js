// anywidget entry: the summary table (traits: rows, sort_by, descending, group_by, theme).
import { NESTED_WARNING, nextSort, renderTable, tableColumns } from "./table.js";
import { addStyle } from "./style.js";
import { syncTheme } from "./theme.js";

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
