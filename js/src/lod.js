// Level of detail: what to draw of a time window at a plot's pixel width, at a bounded cost.
//
// The rule is the kernel's (views/flame/lod.py: merge_bars), so a run's bars merge alike whether the
// kernel merged them (a run past the raw limit) or the browser did (a zoom, a smaller run); a
// test runs both on the same events (tests/lab/test_lod_js.py). Per lane, an event at least one
// pixel wide is a bar of its own; a run of narrower events, each within a pixel of the run's
// reach and in the same pixel column of the window (columns counted from the window's start),
// becomes one merged bar (its count, and its key when the events share one, else MIXED with
// `dom`, the key of the colour with the most time in it by the kernel's rule, so a busy stretch
// reads as the classes that dominate it rather than as one long grey bar). That leaves at most about two bars per pixel column
// and lane; when the total is still above `maxBars` the pixel is widened until it fits. Events
// that only partly overlap the window count. Pure: plain typed arrays in, typed arrays out.
//
// Zoomed out, that still leaves a wash of thin bars no one can read: the readable merge
// (`readableLanes`, views/flame/lod.py: merge_readable) runs first. The window is cut into cells
// (runs of whole training steps when the run has steps, else slices of time), each at least
// CELL_PX wide; per lane, two or more consecutive calls narrower than READABLE_PX that lie
// inside one cell become one bar per call path (its key under its parent's path), laid out as
// the icicle lays out a call tree: a call path's bar as wide as its calls' total time, under
// its parent's bar; the first ones at their first call. Zooming in, calls grow past
// READABLE_PX and are their own bars again.
import { lowerBound, upperBound } from "./store.js";
import { MIXED } from "./wire.js";

export const MAX_BARS = 20000;
export const READABLE_PX = 60; // a call narrower than this has no room for its name
export const CELL_PX = 320; // a readable merge's cell: room for a few labelled bars
export const MAX_BARS_LIVE = 4000;
const PASSES = 4; // merges tried before the guaranteed fit (views/flame/lod.py: _MAX_PASSES)

/** `[lo, hi)` of the events of `lane` overlapping `[x0, x1]` (sorting it first if needed). */
export function windowRange(lane, x0, x1) {
  if (lane.ensureSorted) lane.ensureSorted();
  return [lowerBound(lane.reach, lane.n, x0), upperBound(lane.start, lane.n, x1)];
}

/**
 * Bars for the window `[x0, x1]` at `widthPx` pixels.
 *
 * `items` are `{row, lane}` with `lane` holding sorted typed columns `n, start, end, reach,
 * key, count` (a store Lane). `codes` (optional) maps a key to its colour code: a merged run
 * of keys of one colour keeps its first key; without it, of one key. Returns `{n, start, end, row, key, count, lane, x0, x1, pixel,
 * screenPx, rows}`: per bar its extent (ms), row, key (MIXED when mixed), `dom` (the key with
 * the most time: `key` itself unless mixed; MIXED for a kernel bar of several colours), event count and the
 * index of its item; `group` 1 for a call path's bar of the readable merge (`readable`:
 * `{stepEnds, pathParent}`, the lanes then need a `path` column); `pixel` is the (possibly widened) merge pixel, `screenPx` the real one;
 * `rows` maps a row to its bars' `[lo, hi)` (each row's bars are in start order).
 */
export function levelOfDetail(items, x0, x1, widthPx, maxBars = MAX_BARS, codes = null, readable = null) {
  const span = x1 > x0 ? x1 - x0 : 1e-9;
  const screenPx = span / Math.max(1, widthPx);
  let ranges = items.map((item) => windowRange(item.lane, x0, x1));
  if (readable) {
    const edges = cellEdges(x0, x1, screenPx, readable.stepEnds);
    items = readableLanes(items, ranges, edges, READABLE_PX * screenPx, readable.pathParent);
    ranges = items.map((item) => [0, item.lane.n]);
  }
  let pixel = screenPx;
  // the widening passes and the guaranteed fit of views/flame/lod.py, step for step
  let count = scan(items, ranges, pixel, codes, null, x0);
  for (let pass = 1; pass < PASSES && count > maxBars; pass++) {
    pixel *= (1.25 * count) / maxBars;
    count = scan(items, ranges, pixel, codes, null, x0);
  }
  if (count > maxBars) {
    // Guaranteed fit: a merged bar sits between two wide events or gaps, each a pixel.
    pixel *= (1.25 * count) / maxBars;
    const lanes = ranges.filter(([lo, hi]) => hi > lo).length;
    const room = maxBars - 6 * lanes;
    pixel = room > 0 ? Math.max(pixel, (2 * span * lanes) / room) : Infinity;
    count = scan(items, ranges, pixel, codes, null, x0);
  }
  const n = Math.min(count, maxBars);
  const out = {
    n: 0,
    start: new Float64Array(n),
    end: new Float64Array(n),
    row: new Int32Array(n),
    key: new Int32Array(n),
    count: new Uint32Array(n),
    dom: new Int32Array(n),
    lane: new Int32Array(n),
    group: new Uint8Array(n), // 1: the bar is one call path's calls of a readable merge
    x0,
    x1,
    pixel,
    screenPx,
    rows: new Map(),
  };
  scan(items, ranges, pixel, codes, out, x0, n);
  return out;
}

/** Count the bars (`out` null) or write them into `out` (at most `cap`); pixel columns count
 * from `x0`. */
function scan(items, ranges, pixel, codes, out, x0, cap = Infinity) {
  const column = (t) => (Number.isFinite(pixel) ? Math.floor((t - x0) / pixel) : 0);
  let total = 0;
  for (let li = 0; li < items.length; li++) {
    const { lane, row } = items[li];
    const [lo, hi] = ranges[li];
    const { start, end, key, count } = lane;
    const held = lane.dom || key; // a kernel bar of several classes: its main key
    const first = total;
    let i = lo;
    while (i < hi && total < cap) {
      const lo = i;
      const s = start[i];
      let e = end[i];
      let k = key[i];
      let c = count[i];
      i += 1;
      if (e - s < pixel) {
        // a run of narrow events, each starting within a pixel of the run's reach so far and
        // in the pixel column the run started in
        const col = column(s);
        while (i < hi && end[i] - start[i] < pixel && start[i] - e <= pixel && column(start[i]) === col) {
          if (end[i] > e) e = end[i];
          if (key[i] !== k && (codes === null || k === MIXED || codes[key[i]] !== codes[k])) k = MIXED;
          c += count[i];
          i += 1;
        }
      }
      if (out) {
        out.start[total] = s;
        out.end[total] = e;
        out.row[total] = row;
        out.key[total] = k;
        out.count[total] = c;
        out.dom[total] = k === MIXED ? dominant(start, end, held, codes, lo, i) : k;
        out.lane[total] = li;
        out.group[total] = i - lo === 1 && lane.group ? lane.group[lo] : 0;
      }
      total += 1;
    }
    if (out && total > first) out.rows.set(row, [first, total]);
  }
  if (out) out.n = total;
  return total;
}

/**
 * The cells' edges (ms, ascending, from -Infinity to Infinity) for the window `[x0, x1]` at
 * `screenPx` ms per pixel: with step ends, every k-th one, k the smallest power of two whose k
 * steps are on average CELL_PX wide (counted from the run's first step, so a pan keeps them);
 * without, multiples of CELL_PX pixels from time 0.
 */
export function cellEdges(x0, x1, screenPx, stepEnds = null) {
  const cell = CELL_PX * screenPx;
  const edges = [-Infinity];
  const n = stepEnds ? stepEnds.length : 0;
  if (n >= 2) {
    const mean = (stepEnds[n - 1] - stepEnds[0]) / (n - 1);
    let k = 1;
    while (k * mean < cell && k < n) k *= 2;
    const lo = lowerBound(stepEnds, n, x0);
    const hi = upperBound(stepEnds, n, x1);
    // from the last chosen end before the window to the first after it
    for (let j = Math.max(k - 1, Math.floor(lo / k) * k - 1); j < n; j += k) {
      edges.push(stepEnds[j]);
      if (j >= hi) break;
    }
  } else {
    for (let m = Math.floor(x0 / cell); m <= Math.ceil(x1 / cell); m++) edges.push(m * cell);
  }
  edges.push(Infinity);
  return Float64Array.from(edges);
}

/** A lane of bars built by the readable merge: the columns levelOfDetail reads, grown by push. */
class BuiltLane {
  constructor(capacity) {
    this.n = 0;
    this.start = new Float64Array(capacity);
    this.end = new Float64Array(capacity);
    this.reach = new Float64Array(capacity);
    this.key = new Int32Array(capacity);
    this.count = new Uint32Array(capacity);
    this.dom = new Int32Array(capacity);
    this.group = new Uint8Array(capacity);
  }

  /** Append a bar, pushed right of the last one if it would overlap it (rows never overlap). */
  push(start, end, key, count, dom, group) {
    const i = this.n;
    const shift = i > 0 && start < this.end[i - 1] ? this.end[i - 1] - start : 0;
    this.start[i] = start + shift;
    this.end[i] = end + shift;
    this.reach[i] = end + shift;
    this.key[i] = key;
    this.count[i] = count;
    this.dom[i] = dom;
    this.group[i] = group;
    this.n = i + 1;
  }
}

/**
 * The readable merge (views/flame/lod.py: merge_readable, step for step): per item, a lane of bars
 * where each run of two or more consecutive calls narrower than `minMs`, inside one cell of
 * `edges`, is replaced by one bar per call path. A call whose parent (the call of the row
 * above containing its start) was merged joins its parent's bar: its path's bar is placed
 * after its earlier siblings' inside the parent's; any other path's bar starts at its first
 * call, or right after the bar before it. `pathParent[p]` is path p's parent path (-1: none);
 * a lane's `path` column gives each event's path (-1: not known yet, never merged). Work:
 * linear in the events of `ranges`.
 */
export function readableLanes(items, ranges, edges, minMs, pathParent) {
  const order = items.map((_, i) => i).sort((a, b) => items[a].row - items[b].row);
  const done = new Map(); // row -> {lane, lo, groupOf}: a lane merged, for the row below
  const out = new Array(items.length);
  const ids = { next: 0, paths: pathParent.length + 1 }; // groups numbered across lanes
  for (const li of order) {
    const { lane, row } = items[li];
    const [lo, hi] = ranges[li];
    const merged = mergeLane(lane, lo, hi, edges, minMs, pathParent, done.get(row - 1), ids);
    done.set(row, { lane, lo, groupOf: merged.groupOf });
    out[li] = { ...items[li], lane: merged.lane };
  }
  return out;
}

/** One lane's readable merge (see readableLanes); `above`: the row above, when merged. */
function mergeLane(lane, lo, hi, edges, minMs, pathParent, above, ids) {
  const { start, end, key, count, path } = lane;
  const built = new BuiltLane(Math.max(1, hi - lo));
  const groupOf = new Array(hi - lo).fill(null); // each event's group, when merged
  let c = 0; // the cell of the event at i: edges[c] <= start < edges[c + 1]
  let p = above ? above.lo : 0; // the row above's event that may contain the one at i
  const cellOf = (t) => {
    while (edges[c + 1] <= t) c += 1;
    return c;
  };
  const inCell = (i) => {
    const k = cellOf(start[i]);
    return path[i] >= 0 && end[i] - start[i] < minMs && end[i] <= edges[k + 1];
  };
  const dom = lane.dom || key;
  let i = lo;
  while (i < hi) {
    if (!inCell(i)) {
      built.push(start[i], end[i], key[i], count[i], dom[i], 0);
      i += 1;
      continue;
    }
    const cell = c;
    let j = i + 1;
    while (j < hi && start[j] < edges[cell + 1] && inCell(j)) j += 1;
    if (j - i < 2) {
      built.push(start[i], end[i], key[i], count[i], dom[i], 0);
      i = j;
      continue;
    }
    // one run: group its calls by call path, under their parent's group when it has one
    const groups = [];
    const byId = new Map();
    let segment = 0; // roots after a merged parent's children start a new set of groups
    let lastChild = false;
    for (let k = i; k < j; k++) {
      let parent = null;
      if (above && pathParent[path[k]] >= 0) {
        const al = above.lane;
        while (p + 1 < al.n && al.start[p + 1] <= start[k]) p += 1;
        if (p >= above.lo && p - above.lo < above.groupOf.length && al.start[p] <= start[k] && al.end[p] >= end[k]) {
          parent = above.groupOf[p - above.lo];
        }
      }
      if (!parent && lastChild) segment += 1;
      lastChild = parent !== null;
      // a number per (parent group, path) or (segment, path): no string per call
      const id = parent ? parent.id * ids.paths + path[k] : -(segment * ids.paths + path[k]) - 1;
      let g = byId.get(id);
      if (!g) {
        g = { id: ids.next++, parent, first: start[k], total: 0, count: 0, key: key[k], x: 0, cursor: 0 };
        byId.set(id, g);
        groups.push(g);
      }
      g.total += end[k] - start[k];
      g.count += count[k];
      groupOf[k - lo] = g;
    }
    let reach = built.n ? built.end[built.n - 1] : -Infinity;
    for (const g of groups) {
      if (g.parent) {
        g.x = g.parent.cursor;
        g.parent.cursor += g.total;
      } else {
        g.x = Math.max(g.first, reach);
        reach = g.x + g.total;
      }
      g.cursor = g.x;
    }
    const placed = groups.slice().sort((a, b) => a.x - b.x);
    for (const g of placed) built.push(g.x, g.x + g.total, g.key, g.count, g.key, 1);
    i = j;
  }
  return { lane: built, groupOf };
}

const TIME = new Map(); // dominant()'s tables, kept between calls (one per bar drawn)
const LOWEST = new Map();

/**
 * The key with the most time among items `[lo, hi)` of a lane: views/flame/lod.py's `_dominant`
 * rule, step for step. By colour when `codes` is given: the colour code with the most time
 * (durations in whole nanoseconds, so the sums are exact and ties are ties), the lowest code on
 * a tie; of that colour, its lowest key. A kernel bar counts its whole extent for its main key
 * (`held`); one whose main key is unknown (MIXED) counts for none. MIXED when no item has a key.
 */
export function dominant(start, end, held, codes, lo, hi) {
  const time = TIME; // colour code -> ns
  const lowest = LOWEST; // colour code -> its lowest key here
  time.clear();
  lowest.clear();
  for (let j = lo; j < hi; j++) {
    const k = held[j];
    if (k === MIXED) continue; // a kernel bar whose main key is unknown: no colour to count
    const code = codes === null ? k : codes[k];
    const ns = Math.round(end[j] * 1e6) - Math.round(start[j] * 1e6);
    time.set(code, (time.get(code) || 0) + ns);
    if (!lowest.has(code) || k < lowest.get(code)) lowest.set(code, k);
  }
  let best = MIXED;
  let most = -Infinity;
  for (const [code, ns] of time) {
    if (ns > most || (ns === most && code < best)) {
      best = code;
      most = ns;
    }
  }
  return time.size ? lowest.get(best) : MIXED;
}

/** Index of the drawn bar of `row` under time `t` (within `slack` ms), or -1. */
export function findBar(bars, row, t, slack = 0) {
  const range = bars.rows.get(row);
  if (!range) return -1;
  const [lo, hi] = range;
  // last bar starting at or before t + slack
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (bars.start[mid] <= t + slack) a = mid + 1;
    else b = mid;
  }
  let best = -1;
  let bestDist = Infinity;
  for (let i = a - 1; i >= lo && i >= a - 3; i--) {
    const drawnEnd = Math.max(bars.end[i], bars.start[i] + bars.screenPx);
    const dist = t < bars.start[i] ? bars.start[i] - t : t > drawnEnd ? t - drawnEnd : 0;
    if (dist <= slack && dist < bestDist) {
      best = i;
      bestDist = dist;
    }
  }
  return best;
}
