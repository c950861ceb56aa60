// The flame chart's axes and legend while its run is live, painted on a canvas of their own.
//
// Plotly draws the axes once the chart is used (a pointer moving over it) or the run has ended. Until
// then a live view is a canvas the page repaints in a few milliseconds: plotly's first react
// of a view (its axes, legend and modebar as SVG) and the style, layout and paint it brings
// were the costliest part of a live cell for the page, and on a machine whose cores the
// profiled code keeps busy, the page's work is time the profiled code loses.
import { MERGED_COLOR, MERGED_KEY, colorKeys } from "./figure.js";

const MIN_TICK_PX = 80; // x tick labels at least this far apart
const LEGEND_ROW_PX = 18;

/**
 * Whether a pointer or focus event on a live chart is the user turning to it (plotly's axes and
 * zoom from then on): a pointer moving over the chart, a press on it, or keyboard focus in it.
 * Not the pointerenter (and, in some browsers, the motionless pointermove) sent when the page
 * scrolls or grows under a resting pointer: JupyterLab scrolls the notebook as a cell runs, and
 * a live chart arriving under the pointer would otherwise bring plotly's costly redraws for the
 * whole run with nobody looking at it.
 */
export function engagesChart(ev) {
  if (ev.type === "pointermove") return (ev.movementX || 0) !== 0 || (ev.movementY || 0) !== 0;
  return ev.type === "pointerdown" || ev.type === "focusin";
}

/** A round step (1, 2, 2.5 or 5 times a power of ten) giving at most `maxTicks` over `span`. */
export function niceStep(span, maxTicks) {
  const raw = Math.abs(span) / Math.max(1, maxTicks);
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const decade = 10 ** Math.floor(Math.log10(raw));
  const m = [1, 2, 2.5, 5, 10].find((f) => f * decade >= raw * (1 - 1e-9));
  return m * decade;
}

/** The x ticks of `[x0, x1]` over `widthPx` pixels: `{step, values}` (multiples of the step). */
export function xTicks(x0, x1, widthPx, minPx = MIN_TICK_PX) {
  const step = niceStep(x1 - x0, Math.max(1, Math.floor(widthPx / minPx)));
  const values = [];
  const first = Math.ceil(x0 / step - 1e-9);
  for (let k = first; k * step <= x1 + 1e-9 * step && values.length < 1000; k++) {
    values.push(Math.abs(k * step) < step * 1e-9 ? 0 : k * step);
  }
  return { step, values };
}

/** A tick label: as many decimals as the step needs; thousands as "k" from 10,000 on. */
export function tickText(value, step) {
  if (Math.abs(value) >= 10000 && step >= 1000) {
    const k = value / 1000;
    return `${Number.isInteger(k) ? k : k.toFixed(step % 1000 ? 1 : 0)}k`;
  }
  let decimals = 0;
  while (decimals < 10 && Math.abs(step * 10 ** decimals - Math.round(step * 10 ** decimals)) > 1e-6) decimals += 1;
  return value.toFixed(decimals);
}

/**
 * The y axis of `lanes` (layoutLanes) as plotly's would show it (figure.js `laneAxis`): with
 * several threads their bands' names at each band's first row ("thread / depth"), else the
 * depths ("depth"; every one up to 30 rows, round ones above).
 */
export function laneTicks(lanes) {
  if (lanes.bands.length > 1) {
    return { title: "thread / depth", ticks: lanes.bands.map((b) => ({ row: b.first, text: b.name })) };
  }
  const step = lanes.nLanes <= 30 ? 1 : niceStep(lanes.nLanes, 10);
  const ticks = [];
  for (let r = 0; r < lanes.nLanes; r += step) ticks.push({ row: r, text: String(r) });
  return { title: "depth", ticks };
}

/** The legend's entries, as plotly's legend lists them (figure.js `legendTraces`). */
export function legendEntries(keys, mixed = false) {
  const entries = colorKeys(keys);
  if (mixed) entries.push([MERGED_KEY, MERGED_COLOR]);
  return entries;
}

/**
 * Paint axes, titles and legend for a plot area `size` (`{l, t, w, h}`) inside a figure
 * `width` x `height`: the x axis of `[x0, x1]` (ms) under the plot area, the lanes' labels
 * left of it (row 0 on top), the legend in the top margin. `hidden`: colour keys hidden
 * through the legend (their entries faint). Returns `{ticks, yRange}` as painted.
 */
export function paintAxes(ctx, { x0, x1, lanes, size, width, height, colors = {}, font = "sans-serif", legend = [], hidden = new Set() }) {
  const { l, t, w, h } = size;
  const color = colors.font_color || "#2a3f5f";
  ctx.clearRect(0, 0, width, height);
  ctx.strokeStyle = colors.line_color || "#c8d4e3";
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(l, Math.round(t + h) + 0.5);
  ctx.lineTo(l + w, Math.round(t + h) + 0.5);
  const ticks = xTicks(x0, x1, w);
  const sx = w / (x1 - x0 || 1);
  for (const v of ticks.values) {
    const x = Math.round(l + (v - x0) * sx) + 0.5;
    ctx.moveTo(x, t + h);
    ctx.lineTo(x, t + h + 5);
  }
  ctx.stroke();
  ctx.fillStyle = color;
  ctx.font = `12px ${font}`;
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  for (const v of ticks.values) ctx.fillText(tickText(v, ticks.step), l + (v - x0) * sx, t + h + 7);
  ctx.font = `14px ${font}`;
  ctx.textBaseline = "bottom";
  ctx.fillText("time (ms)", l + w / 2, height - 2);
  // lanes: row r's centre, row 0 on top (the y range runs from nLanes - 0.5 down to -0.5)
  const lane = h / Math.max(1, lanes.nLanes);
  const axis = laneTicks(lanes);
  ctx.font = `12px ${font}`;
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  for (const tick of axis.ticks) ctx.fillText(tick.text, l - 6, t + (tick.row + 0.5) * lane, l - 8);
  ctx.save();
  ctx.translate(12, t + h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = "center";
  ctx.font = `14px ${font}`;
  ctx.fillText(axis.title, 0, 0);
  ctx.restore();
  paintLegend(ctx, legend, { left: l, bottom: t - 4, right: width, color, font, hidden });
  return { ticks, yRange: [lanes.nLanes - 0.5, -0.5] };
}

/**
 * The legend in one line above the plot area (plotly's horizontal legend at its top left):
 * a swatch and the colour key per entry; what does not fit is counted ("+3 more").
 */
export function paintLegend(ctx, entries, { left, bottom, right, color, font = "sans-serif", hidden = new Set() }) {
  ctx.font = `12px ${font}`;
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  const y = bottom - LEGEND_ROW_PX / 2;
  let x = left;
  let shown = 0;
  for (const [key, fill] of entries) {
    const widthPx = 24 + ctx.measureText(key).width + 14;
    const more = entries.length - shown - 1;
    if (x + widthPx > right - (more > 0 ? 60 : 0)) break;
    ctx.globalAlpha = hidden.has(key) ? 0.35 : 1;
    ctx.fillStyle = fill;
    ctx.fillRect(x, y - 6, 18, 12);
    ctx.fillStyle = color;
    ctx.fillText(key, x + 24, y);
    ctx.globalAlpha = 1;
    x += widthPx;
    shown += 1;
  }
  if (shown < entries.length) {
    ctx.fillStyle = color;
    ctx.fillText(`+${entries.length - shown} more`, x, y);
  }
  return shown;
}
