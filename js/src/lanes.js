// Rows of the flame chart: one per (thread, depth). Threads in order of first appearance (their
// small index), each a band as tall as its deepest depth + 1, one empty row between bands.
// Row 0 is drawn on top (the y axis runs from nLanes - 0.5 at the bottom to -0.5 at the top).

/**
 * Lay out the bands of `depths` (`Map(thread index -> deepest depth)`).
 *
 * Returns `{offset: Map(thread -> first row), nLanes, bands: [{thread, first, size, name}]}`;
 * the row of (thread, depth) is `offset.get(thread) + depth`.
 * `top`: `{rows, name}` of a band of no thread above them all (rows 0 to `rows - 1`: the
 * sampled call tree of a run without events), `thread` null in `bands`.
 */
export function layoutLanes(depths, threadName = (t) => `thread ${t}`, top = null) {
  const threads = [...depths.keys()].sort((a, b) => a - b);
  const offset = new Map();
  const bands = [];
  let row = 0;
  if (top && top.rows > 0) {
    bands.push({ thread: null, first: 0, size: top.rows, name: top.name });
    row = top.rows + 1;
  }
  for (const thread of threads) {
    const size = depths.get(thread) + 1;
    offset.set(thread, row);
    bands.push({ thread, first: row, size, name: threadName(thread) });
    row += size + 1;
  }
  return { offset, nLanes: Math.max(1, row - 1), bands };
}

/** The y axis of the flame chart: depth 0 on top, never autoranged, bands labelled. */
export function laneAxis(layout, colors = {}) {
  const axis = {
    range: [layout.nLanes - 0.5, -0.5],
    autorange: false,
    fixedrange: true,
    zeroline: false,
    showgrid: false,
    color: colors.font_color,
    ticklabeloverflow: "allow", // no measuring of each label (see figure.js)
    tickangle: 0,
  };
  if (layout.bands.length > 1) {
    axis.tickmode = "array";
    axis.tickvals = layout.bands.map((b) => b.first);
    axis.ticktext = layout.bands.map((b) => b.name);
    axis.title = { text: "thread / depth" };
  } else {
    axis.title = { text: "depth" };
    if (layout.nLanes <= 30) axis.dtick = 1;
  }
  return axis;
}
