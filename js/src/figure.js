// The plotly side of the flame chart: axes, legend and zoom only. The bars are painted on a
// canvas under plotly's transparent plot area (paint.js): plotly builds an SVG path string per
// point and an element per gap-separated polygon, so 20,000 bars as plotly traces would block
// the page for seconds, where a canvas paints them in milliseconds (benchmarks/RESULTS.md).
import { laneAxis } from "./lanes.js";
import { lowerBound, upperBound } from "./store.js";
import { MIXED } from "./wire.js";

export const MERGED_COLOR = "#9e9e9e";
export const MERGED_KEY = "merged"; // the legend entry of merged bars of several colours
const TRANSPARENT = "rgba(0,0,0,0)";
/** Margins around the plot area (px); the legend sits in the top one. */
export const MARGIN = { l: 60, r: 20, t: 40, b: 45 };

/** `#rrggbb` as `rgba(r,g,b,alpha)` (other colour strings are returned unchanged). */
export function withAlpha(color, alpha) {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color || "");
  if (!m) return color;
  const [r, g, b] = m.slice(1).map((h) => parseInt(h, 16));
  return `rgba(${r},${g},${b},${alpha})`;
}

/** A trace uid from a colour key: plotly uses uids in CSS selectors, so only [A-Za-z0-9_-]. */
export function traceUid(colorKey) {
  return `ck-${colorKey.replace(/[^A-Za-z0-9-]/g, (c) => `_${c.charCodeAt(0).toString(16)}`)}`;
}

/** The colour keys of a key table, each once, in order of first appearance: `[[key, colour]]`. */
export function colorKeys(keys) {
  const seen = new Map();
  for (const info of keys) if (info && !seen.has(info.colorKey)) seen.set(info.colorKey, info.color);
  return [...seen.entries()];
}

/**
 * What each bar is painted as: `{colorKey, fill}` groups of bar indices. Single events in their
 * key's colour, merged bars of one colour key paler, merged bars of several keys palest in the
 * colour of the key with the most time (grey when that is unknown: kernel bars).
 * Returns `[{colorKey, fill, idx: [...]}]` in the order of `colorKeys(keys)`, mixed last.
 */
export function barGroups(bars, keys) {
  const groups = new Map();
  const group = (colorKey, fill) => {
    const id = `${colorKey}\u0000${fill}`;
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { colorKey, fill, idx: [] }));
    return g;
  };
  // per bar only a number: (key + 1) * 4 + how it is painted; the colour strings are made
  // once per such code (per bar, they were most of a redraw's garbage)
  const byCode = new Map();
  for (let i = 0; i < bars.n; i++) {
    const k = bars.key[i];
    let key = -1;
    let kind = 3; // merged bars of unknown keys: grey
    if (k === MIXED) {
      const d = bars.dom ? bars.dom[i] : -1;
      if (d >= 0 && keys[d]) [key, kind] = [d, 2];
    } else if (keys[k]) {
      [key, kind] = [k, bars.count[i] > 1 ? 1 : 0];
    }
    const code = (key + 1) * 4 + kind;
    let g = byCode.get(code);
    if (!g) {
      const info = keys[key];
      if (kind === 3) g = group(MERGED_KEY, withAlpha(MERGED_COLOR, 0.6));
      else if (kind === 2) g = group(info.colorKey, withAlpha(info.color, 0.3));
      else if (kind === 1) g = group(info.colorKey, withAlpha(info.color, 0.45));
      else g = group(info.colorKey, info.color);
      byCode.set(code, g);
    }
    g.idx.push(i);
  }
  const rank = new Map(colorKeys(keys).map(([ck], i) => [ck, i]));
  const order = (g) => (rank.has(g.colorKey) ? rank.get(g.colorKey) : Infinity);
  return [...groups.values()].sort((a, b) => order(a) - order(b) || (a.fill < b.fill ? -1 : 1));
}

/**
 * Legend-only traces: one per colour key (and one for mixed merged bars when `mixed`), with no
 * points; a click on one hides that key's bars (plotly sets `visible: "legendonly"`).
 */
export function legendTraces(keys, hidden = new Set(), mixed = false) {
  const entries = colorKeys(keys);
  if (mixed) entries.push([MERGED_KEY, MERGED_COLOR]);
  return entries.map(([ck, color]) => ({
    type: "scatter",
    mode: "lines",
    fill: "toself",
    fillcolor: color,
    line: { width: 0, color },
    x: [null],
    y: [null],
    name: ck,
    uid: traceUid(ck),
    hoverinfo: "skip",
    showlegend: true,
    visible: hidden.has(ck) ? "legendonly" : true,
  }));
}

/** The colour keys the user hid by clicking the legend (from the plot's current traces). */
export function hiddenKeys(data) {
  return new Set((data || []).filter((t) => t.visible === "legendonly").map((t) => t.name));
}

/** Indices of the step ends inside `[x0, x1]`, thinned evenly to at most `max`. */
export function stepsInWindow(stepEnds, x0, x1, max = 200) {
  const lo = lowerBound(stepEnds, stepEnds.length, x0);
  const hi = upperBound(stepEnds, stepEnds.length, x1);
  const stride = Math.max(1, Math.ceil((hi - lo) / max));
  const out = [];
  for (let k = lo; k < hi; k += stride) out.push(k);
  return out;
}

/** Height of the flame chart for `nLanes` rows. */
export function flameHeight(nLanes) {
  return Math.round(Math.min(900, Math.max(280, 140 + 24 * nLanes)));
}

/**
 * The layout: the window exactly as x range (never autoranged), x-only zoom, depth 0 on top,
 * transparent plot area (the bars are painted under it), theme colours.
 */
export function flameLayout({ x0, x1, lanes, colors = {}, width, message }) {
  const layout = {
    width,
    height: flameHeight(lanes.nLanes),
    paper_bgcolor: TRANSPARENT,
    plot_bgcolor: TRANSPARENT,
    font: { color: colors.font_color },
    xaxis: {
      range: [x0, x1],
      autorange: false,
      title: { text: "time (ms)" },
      showgrid: false,
      linecolor: colors.line_color,
      showline: true,
      zeroline: false,
      // plotly's defaults ("hide past div", an automatic angle) measure every tick label's box
      // (a forced layout each) on every redraw: half the cost of a react or relayout here
      ticklabeloverflow: "allow",
      tickangle: 0,
    },
    yaxis: laneAxis(lanes, colors),
    dragmode: "zoom",
    hovermode: false,
    showlegend: true,
    legend: { orientation: "h", x: 0, y: 1, yanchor: "bottom" },
    modebar: { bgcolor: TRANSPARENT, color: colors.muted, activecolor: colors.font_color },
    margin: { ...MARGIN },
  };
  if (message) {
    layout.annotations = [{
      text: message, showarrow: false, xref: "paper", yref: "paper", x: 0.5, y: 0.5,
      font: { size: 16, color: colors.muted },
    }];
  }
  return layout;
}
