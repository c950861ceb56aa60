// Our own hover for the flame chart: plotly's would need one hover point per bar. The pointer
// is mapped to (time, row) with the axis ranges and the plot area, the bar found by binary
// search among the drawn bars of that row, and described in a small tooltip.
import { formatClock, formatMs } from "./format.js";

/**
 * The data coordinates under a pointer at (`px`, `py`) pixels from the plot area's top-left
 * corner. `size` is plotly's `_fullLayout._size` (`w`, `h`), `xRange` the x axis range and
 * `yRange` the y axis range (bottom value first). Null outside the plot area.
 */
export function pointerToData(px, py, size, xRange, yRange) {
  if (!size || px < 0 || py < 0 || px > size.w || py > size.h) return null;
  const t = xRange[0] + (px / size.w) * (xRange[1] - xRange[0]);
  const y = yRange[1] + (py / size.h) * (yRange[0] - yRange[1]);
  return { t, y, row: Math.round(y), inRow: Math.abs(y - Math.round(y)) <= 0.5 };
}

const ms = (v) => `${formatMs(v)} ms`;

/**
 * The lines of a bar's tooltip. `bar`: `{start, end, count, info, selfMs}` where `info` is a
 * key info (`label`, `kind`, `colorKey`) or null for a mixed merged bar (then `dominant`, the
 * key info with the most time, when known), and `selfMs` null when unknown.
 */
export function tooltipLines(bar) {
  const span = bar.end - bar.start;
  if (bar.count > 1) {
    return [
      `merged: ${bar.count.toLocaleString("en-US")} events · ${ms(span)}`,
      bar.info ? bar.info.colorKey : bar.dominant ? `mixed, mostly ${bar.dominant.colorKey}` : "mixed",
      `from ${formatClock(bar.start)} to ${formatClock(bar.end)} ms`,
      "zoom in to see them",
    ];
  }
  const lines = [
    bar.info ? bar.info.label : "?",
    bar.info ? bar.info.kind : "",
    `start ${formatClock(bar.start)} ms · duration ${ms(span)}`,
  ];
  if (bar.selfMs !== null && bar.selfMs !== undefined) lines.push(`self ${ms(bar.selfMs)}`);
  return lines.filter(Boolean);
}

/** Fill the tooltip element with `lines` (the first in bold) and place it near the pointer. */
export function showTooltip(tip, lines, x, y, boxWidth) {
  const doc = tip.ownerDocument;
  tip.replaceChildren(...lines.map((text, i) => {
    const line = doc.createElement(i === 0 ? "b" : "div");
    line.textContent = text;
    if (i === 0) line.style.display = "block";
    return line;
  }));
  tip.style.display = "block";
  const left = x + 14 + tip.offsetWidth > boxWidth ? Math.max(0, x - 14 - tip.offsetWidth) : x + 14;
  tip.style.left = `${left}px`;
  tip.style.top = `${y + 14}px`;
}
