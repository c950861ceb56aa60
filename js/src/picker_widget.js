// anywidget entry: the run picker of dashboard() (traits: runs, selected, theme).
import { renderPicker } from "./picker.js";
import { addStyle } from "./style.js";
import { syncTheme } from "./theme.js";

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
