// One <style> per widget view; colours come from JupyterLab's CSS variables so both themes work.

export const CSS = `
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

export function addStyle(doc, el) {
  const style = doc.createElement("style");
  style.textContent = CSS;
  el.appendChild(style);
  el.classList.add("everyo-widget");
}
