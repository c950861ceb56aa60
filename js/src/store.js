// What the browser holds of one run: events (or kernel-merged bars) per lane, keys, threads and
// step ends, kept per model so every view of a widget shares one copy.
//
// A lane is one depth of one thread. Within a lane events never overlap and arrive in start
// order (the recorder writes an event when it ends, and a lane's events end in start order),
// so appending keeps each lane sorted and a window query is two binary searches. An append
// that breaks the order only marks the lane for one sort before its next query.
import { keyInfo } from "./wire.js";

const LANE_SHIFT = 65536; // lane id = thread * LANE_SHIFT + depth (both uint16)

function grow(array, capacity) {
  const next = new array.constructor(capacity);
  next.set(array);
  return next;
}

/** The events of one (thread, depth), in start order: typed columns, valid up to `n`. */
export class Lane {
  constructor(thread, depth, capacity = 16) {
    this.thread = thread;
    this.depth = depth;
    this.n = 0;
    this.start = new Float64Array(capacity);
    this.end = new Float64Array(capacity);
    this.reach = new Float64Array(capacity); // running maximum of `end`: binary-searchable
    this.key = new Int32Array(capacity);
    this.count = new Uint32Array(capacity);
    this.dom = new Int32Array(capacity); // a merged kernel bar's main key (else its key)
    this.path = new Int32Array(capacity); // the event's call path (EventStore.resolvePaths; -1: not yet)
    this.self = new Float64Array(capacity); // the event's self time (ns, the kernel's; NaN: not sent)
    this.unresolved = 0; // events from here on may have no path yet
    this.sorted = true;
  }

  push(start, end, key, count, dom = key, selfNs = NaN) {
    const i = this.n;
    if (i === this.start.length) {
      const cap = Math.max(16, i * 2);
      for (const name of ["start", "end", "reach", "key", "count", "dom", "path", "self"]) this[name] = grow(this[name], cap);
    }
    if (i > 0 && start < this.start[i - 1]) this.sorted = false;
    this.start[i] = start;
    this.end[i] = end;
    this.reach[i] = i > 0 && this.reach[i - 1] > end ? this.reach[i - 1] : end;
    this.key[i] = key;
    this.count[i] = count;
    this.dom[i] = dom;
    this.path[i] = -1;
    this.self[i] = selfNs;
    this.n = i + 1;
  }

  /** Sort by start if an append arrived out of order (then rebuild the running maximum). */
  ensureSorted() {
    if (this.sorted) return;
    const n = this.n;
    const order = Array.from({ length: n }, (_, i) => i);
    order.sort((a, b) => this.start[a] - this.start[b] || this.end[a] - this.end[b]);
    for (const name of ["start", "end", "key", "count", "dom", "path", "self"]) {
      const old = this[name].slice(0, n);
      for (let i = 0; i < n; i++) this[name][i] = old[order[i]];
    }
    for (let i = 0; i < n; i++) {
      this.reach[i] = i > 0 && this.reach[i - 1] > this.end[i] ? this.reach[i - 1] : this.end[i];
    }
    this.sorted = true;
    this.unresolved = 0;
  }

  /** `[lo, hi)`: the events that end at or after `x0` and start at or before `x1`. */
  range(x0, x1) {
    this.ensureSorted();
    return [lowerBound(this.reach, this.n, x0), upperBound(this.start, this.n, x1)];
  }
}

/** First index in `a[0..n)` (ascending) whose value is >= `x`. */
export function lowerBound(a, n, x) {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index in `a[0..n)` (ascending) whose value is > `x`. */
export function upperBound(a, n, x) {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Lanes keyed by (thread, depth), with the extent and size of what they hold. */
export class LaneSet {
  constructor() {
    this.lanes = new Map();
    this.n = 0; // rows held (events, or bars)
    this.events = 0; // events they stand for (a merged bar counts its events)
    this.x0 = Infinity;
    this.x1 = -Infinity;
  }

  lane(thread, depth) {
    return this.lanes.get(thread * LANE_SHIFT + depth);
  }

  /** Append decoded columns (see wire.js decodeColumns). */
  append(cols) {
    let lastId = -1;
    let lane = null;
    for (let i = 0; i < cols.n; i++) {
      const id = cols.thread[i] * LANE_SHIFT + cols.depth[i];
      if (id !== lastId) {
        lane = this.lanes.get(id);
        if (!lane) {
          lane = new Lane(cols.thread[i], cols.depth[i]);
          this.lanes.set(id, lane);
        }
        lastId = id;
      }
      const s = cols.start[i];
      const e = cols.end[i];
      lane.push(s, e, cols.key[i], cols.count[i], cols.dom ? cols.dom[i] : cols.key[i], cols.selfNs ? cols.selfNs[i] : NaN);
      if (s < this.x0) this.x0 = s;
      if (e > this.x1) this.x1 = e;
      this.events += cols.count[i];
    }
    this.n += cols.n;
  }

  /** Deepest depth per thread index: `Map(thread -> max depth)`. */
  depths() {
    const out = new Map();
    for (const lane of this.lanes.values()) {
      if (!(out.get(lane.thread) >= lane.depth)) out.set(lane.thread, lane.depth);
    }
    return out;
  }
}

/** Step ends after a message: the first `step0` held ones, then the message's (its `step0`
 * says where they start: 0 replaces them all, the count held appends). */
export function withSteps(held, step0, ends) {
  const keep = Number.isFinite(step0) ? Math.max(0, Math.min(held.length, Math.floor(step0))) : held.length;
  if (keep === held.length) return concat(held, ends);
  return concat(held.subarray(0, keep), ends);
}

/** A bar set is too coarse for a pixel when it was merged at more than this many pixels. */
export const COARSE_SLACK = 1.5;

/** Everything the browser holds of the run `runId`. */
export class EventStore {
  constructor(runId = "") {
    this.version = 0; // bumped on every change: views compare it to skip needless redraws
    this.reset(runId);
  }

  reset(runId = this.runId) {
    this.runId = runId;
    this.keys = [];
    this._codes = null;
    this.threadNames = new Map();
    this.whole = new LaneSet();
    this.wholePx = 0; // 0: raw events; else the pixel (ms) the whole-run bars were merged at
    this.detail = null; // {window: [x0, x1], pxMs, set: LaneSet}: a kernel answer for a zoom
    this.stepEnds = new Float64Array(0);
    this.complete = false;
    this.pathParent = []; // call path id -> its parent's id (-1: a root)
    this.pathIds = new Map(); // (parent, key) as one number -> call path id
    this.pathsAt = -1; // the version resolvePaths last saw
    this.version += 1;
  }

  /** True while the store holds raw events (not kernel-merged bars). */
  get raw() {
    return this.wholePx === 0;
  }

  get empty() {
    return this.whole.n === 0;
  }

  /** Apply decoded `events` / `bars` columns; false when they belong to another run. */
  apply(cols) {
    if (cols.run !== this.runId) return false;
    if (cols.type === "events") {
      if (cols.reset) this.reset();
      this.addKeys(cols.key0, cols.keys);
      this.addThreads(cols.threads);
      if (!this.raw) this.detail = this.detail && { ...this.detail, stale: true };
      this.whole.append(cols);
      this.stepEnds = withSteps(this.stepEnds, cols.step0, cols.stepEnds);
      this.complete = cols.complete;
    } else if (cols.type === "bars") {
      this.keys = [];
      this._codes = null;
      this.addKeys(0, cols.keys);
      this.addThreads(cols.threads);
      const set = new LaneSet();
      set.append(cols);
      if (cols.window) {
        this.detail = { window: cols.window, pxMs: cols.pxMs, set, stale: false };
      } else {
        this.whole = set;
        this.wholePx = cols.pxMs > 0 ? cols.pxMs : Number.MIN_VALUE;
        if (this.detail) this.detail = { ...this.detail, stale: true };
        this.complete = false;
      }
      this.stepEnds = withSteps(this.stepEnds, cols.step0, cols.stepEnds);
    } else {
      return false;
    }
    this.version += 1;
    return true;
  }

  addKeys(key0, entries) {
    entries.forEach((entry, i) => {
      this.keys[key0 + i] = keyInfo(entry);
    });
    if (entries.length) this._codes = null;
  }

  /** Each key's colour code (keys of one class or kind share one): for level of detail. */
  get codes() {
    if (!this._codes) {
      const seen = new Map();
      this._codes = Int32Array.from(this.keys, (info) => {
        const ck = info ? info.colorKey : "?";
        if (!seen.has(ck)) seen.set(ck, seen.size);
        return seen.get(ck);
      });
    }
    return this._codes;
  }

  addThreads(threads) {
    for (const [index, name] of Object.entries(threads || {})) this.threadNames.set(Number(index), name);
  }

  /**
   * The lanes to draw the window `[x0, x1]` from at `pixel` ms per pixel: the whole-run set or
   * a detail answer that covers the window and is finer. `coarse`: finer bars are needed.
   */
  source(x0, x1, pixel) {
    let set = this.whole;
    let pxMs = this.raw ? 0 : this.wholePx;
    const d = this.detail;
    if (d && d.window[0] <= x0 && d.window[1] >= x1 && (this.raw ? false : d.pxMs < pxMs)) {
      set = d.set;
      pxMs = d.pxMs;
    }
    return { set, pxMs, coarse: pxMs > pixel * COARSE_SLACK, stale: set !== this.whole && d.stale };
  }

  /**
   * Give each raw event its call path (the key under its parent's path: the call of the lane
   * above containing it), for the readable merge. Only events not resolved before are looked
   * at (a call whose parent has not ended yet waits for it), so a repaint costs nothing here
   * and a refresh its new events. Returns `pathParent`.
   */
  resolvePaths() {
    if (this.pathsAt === this.version) return this.pathParent;
    this.pathsAt = this.version;
    const lanes = [...this.whole.lanes.values()].sort((a, b) => a.depth - b.depth);
    for (const lane of lanes) lane.ensureSorted();
    for (const lane of lanes) {
      const up = lane.depth > 0 ? this.whole.lane(lane.thread, lane.depth - 1) : null;
      let first = lane.n;
      for (let i = lane.unresolved; i < lane.n; i++) {
        if (lane.path[i] >= 0) continue;
        let parent = -1;
        if (lane.depth > 0) {
          const j = up ? upperBound(up.start, up.n, lane.start[i]) - 1 : -1;
          parent = j >= 0 && up.end[j] >= lane.end[i] ? up.path[j] : -1;
          if (parent < 0) {
            if (first === lane.n) first = i;
            continue;
          }
        }
        lane.path[i] = this.pathId(parent, lane.key[i]);
      }
      lane.unresolved = first;
    }
    return this.pathParent;
  }

  pathId(parent, key) {
    const name = (parent + 1) * 2 ** 32 + key; // exact in a double while paths < 2 ** 20
    let id = this.pathIds.get(name);
    if (id === undefined) {
      id = this.pathParent.length;
      this.pathParent.push(parent);
      this.pathIds.set(name, id);
    }
    return id;
  }

  /** The self time (whole ns) of the event of lane (thread, depth) spanning [s, e] ms, as the
   * kernel sent it (aggregates.children_ns: the browser does not work it out); null when the
   * lane holds no such event or its self time was not sent. */
  selfNs(thread, depth, s, e) {
    const lane = this.whole.lane(thread, depth);
    if (!lane) return null;
    lane.ensureSorted();
    for (let i = lowerBound(lane.start, lane.n, s); i < lane.n && lane.start[i] === s; i++) {
      if (lane.end[i] === e) return Number.isNaN(lane.self[i]) ? null : lane.self[i];
    }
    return null;
  }

  /** The name of thread index `t` ("thread 3" when the kernel did not name it). */
  threadName(t) {
    return this.threadNames.get(t) || `thread ${t}`;
  }
}

function concat(a, b) {
  if (b.length === 0) return a;
  const out = new Float64Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
