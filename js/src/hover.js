// Our own hover for the flame chart: plotly's would need one hover point per bar. The pointer
// is mapped to (time, row) with the axis ranges and the plot area, the bar found by binary
// search among the drawn bars of that row, and described in a small tooltip.
import { clockText, countText, durationText, toNs } from "./format.js";

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

/**
 * The lines of a bar's tooltip. `bar`: `{start, end, count, info, selfNs}` (times in ms) where
 * `info` is a key info (`label`, `kind`, `colorKey`) or null for a mixed merged bar (then
 * `dominant`, the key info with the most time, when known), and `selfNs` (whole ns) null when
 * unknown. `group`: the bar stands for one call path's calls (the readable merge), as wide as
 * their total time. Numbers in the kernel's spelling (format.js, the twin of everyo/spelling.py).
 */
export function tooltipLines(bar) {
  const [s, e] = [toNs(bar.start), toNs(bar.end)];
  if (bar.group) {
    // one call path's calls, laid out by their total time (not where they ran)
    const calls = `${countText(bar.count)} ${bar.count === 1 ? "call" : "calls"}`;
    return [
      `${bar.info ? bar.info.label : "?"} ×${countText(bar.count)}`,
      `${calls} · total ${durationText(e - s)}`,
      bar.info ? bar.info.kind : "",
      "merged by call path: zoom in to see each call",
    ].filter(Boolean);
  }
  if (bar.count > 1) {
    return [
      `merged: ${countText(bar.count)} events · ${durationText(e - s)}`,
      bar.info ? bar.info.colorKey : bar.dominant ? `mixed, mostly ${bar.dominant.colorKey}` : "mixed",
      `from ${clockText(s)} to ${clockText(e)} ms`,
      "zoom in to see them",
    ];
  }
  const lines = [
    bar.info ? bar.info.label : "?",
    bar.info ? bar.info.kind : "",
    `start ${clockText(s)} ms · duration ${durationText(e - s)}`,
  ];
  if (bar.selfNs !== null && bar.selfNs !== undefined) lines.push(`self ${durationText(bar.selfNs)}`);
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
