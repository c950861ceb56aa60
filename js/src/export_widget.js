// anywidget entry: the "Export Chrome trace" button.
import { downloadBytes, isDownloadMessage, renderExportButton } from "./export.js";
import { addStyle } from "./style.js";

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
