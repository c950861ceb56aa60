// anywidget entry: a batch-size sweep drawn point by point (throughput, latency band, peak
// memory), its recommendation, progress line, Run/Stop, CSV/JSON export and table.
//
// The report and the three plotly figures are built in Python (traits `report`, `charts`);
// this module only draws them, with plotly.js loaded once per page (shared with the dashboard
// through the same globalThis cache), and ticks the running point's seconds locally.
import { downloadBytes, isDownloadMessage } from "./export.js";
import { failPlotly, loadPlotly, receivePlotly } from "./plotly_loader.js";
import { addStyle } from "./style.js";
import { buttonStates, progressLine, renderSweepTable } from "./sweep_view.js";
import { syncTheme } from "./theme.js";

const CHARTS = ["throughput", "latency", "memory"];
const CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
const CSS = `
.everyo-sweep-bar { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin: 4px 0; }
.everyo-sweep-title { font-weight: 600; }
.everyo-sweep-progress { color: var(--jp-ui-font-color2, #555); }
.everyo-sweep-rec { border-left: 3px solid #2ca02c; padding: 2px 8px; margin: 4px 0; }
.everyo-sweep-rec-none { border-left-color: #d4a017; }
.everyo-sweep-charts { display: flex; flex-wrap: wrap; gap: 8px; }
.everyo-sweep-chart { flex: 1 1 300px; min-width: 280px; min-height: 260px; overflow: hidden; }
.everyo-sweep-failed td { color: var(--jp-error-color1, #d62728); }
.everyo-sweep-flagged td { color: var(--jp-warn-color1, #9a6700); }
.everyo-sweep-recommended td { font-weight: 600; }
.everyo-num { text-align: right; font-variant-numeric: tabular-nums; }
.everyo-notes { margin: 2px 0 4px; padding-left: 1.4em; color: var(--jp-ui-font-color2, #555); }
.everyo-sweep-table td:last-child { white-space: normal; min-width: 16em; }
`;

function initialize({ model }) {
  const onMessage = (msg, buffers) => {
    if (!msg) return;
    if (msg.type === "plotly") {
      if (msg.error) failPlotly(msg.error);
      else if (buffers && buffers.length) receivePlotly(buffers[0]);
    } else if (isDownloadMessage(msg, buffers)) {
      const mime = msg.filename.endsWith(".csv") ? "text/csv" : "application/json";
      downloadBytes(document, msg.filename, buffers[0], mime);
    }
  };
  model.on("msg:custom", onMessage);
  return () => model.off("msg:custom", onMessage);
}

function button(doc, text, cls, onClick) {
  const b = doc.createElement("button");
  b.className = `jp-Button everyo-sweep-${cls}`;
  b.textContent = text;
  b.addEventListener("click", onClick);
  return b;
}

function render({ model, el }) {
  const doc = el.ownerDocument || document;
  el.classList.add("everyo-sweep");
  addStyle(doc, el);
  const style = doc.createElement("style");
  style.textContent = CSS;

  const bar = doc.createElement("div");
  bar.className = "everyo-sweep-bar";
  const title = doc.createElement("span");
  title.className = "everyo-sweep-title";
  const progress = doc.createElement("span");
  progress.className = "everyo-sweep-progress";
  const run = button(doc, "Run", "run", () => model.send({ type: "run" }));
  const stop = button(doc, "Stop", "stop", () => {
    stop.disabled = true; // the kernel confirms through `running`
    model.send({ type: "stop" });
  });
  const csv = button(doc, "Export CSV", "csv", () => model.send({ type: "export", format: "csv" }));
  const json = button(doc, "Export JSON", "json", () => model.send({ type: "export", format: "json" }));
  const exportStatus = doc.createElement("span");
  exportStatus.className = "everyo-export-status";
  bar.append(title, run, stop, csv, json, progress, exportStatus);

  const rec = doc.createElement("div");
  rec.className = "everyo-sweep-rec";
  const notes = doc.createElement("ul"); // the machine's state, points not trusted: the kernel's
  notes.className = "everyo-notes";
  const error = doc.createElement("div");
  error.className = "everyo-warning";
  const charts = doc.createElement("div");
  charts.className = "everyo-sweep-charts";
  const divs = Object.fromEntries(CHARTS.map((key) => {
    const div = doc.createElement("div");
    div.className = `everyo-sweep-chart everyo-sweep-${key}`;
    charts.appendChild(div);
    return [key, div];
  }));
  const tableBox = doc.createElement("div");
  el.append(style, bar, error, rec, notes, charts, tableBox);

  let plotly = null;
  let redraws = 0;
  let pointKey = "";
  let pointStart = 0;
  let ticker = null;

  const showProgress = () => {
    const report = model.get("report") || {};
    progress.textContent = progressLine(report, (performance.now() - pointStart) / 1000);
  };
  const onReport = () => {
    const report = model.get("report") || {};
    title.textContent = report.title || "Batch-size sweep";
    const p = report.status === "running" ? report.progress : null;
    const key = p ? `${p.index}:${p.batch_size}` : "";
    if (key !== pointKey) {
      pointKey = key;
      pointStart = performance.now() - 1000 * ((p && p.elapsed_s) || 0);
      if (ticker) clearInterval(ticker);
      ticker = p ? setInterval(showProgress, 200) : null;
    }
    showProgress();
    const rtext = (report.recommendation || {}).text || "";
    rec.textContent = rtext;
    rec.hidden = !rtext;
    // no recommendation (nothing trusted, nothing ran): amber, not the green of a choice
    const none = (report.recommendation || {}).recommended == null;
    rec.classList.toggle("everyo-sweep-rec-none", none && report.status !== "running");
    notes.replaceChildren(...(report.notes || []).map((text) => {
      const li = doc.createElement("li");
      li.textContent = text;
      return li;
    }));
    notes.hidden = !(report.notes || []).length;
    error.textContent = report.error ? `error: ${report.error}` : "";
    error.hidden = !report.error;
    tableBox.replaceChildren(renderSweepTable(doc, report));
    el.dataset.status = report.status || "";
    el.dataset.rows = String((report.rows || []).length);
  };
  const onRunning = () => {
    const state = buttonStates(model.get("running"), model.get("stop_hint") || "");
    run.disabled = !state.run;
    stop.disabled = !state.stop;
    stop.title = state.stopTitle;
  };
  const onExport = () => {
    exportStatus.textContent = model.get("export_status") || "";
  };
  const draw = () => {
    if (!plotly) return;
    const figures = model.get("charts") || {};
    for (const key of CHARTS) {
      const fig = figures[key];
      if (!fig) continue;
      // the width of the chart's box: a view is rendered before it is in the page, where
      // plotly would fall back to 700 px and overflow its neighbour
      const width = divs[key].clientWidth;
      const layout = width > 0 ? { ...fig.layout, width } : fig.layout;
      plotly.react(divs[key], fig.data, layout, CONFIG);
    }
    const first = (figures.throughput || { data: [] }).data[0];
    el.dataset.points = String(first && first.x ? first.x.length : 0);
    redraws += 1;
    el.dataset.redraws = String(redraws);
  };

  // redraw at the boxes' width when they get one (attached to the page) or it changes
  let widths = "";
  const resized = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => {
    const now = CHARTS.map((key) => divs[key].clientWidth).join(",");
    if (now !== widths) {
      widths = now;
      draw();
    }
  });
  if (resized) resized.observe(charts);

  const bindings = [["report", onReport], ["running", onRunning], ["stop_hint", onRunning], ["export_status", onExport], ["charts", draw]];
  for (const [name, fn] of bindings) model.on(`change:${name}`, fn);
  const stopTheme = syncTheme(model, doc);
  onReport();
  onRunning();
  onExport();

  let closed = false;
  el.dataset.plotly = "loading";
  loadPlotly(model).then((p) => {
    if (closed) return;
    plotly = p;
    el.dataset.plotly = "loaded";
    draw();
  }, (err) => {
    if (closed) return;
    el.dataset.plotly = "failed";
    error.textContent = `no charts: ${err.message}`;
    error.hidden = false;
  });

  return () => {
    closed = true;
    if (ticker) clearInterval(ticker);
    if (resized) resized.disconnect();
    stopTheme();
    for (const [name, fn] of bindings) model.off(`change:${name}`, fn);
    if (plotly) for (const key of CHARTS) plotly.purge(divs[key]);
  };
}

export default { initialize, render };
