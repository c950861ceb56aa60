// "Export Chrome trace": Python writes the file next to the notebook and sends the same bytes
// back as a binary buffer; the browser saves them through a temporary <a download>.

/** Start a browser download of `data` (ArrayBuffer, DataView or typed array) as `filename`. */
export function downloadBytes(doc, filename, data, mime = "application/json") {
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
export function isDownloadMessage(msg, buffers) {
  return Boolean(msg && msg.type === "download" && msg.filename && buffers && buffers.length > 0);
}

/**
 * The button and its status line; the button sends {type: "export"} to Python. The status
 * text and the busy flag are the model's `export_status` and `export_busy` traits.
 */
export function renderExportButton(doc, model, traits = { status: "export_status", busy: "export_busy" }) {
  const wrap = doc.createElement("div");
  wrap.className = "everyo-export";
  const button = doc.createElement("button");
  button.className = "everyo-export-button jp-Button";
  button.textContent = "Export Chrome trace";
  button.title = "Write <label>.trace.json next to the notebook and download it";
  const status = doc.createElement("span");
  status.className = "everyo-export-status";
  const update = () => {
    status.textContent = model.get(traits.status) || "";
    button.disabled = Boolean(model.get(traits.busy));
  };
  button.addEventListener("click", () => model.send({ type: "export" }));
  model.on(`change:${traits.status}`, update);
  model.on(`change:${traits.busy}`, update);
  update();
  wrap.append(button, status);
  return wrap;
}
