// One <style> per document for every everyo widget; colours come from JupyterLab's CSS
// variables so both themes work. A dashboard out of view is not rendered (content-visibility:
// auto): the notebook's earlier dashboards and their plotly charts then add nothing to the
// style, layout and paint work of every frame a live one draws.

export const CSS = `
.everyo-widget { font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px); color: var(--jp-ui-font-color1, #222); }
.everyo-dashboard { content-visibility: auto; contain-intrinsic-size: auto 600px; }
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
.everyo-header { padding: 4px 0; }
.everyo-notes { margin: 2px 0 4px; padding-left: 1.4em; }
.everyo-steps { margin: 4px 0; }
.everyo-step-input { width: 6em; }
.everyo-step-table { width: auto; }
.everyo-flame-box { position: relative; min-height: 40px; }
.everyo-flame-canvas { position: absolute; left: 0; top: 0; z-index: 0; pointer-events: none; }
.everyo-flame-axes { position: absolute; left: 0; top: 0; z-index: 0; pointer-events: none; }
.everyo-flame-axes[hidden] { display: none; }
.everyo-flame { position: relative; z-index: 1; }
.everyo-flame-message { position: absolute; left: 60px; top: 10px; z-index: 2;
  color: var(--jp-ui-font-color2, #555); }
.everyo-tooltip { position: absolute; z-index: 10; pointer-events: none; max-width: 420px;
  padding: 4px 8px; border-radius: 3px; font-size: 12px; line-height: 1.35; white-space: nowrap;
  background: var(--jp-layout-color0, #fff); color: var(--jp-ui-font-color1, #222);
  border: 1px solid var(--jp-border-color1, #bbb); box-shadow: 0 1px 4px rgba(0,0,0,0.25); }
.everyo-icicle { margin-top: 8px; }
.everyo-memory { margin-top: 0; }
.everyo-picker-row:not([hidden]) { display: flex; gap: 12px; align-items: center; margin-bottom: 4px; }
.everyo-compare { margin-top: 10px; }
.everyo-compare-only > :not(.everyo-compare):not(style) { display: none !important; }
.everyo-compare-header { font-weight: 600; padding: 4px 0; }
.everyo-compare-title { color: var(--jp-ui-font-color2, #555); margin-top: 6px; }
.everyo-diff-holder { overflow-x: auto; }
.everyo-diff-table { width: auto; }
.everyo-table .everyo-num { text-align: right; font-variant-numeric: tabular-nums; }
.everyo-verdict-faster { color: var(--jp-success-color1, #1a7f37); }
.everyo-verdict-slower { color: var(--jp-error-color1, #cf222e); }
.everyo-verdict-within-noise, .everyo-verdict-negligible-change, .everyo-verdict-too-little-data { color: var(--jp-ui-font-color2, #555); }
.everyo-verdict-inconclusive-the-machine-was-busy { color: var(--jp-warn-color1, #9a6700); }
.everyo-table-holder tbody tr, .everyo-flame { cursor: pointer; }
.everyo-table tr.everyo-selected td { background: var(--jp-layout-color2, #eef3f8); }
.everyo-why { margin: 6px 0; padding: 6px 8px; border: 1px solid var(--jp-border-color2, #ccc); }
.everyo-why-head { display: flex; gap: 10px; }
.everyo-why-close { margin-left: auto; }
.everyo-why-message { color: var(--jp-warn-color1, #b26a00); }
.everyo-why .everyo-table { width: auto; margin: 4px 0; }
.everyo-why-num { text-align: right; }
.everyo-why td:last-child, .everyo-why code { font-family: var(--jp-code-font-family, monospace); white-space: pre; }
.everyo-why-node { margin-left: 1.1em; white-space: nowrap; }
.everyo-why summary > * { margin-right: 8px; }
.everyo-why-outside { margin: 2px 0 4px; }
.everyo-why-outside-link { padding: 2px 8px; cursor: pointer; }
`;

export const STYLE_ID = "everyo-widget-style";

/**
 * Mark `el` as an everyo widget and make sure its document has the widgets' style sheet: one
 * <style> for the page, not one per view (each new sheet makes the browser match every rule
 * against the whole notebook again).
 */
export function addStyle(doc, el) {
  let style = doc.getElementById(STYLE_ID);
  if (!style) {
    style = doc.createElement("style");
    style.id = STYLE_ID;
    (doc.head || el).appendChild(style);
  }
  if (style.textContent !== CSS) style.textContent = CSS; // a newer build in the same page
  el.classList.add("everyo-widget");
}
