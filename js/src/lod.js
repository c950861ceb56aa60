// Level of detail: what to draw of a time window at a plot's pixel width, at a bounded cost.
//
// The rule is the kernel's (views/lod.py: merge_bars), so a run's bars merge alike whether the
// kernel merged them (a run past the raw limit) or the browser did (a zoom, a smaller run); a
// test runs both on the same events (tests/lab/test_lod_js.py). Per lane, an event at least one
// pixel wide is a bar of its own; a run of narrower events, each within a pixel of the run's
// reach and in the same pixel column of the window (columns counted from the window's start),
// becomes one merged bar (its count, and its key when the events share one, else MIXED with
// `dom`, the key of the colour with the most time in it by the kernel's rule, so a busy stretch
// reads as the classes that dominate it rather than as one long grey bar). That leaves at most about two bars per pixel column
// and lane; when the total is still above `maxBars` the pixel is widened until it fits. Events
// that only partly overlap the window count. Pure: plain typed arrays in, typed arrays out.
import { lowerBound, upperBound } from "./store.js";
import { MIXED } from "./wire.js";

export const MAX_BARS = 20000;
export const MAX_BARS_LIVE = 4000;
const PASSES = 4; // merges tried before the guaranteed fit (views/lod.py: _MAX_PASSES)

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
 * index of its item; `pixel` is the (possibly widened) merge pixel, `screenPx` the real one;
 * `rows` maps a row to its bars' `[lo, hi)` (each row's bars are in start order).
 */
export function levelOfDetail(items, x0, x1, widthPx, maxBars = MAX_BARS, codes = null) {
  const span = x1 > x0 ? x1 - x0 : 1e-9;
  const screenPx = span / Math.max(1, widthPx);
  const ranges = items.map((item) => windowRange(item.lane, x0, x1));
  let pixel = screenPx;
  // the widening passes and the guaranteed fit of views/lod.py, step for step
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
      }
      total += 1;
    }
    if (out && total > first) out.rows.set(row, [first, total]);
  }
  if (out) out.n = total;
  return total;
}

const TIME = new Map(); // dominant()'s tables, kept between calls (one per bar drawn)
const LOWEST = new Map();

/**
 * The key with the most time among items `[lo, hi)` of a lane: views/lod.py's `_dominant`
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
