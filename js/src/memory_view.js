// The memory chart of a run recorded with profile_memory: live bytes over time under the flame
// chart, on its time axis (the same margins and window; a zoom in either moves both), with the
// peak marked and named after the module running then. Data: `report.memory`
// (views/memory/memory_view.py), at most a few hundred points.
import { MARGIN } from "./figure.js";
import { whenIdle } from "./idle.js";
import { figureColors } from "./theme.js";
import { parseRelayout, sameWindow } from "./zoom.js";

export const MEMORY_HEIGHT = 170;
const CONFIG = { displaylogo: false, doubleClick: "autosize", scrollZoom: false, modeBarButtonsToRemove: ["select2d", "lasso2d", "toImage"] };

/** The peak's words, as the kernel spells them (views/memory/memory_view.py: peak_text). */
export function peakText(memory) {
  return String(memory.peak_text || "");
}

/** The two traces: live bytes as a step line filled to zero, and the peak as a marker. */
export function memoryTraces(memory, colors = {}) {
  const line = colors.memory || "#4c78a8";
  return [
    {
      type: "scatter", mode: "lines", x: memory.t_ms, y: memory.bytes, name: memory.track,
      line: { shape: "hv", width: 1.5, color: line }, fill: "tozeroy", fillcolor: "rgba(76,120,168,0.2)",
      hovertemplate: memory.hovertemplate, showlegend: false, // the kernel's (views/memory/memory_view.py)
    },
    {
      type: "scatter", mode: "markers", x: [memory.peak.t_ms], y: [memory.peak.bytes], name: "peak",
      marker: { color: "#e45756", size: 9 }, hovertemplate: `${peakText(memory)}<extra></extra>`,
      showlegend: false,
    },
  ];
}

/** The layout: the flame chart's margins and window, bytes on y, the peak named. */
export function memoryLayout({ memory, x0, x1, width, colors = {} }) {
  return {
    width,
    height: MEMORY_HEIGHT,
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    font: { color: colors.font_color },
    margin: { l: MARGIN.l, r: MARGIN.r, t: 24, b: 36 },
    xaxis: { range: [x0, x1], autorange: false, title: { text: "time (ms)" }, showgrid: false, zeroline: false, linecolor: colors.line_color, showline: true, ticklabeloverflow: "allow", tickangle: 0 },
    yaxis: { title: { text: "live bytes" }, tickformat: "~s", ticksuffix: "B", rangemode: "tozero", gridcolor: colors.grid_color, fixedrange: true },
    dragmode: "zoom",
    showlegend: false,
    annotations: [{
      // beside the marker, on the side with room (a peak near the start would cover the ticks)
      x: memory.peak.t_ms, y: memory.peak.bytes, text: peakText(memory), showarrow: false,
      xanchor: memory.peak.t_ms > x0 + 0.6 * (x1 - x0) ? "right" : "left",
      xshift: memory.peak.t_ms > x0 + 0.6 * (x1 - x0) ? -8 : 8, yanchor: "bottom",
      font: { size: 11, color: colors.font_color },
    }],
  };
}

/**
 * The memory chart under `flame` (a FlameView): `{el, update, setPlotly, destroy, traits}`.
 * Hidden while the report has no memory view (no profile_memory, or the run still running).
 */
export function mountMemory(doc, model, flame) {
  const el = doc.createElement("div");
  el.className = "everyo-memory";
  el.hidden = true;
  let plotly = null;
  let drawn = null;
  let own = false;
  let cancel = null;
  const windowNow = () => (flame.drawn ? flame.drawn.window : flame.windowNow());
  const draw = () => {
    cancel = null;
    const memory = (model.get("report") || {}).memory;
    if (!plotly || !memory || memory === drawn) return;
    drawn = memory;
    const [x0, x1] = windowNow();
    const colors = figureColors(model.get("themes"), model.get("theme"));
    own = true;
    try {
      plotly.react(el, memoryTraces(memory, colors), memoryLayout({ memory, x0, x1, width: flame.width(), colors }), CONFIG);
    } finally {
      own = false;
    }
    el.dataset.points = String(memory.t_ms.length);
    el.dataset.window = `${x0},${x1}`;
    el.dataset.peak = peakText(memory);
    if (!el.listening && el.on) {
      el.on("plotly_relayout", (ev) => {
        if (own) return;
        const change = parseRelayout(ev, windowNow());
        if (!change) return;
        flame.setZoom(change.whole ? null : [change.x0, change.x1]);
      });
      el.listening = true;
    }
  };
  const follow = (window) => {
    if (!plotly || !drawn || el.hidden) return;
    const full = el._fullLayout;
    const range = full && full.xaxis ? full.xaxis.range : null;
    const width = flame.width();
    if (range && sameWindow(range, window) && full.width === width) return;
    own = true;
    try {
      plotly.relayout(el, { "xaxis.range": [window[0], window[1]], "xaxis.autorange": false, width });
    } finally {
      own = false;
    }
    el.dataset.window = `${window[0]},${window[1]}`;
  };
  flame.windowListeners.add(follow);
  const update = () => {
    const memory = (model.get("report") || {}).memory;
    el.hidden = !memory;
    if (el.hidden || !plotly || memory === drawn || cancel) return;
    cancel = whenIdle(draw);
  };
  const setPlotly = (p) => {
    plotly = p;
    update();
  };
  const destroy = () => {
    if (cancel) cancel();
    flame.windowListeners.delete(follow);
    if (plotly && plotly.purge) plotly.purge(el);
    plotly = null;
  };
  update();
  return { el, update, setPlotly, destroy, traits: ["report"] };
}
