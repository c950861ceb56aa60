// Painting the flame chart's bars, labels and step markers on a canvas placed exactly under
// plotly's plot area: 20,000 bars are 20,000 fillRect calls, a few milliseconds.
import { barGroups, stepsInWindow } from "./figure.js";
import { countText } from "./format.js";

export const LABEL_MIN_PX = 60;
export const MAX_LABELS = 300;
const HALF_HEIGHT = 0.45; // of a row: bars of neighbouring rows do not touch

/**
 * The pixel mapping of a plot area `w` x `h` showing `[x0, x1]` and rows `0..nLanes-1`
 * (row 0 on top): `{x(t), rowTop(r), rowHeight}`.
 */
export function pixelMap(x0, x1, nLanes, w, h) {
  const sx = w / (x1 - x0 || 1);
  const lane = h / Math.max(1, nLanes);
  return {
    w,
    h,
    x: (t) => (t - x0) * sx,
    rowTop: (r) => (r + 0.5 - HALF_HEIGHT) * lane,
    rowHeight: 2 * HALF_HEIGHT * lane,
  };
}

/**
 * The rectangle `[left, right]` (pixels, clipped to the plot area) of bar `i`, at least one
 * pixel wide; null when it lies outside.
 */
export function barPixels(bars, i, map) {
  let left = map.x(bars.start[i]);
  let right = Math.max(map.x(bars.end[i]), left + 1);
  if (right < 0 || left > map.w) return null;
  if (left < 0) left = 0;
  if (right > map.w) right = map.w;
  return [left, right];
}

/** `text` cut to at most `chars` characters (an ellipsis marks the cut). */
export function fitText(text, chars) {
  if (chars <= 0) return "";
  return text.length <= chars ? text : chars <= 1 ? "…" : `${text.slice(0, chars - 1)}…`;
}

/**
 * Labels for the bars at least `minPx` wide on screen (the widest `max` of them, and not of a
 * hidden colour key): `[{i, x, width, text}]`, text cut to about what fits.
 */
export function labelPlan(bars, keys, map, hidden = new Set(), minPx = LABEL_MIN_PX, max = MAX_LABELS) {
  const wide = [];
  const minMs = minPx * ((bars.x1 - bars.x0) / map.w);
  for (let i = 0; i < bars.n; i++) {
    if (bars.end[i] - bars.start[i] < minMs) continue; // most bars: no array, no key lookup
    const info = keys[bars.key[i]];
    if (!info || hidden.has(info.colorKey)) continue;
    const px = barPixels(bars, i, map);
    if (px && px[1] - px[0] >= minPx) wide.push({ i, x: px[0], width: px[1] - px[0] });
  }
  if (wide.length > max) wide.sort((a, b) => b.width - a.width).length = max;
  for (const label of wide) {
    label.text = barText(keys[bars.key[label.i]].name, bars.count[label.i], Math.floor((label.width - 8) / 6.5));
  }
  return wide;
}

/**
 * A bar's label in at most `chars` characters: its name, and for a bar of several calls their
 * count (`Linear ×412`), kept whole while the name is cut.
 */
export function barText(name, count, chars) {
  if (count <= 1) return fitText(name, chars);
  const times = ` ×${countText(count)}`;
  return chars >= times.length + 2 ? fitText(name, chars - times.length) + times : fitText(name, chars);
}

/** Size the canvas to `w` x `h` CSS pixels at the device pixel ratio; returns its 2D context. */
export function prepareCanvas(canvas, w, h, dpr = 1) {
  const cw = Math.max(1, Math.round(w * dpr));
  const ch = Math.max(1, Math.round(h * dpr));
  if (canvas.width !== cw) canvas.width = cw;
  if (canvas.height !== ch) canvas.height = ch;
  // style writes only when the size changed: each one would mark the page's layout dirty
  if (canvas.style.width !== `${w}px`) canvas.style.width = `${w}px`;
  if (canvas.style.height !== `${h}px`) canvas.style.height = `${h}px`;
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return ctx;
}

/**
 * Paint bars (grouped by fill colour), labels and step markers. `hidden`: colour keys not to
 * paint; `colors`: the theme's (`text_on_bar`, `muted`); `labels`: an array that gets the
 * label texts painted. Returns how many bars were painted.
 */
export function paintFlame(ctx, { bars, keys, map, hidden = new Set(), colors = {}, stepEnds = [], font = "sans-serif", labels = null }) {
  let painted = 0;
  const top = map.rowTop;
  const height = Math.max(1, Math.round(map.rowHeight));
  for (const group of barGroups(bars, keys)) {
    if (hidden.has(group.colorKey)) continue;
    ctx.fillStyle = group.fill;
    for (const i of group.idx) {
      // as barPixels, without an array per bar; whole pixels: an unaligned rectangle is
      // antialiased, several times slower to fill
      const x0 = map.x(bars.start[i]);
      const x1 = map.x(bars.end[i]);
      if (x1 < 0 || x0 > map.w) continue;
      const left = Math.max(0, Math.floor(x0));
      const right = Math.min(map.w, Math.round(x1));
      ctx.fillRect(left, Math.round(top(bars.row[i])), Math.max(1, right - left), height);
      painted += 1;
    }
  }
  ctx.font = `11px ${font}`;
  ctx.textBaseline = "middle";
  ctx.fillStyle = colors.text_on_bar || "#111";
  for (const label of labelPlan(bars, keys, map, hidden)) {
    if (labels) labels.push(label.text);
    ctx.fillText(label.text, label.x + 3, top(bars.row[label.i]) + height / 2, label.width - 6);
  }
  paintSteps(ctx, stepEnds, bars.x0, bars.x1, map, colors.muted || "#888", font);
  return painted;
}

export const STEP_SPACING_PX = 8; // step markers closer than this are thinned out

/**
 * Dotted vertical lines at the step ends in the window (at most 200, and about one per
 * STEP_SPACING_PX pixels so they never hide the bars), a few of them numbered.
 */
export function paintSteps(ctx, stepEnds, x0, x1, map, color, font = "sans-serif", maxLabels = 10) {
  const max = Math.max(1, Math.min(200, Math.floor(map.w / STEP_SPACING_PX)));
  const shown = stepsInWindow(stepEnds, x0, x1, max);
  if (!shown.length) return;
  ctx.save();
  ctx.globalAlpha = 0.7;
  ctx.strokeStyle = color;
  ctx.lineWidth = 1;
  ctx.setLineDash([2, 3]);
  ctx.beginPath();
  for (const k of shown) {
    const x = Math.round(map.x(stepEnds[k])) + 0.5;
    ctx.moveTo(x, 0);
    ctx.lineTo(x, map.h);
  }
  ctx.stroke();
  ctx.fillStyle = color;
  ctx.font = `10px ${font}`;
  ctx.textAlign = "right";
  ctx.textBaseline = "top";
  const every = Math.max(1, Math.ceil(shown.length / maxLabels));
  shown.forEach((k, j) => {
    if (j % every === 0) ctx.fillText(`#${k}`, map.x(stepEnds[k]) - 2, 1);
  });
  ctx.restore();
}
