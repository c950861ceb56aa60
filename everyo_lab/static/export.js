// everyo-lab 0.1.0 | export.js | sources sha256:8058e0ba65b4f17c | built by js/build.mjs from js/src: do not edit

// ---- src/export.js
const __everyo_src_export_js = (() => {
// "Export Chrome trace": Python writes the file next to the notebook and sends the same bytes
// back as a binary buffer; the browser saves them through a temporary <a download>.

/** Start a browser download of `data` (ArrayBuffer, DataView or typed array) as `filename`. */
function downloadBytes(doc, filename, data, mime = "application/json") {
  const blob = new Blob([data], { type: mime });
  const url = URL.createObjectURL(blob);
  const link = doc.createElement("a");
  link.href = url;
  link.download = filename;
  link.style.display = "none";
  doc.body.appendChild(link);
  link.click();
  link.remove();
  // Revoke later: some browsers read the URL after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** True when a custom message from Python asks for a download and carries the bytes. */
function isDownloadMessage(msg, buffers) {
  return Boolean(msg && msg.type === "download" && msg.filename && buffers && buffers.length > 0);
}

/** The button and its status line; the button sends {type: "export"} to Python. */
function renderExportButton(doc, model) {
  const wrap = doc.createElement("div");
  wrap.className = "everyo-export";
  const button = doc.createElement("button");
  button.className = "everyo-export-button jp-Button";
  button.textContent = "Export Chrome trace";
  button.title = "Write <label>.trace.json next to the notebook and download it";
  const status = doc.createElement("span");
  status.className = "everyo-export-status";
  const update = () => {
    status.textContent = model.get("status") || "";
    button.disabled = Boolean(model.get("busy"));
  };
  button.addEventListener("click", () => model.send({ type: "export" }));
  model.on("change:status", update);
  model.on("change:busy", update);
  update();
  wrap.append(button, status);
  return wrap;
}
return { downloadBytes, isDownloadMessage, renderExportButton };
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

// ---- src/export_widget.js (entry)
// anywidget entry: the "Export Chrome trace" button.
const { downloadBytes, isDownloadMessage, renderExportButton } = __everyo_src_export_js;
const { addStyle } = __everyo_src_style_js;

function render({ model, el }) {
  addStyle(document, el);
  el.appendChild(renderExportButton(document, model));
  const onMessage = (msg, buffers) => {
    if (isDownloadMessage(msg, buffers)) downloadBytes(document, msg.filename, buffers[0]);
  };
  model.on("msg:custom", onMessage);
  return () => model.off("msg:custom", onMessage);
}

export default { render };
