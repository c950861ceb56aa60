// everyo-lab 0.1.0 | dashboard.js | sources sha256:bdf451e67c8863a2 | built by js/build.mjs from js/src: do not edit

const __everyo_impl = ((globalThis.__everyoModules ??= {})["dashboard:bdf451e67c8863a2"] ??= (() => {

// ---- src/schema.js
const __everyo_src_schema_js = (() => {
const GROUP_HEADERS = {"name": "name", "path": "module [path]", "shape": "input shapes"};
const NO_VALUE = "–";
return { GROUP_HEADERS, NO_VALUE };
})();

// ---- src/format.js
const __everyo_src_format_js = (() => {
const { NO_VALUE } = __everyo_src_schema_js;

function toNs(ms) {
return Math.round(ms * 1e6);
}

function roundTo(n, unit) {
const rest = n % unit;
return (n - rest) / unit + (2 * rest >= unit ? 1 : 0);
}

function grouped(n) {
return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

const missing = (v) => v === null || v === undefined || Number.isNaN(v);

function countText(n) {
if (missing(n)) return NO_VALUE;
return n < 0 ? `-${grouped(-n)}` : grouped(n);
}

function durationText(ns) {
if (missing(ns)) return NO_VALUE;
if (ns < 0) return `-${durationText(-ns)}`;
if (ns === 0) return "0 ms";
if (ns < 1e6) {
let digits = Math.max(0, String(ns).length - 3);
let q = roundTo(ns, 10 ** digits);
if (q >= 1000) {
digits += 1;
q = roundTo(ns, 10 ** digits);
}
if (q * 10 ** digits < 1e6) return `0.${String(q).padStart(6 - digits, "0")} ms`;
}
const hundredths = roundTo(ns, 10000);
if (hundredths < 10000) return `${Math.floor(hundredths / 100)}.${String(hundredths % 100).padStart(2, "0")} ms`;
return `${grouped(roundTo(ns, 1e6))} ms`;
}

function clockText(ns) {
if (missing(ns)) return NO_VALUE;
const us = roundTo(Math.abs(ns), 1000);
return `${ns < 0 ? "-" : ""}${grouped(Math.floor(us / 1000))}.${String(us % 1000).padStart(3, "0")}`;
}

function secondsText(s) {
if (missing(s)) return NO_VALUE;
const tenths = Math.floor(Math.max(s, 0) * 10 + 0.5);
return `${Math.floor(tenths / 10)}.${tenths % 10} s`;
}
return { toNs, countText, durationText, clockText, secondsText };
})();

// ---- src/hover.js
const __everyo_src_hover_js = (() => {
const { clockText, countText, durationText, toNs } = __everyo_src_format_js;

function pointerToData(px, py, size, xRange, yRange) {
if (!size || px < 0 || py < 0 || px > size.w || py > size.h) return null;
const t = xRange[0] + (px / size.w) * (xRange[1] - xRange[0]);
const y = yRange[1] + (py / size.h) * (yRange[0] - yRange[1]);
return { t, y, row: Math.round(y), inRow: Math.abs(y - Math.round(y)) <= 0.5 };
}

function tooltipLines(bar) {
const [s, e] = [toNs(bar.start), toNs(bar.end)];
if (bar.group) {
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

function showTooltip(tip, lines, x, y, boxWidth) {
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
return { pointerToData, tooltipLines, showTooltip };
})();

// ---- src/lanes.js
const __everyo_src_lanes_js = (() => {

function layoutLanes(depths, threadName = (t) => `thread ${t}`, top = null) {
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

function laneAxis(layout, colors = {}) {
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
return { layoutLanes, laneAxis };
})();

// ---- src/wire.js
const __everyo_src_wire_js = (() => {

const MIXED = -1;

function bytesOf(buf) {
if (buf instanceof ArrayBuffer) return { buffer: buf, byteOffset: 0, byteLength: buf.byteLength };
if (buf && buf.buffer instanceof ArrayBuffer) return buf;
throw new TypeError("expected an ArrayBuffer or a view of one");
}

function typedColumn(buf, Type, n) {
const { buffer, byteOffset, byteLength } = bytesOf(buf);
const bytes = n * Type.BYTES_PER_ELEMENT;
if (bytes > byteLength) throw new RangeError(`buffer of ${byteLength} bytes, ${bytes} expected`);
if (byteOffset % Type.BYTES_PER_ELEMENT === 0) return new Type(buffer, byteOffset, n);
return new Type(buffer.slice(byteOffset, byteOffset + bytes));
}

function float64s(buf, n) {
if (!buf) return new Float64Array(0);
const all = Math.floor(bytesOf(buf).byteLength / 8);
return typedColumn(buf, Float64Array, Number.isInteger(n) ? Math.min(n, all) : all);
}

function decodeColumns(msg, buffers) {
const n = msg.n | 0;
const isBars = msg.type === "bars";
const tick = (msg.tick_ns || 1) / 1e6;
const t0 = msg.t0_ms || 0;
const rawStart = typedColumn(buffers[0], Uint32Array, n);
const rawDur = typedColumn(buffers[1], Uint32Array, n);
const KeyType = msg.key_bytes === 4 ? Uint32Array : Uint16Array;
const rawKey = typedColumn(buffers[4], KeyType, n);
const allOnes = msg.key_bytes === 4 ? 0xffffffff : 0xffff;
const start = new Float64Array(n);
const end = new Float64Array(n);
const key = new Int32Array(n);
for (let i = 0; i < n; i++) {
start[i] = t0 + rawStart[i] * tick;
end[i] = t0 + (rawStart[i] + rawDur[i]) * tick;
key[i] = rawKey[i] === allOnes ? MIXED : rawKey[i];
}
const count = isBars ? typedColumn(buffers[5], Uint32Array, n) : new Uint32Array(n).fill(1);
let dom = key;
if (isBars && buffers.length > 7) {
const rawDom = typedColumn(buffers[6], KeyType, n);
dom = new Int32Array(n);
for (let i = 0; i < n; i++) dom[i] = rawDom[i] === allOnes ? MIXED : rawDom[i];
}
return {
type: msg.type,
run: msg.run,
reset: Boolean(msg.reset),
n,
start,
end,
depth: typedColumn(buffers[2], Uint16Array, n),
thread: typedColumn(buffers[3], Uint16Array, n),
key,
count,
dom,
stepEnds: float64s(buffers[buffers.length - 1], msg.steps),
step0: Number.isInteger(msg.step0) ? msg.step0 : isBars ? 0 : Infinity,
keys: msg.keys || [],
key0: msg.key0 | 0,
threads: msg.threads || {},
window: isBars ? msg.window || null : null,
pxMs: isBars ? Number(msg.px_ms) || 0 : 0,
complete: Boolean(msg.complete),
};
}

function keyInfo(entry) {
const [kind, name, path, color] = entry;
return { kind, name, path, color, colorKey: kind === "module" ? name : kind, label: eventLabel(name, path) };
}

function eventLabel(name, path) {
return path && path !== name ? `${name} [${path}]` : String(name);
}
return { MIXED, typedColumn, decodeColumns, keyInfo, eventLabel };
})();

// ---- src/store.js
const __everyo_src_store_js = (() => {
const { keyInfo } = __everyo_src_wire_js;
const { toNs } = __everyo_src_format_js;

const LANE_SHIFT = 65536; // lane id = thread * LANE_SHIFT + depth (both uint16)

function grow(array, capacity) {
const next = new array.constructor(capacity);
next.set(array);
return next;
}

class Lane {
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
this.unresolved = 0; // events from here on may have no path yet
this.sorted = true;
}

push(start, end, key, count, dom = key) {
const i = this.n;
if (i === this.start.length) {
const cap = Math.max(16, i * 2);
for (const name of ["start", "end", "reach", "key", "count", "dom", "path"]) this[name] = grow(this[name], cap);
}
if (i > 0 && start < this.start[i - 1]) this.sorted = false;
this.start[i] = start;
this.end[i] = end;
this.reach[i] = i > 0 && this.reach[i - 1] > end ? this.reach[i - 1] : end;
this.key[i] = key;
this.count[i] = count;
this.dom[i] = dom;
this.path[i] = -1;
this.n = i + 1;
}

ensureSorted() {
if (this.sorted) return;
const n = this.n;
const order = Array.from({ length: n }, (_, i) => i);
order.sort((a, b) => this.start[a] - this.start[b] || this.end[a] - this.end[b]);
for (const name of ["start", "end", "key", "count", "dom", "path"]) {
const old = this[name].slice(0, n);
for (let i = 0; i < n; i++) this[name][i] = old[order[i]];
}
for (let i = 0; i < n; i++) {
this.reach[i] = i > 0 && this.reach[i - 1] > this.end[i] ? this.reach[i - 1] : this.end[i];
}
this.sorted = true;
this.unresolved = 0;
}

range(x0, x1) {
this.ensureSorted();
return [lowerBound(this.reach, this.n, x0), upperBound(this.start, this.n, x1)];
}
}

function lowerBound(a, n, x) {
let lo = 0;
let hi = n;
while (lo < hi) {
const mid = (lo + hi) >>> 1;
if (a[mid] < x) lo = mid + 1;
else hi = mid;
}
return lo;
}

function upperBound(a, n, x) {
let lo = 0;
let hi = n;
while (lo < hi) {
const mid = (lo + hi) >>> 1;
if (a[mid] <= x) lo = mid + 1;
else hi = mid;
}
return lo;
}

class LaneSet {
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
lane.push(s, e, cols.key[i], cols.count[i], cols.dom ? cols.dom[i] : cols.key[i]);
if (s < this.x0) this.x0 = s;
if (e > this.x1) this.x1 = e;
this.events += cols.count[i];
}
this.n += cols.n;
}

depths() {
const out = new Map();
for (const lane of this.lanes.values()) {
if (!(out.get(lane.thread) >= lane.depth)) out.set(lane.thread, lane.depth);
}
return out;
}
}

function withSteps(held, step0, ends) {
const keep = Number.isFinite(step0) ? Math.max(0, Math.min(held.length, Math.floor(step0))) : held.length;
if (keep === held.length) return concat(held, ends);
return concat(held.subarray(0, keep), ends);
}

const COARSE_SLACK = 1.5;

class EventStore {
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

get raw() {
return this.wholePx === 0;
}

get empty() {
return this.whole.n === 0;
}

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

selfNs(thread, depth, s, e) {
const below = this.whole.lane(thread, depth + 1);
const [sNs, eNs] = [toNs(s), toNs(e)];
let busy = 0;
if (below) {
const [lo, hi] = below.range(s, e);
for (let i = lo; i < hi; i++) {
const overlap = Math.min(eNs, toNs(below.end[i])) - Math.max(sNs, toNs(below.start[i]));
if (overlap > 0) busy += overlap;
}
}
return Math.max(0, eNs - sNs - busy);
}

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
return { Lane, lowerBound, upperBound, LaneSet, withSteps, COARSE_SLACK, EventStore };
})();

// ---- src/figure.js
const __everyo_src_figure_js = (() => {
const { laneAxis } = __everyo_src_lanes_js;
const { lowerBound, upperBound } = __everyo_src_store_js;
const { MIXED } = __everyo_src_wire_js;

const MERGED_COLOR = "#9e9e9e";
const MERGED_KEY = "merged"; // the legend entry of merged bars of several colours
const TRANSPARENT = "rgba(0,0,0,0)";
const MARGIN = { l: 60, r: 20, t: 40, b: 45 };

function withAlpha(color, alpha) {
const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color || "");
if (!m) return color;
const [r, g, b] = m.slice(1).map((h) => parseInt(h, 16));
return `rgba(${r},${g},${b},${alpha})`;
}

function traceUid(colorKey) {
return `ck-${colorKey.replace(/[^A-Za-z0-9-]/g, (c) => `_${c.charCodeAt(0).toString(16)}`)}`;
}

function colorKeys(keys) {
const seen = new Map();
for (const info of keys) if (info && !seen.has(info.colorKey)) seen.set(info.colorKey, info.color);
return [...seen.entries()];
}

function barGroups(bars, keys) {
const groups = new Map();
const group = (colorKey, fill) => {
const id = `${colorKey}\u0000${fill}`;
let g = groups.get(id);
if (!g) groups.set(id, (g = { colorKey, fill, idx: [] }));
return g;
};
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

function legendTraces(keys, hidden = new Set(), mixed = false) {
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

function hiddenKeys(data) {
return new Set((data || []).filter((t) => t.visible === "legendonly").map((t) => t.name));
}

function stepsInWindow(stepEnds, x0, x1, max = 200) {
const lo = lowerBound(stepEnds, stepEnds.length, x0);
const hi = upperBound(stepEnds, stepEnds.length, x1);
const stride = Math.max(1, Math.ceil((hi - lo) / max));
const out = [];
for (let k = lo; k < hi; k += stride) out.push(k);
return out;
}

function flameHeight(nLanes) {
return Math.round(Math.min(900, Math.max(280, 140 + 24 * nLanes)));
}

function flameLayout({ x0, x1, lanes, colors = {}, width, message }) {
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
return { MERGED_COLOR, MERGED_KEY, MARGIN, withAlpha, traceUid, colorKeys, barGroups, legendTraces, hiddenKeys, stepsInWindow, flameHeight, flameLayout };
})();

// ---- src/frames.js
const __everyo_src_frames_js = (() => {

const nextFrame = (fn) =>
typeof requestAnimationFrame === "function" ? requestAnimationFrame(fn) : setTimeout(fn, 16);

const cancelFrame = (id) =>
typeof cancelAnimationFrame === "function" ? cancelAnimationFrame(id) : clearTimeout(id);

function frameBatcher(schedule = nextFrame) {
let due = new Set();
let pending = false;
let cancelled = false;
const run = () => {
pending = false;
const fns = due;
due = new Set();
if (!cancelled) for (const fn of fns) fn();
};
const inFrame = (fn) => () => {
due.add(fn);
if (!pending && !cancelled) {
pending = true;
schedule(run);
}
};
inFrame.cancel = () => {
cancelled = true;
due.clear();
};
return inFrame;
}

function reportWaiter(draw, waitMs, { later = setTimeout, cancel = clearTimeout } = {}) {
let timer = null;
const drop = () => {
if (timer !== null) cancel(timer);
timer = null;
};
return {
data(live) {
if (!live) {
draw();
} else if (timer === null) {
timer = later(() => {
timer = null;
draw();
}, waitMs);
}
},
report: drop,
dispose: drop,
};
}
return { nextFrame, cancelFrame, frameBatcher, reportWaiter };
})();

// ---- src/idle.js
const __everyo_src_idle_js = (() => {

function whenIdle(fn, timeoutMs = 500, g = globalThis) {
if (typeof g.requestIdleCallback === "function") {
const id = g.requestIdleCallback(() => fn(), { timeout: timeoutMs });
return () => g.cancelIdleCallback(id);
}
const id = setTimeout(fn, 0);
return () => clearTimeout(id);
}
return { whenIdle };
})();

// ---- src/why_view.js
const __everyo_src_why_view_js = (() => {

function commit(model, values) {
for (const [name, value] of Object.entries(values)) model.set(name, value);
model.save_changes();
}

function rowTarget(row, groupBy) {
const target = { type: "row", group_by: groupBy || "name", kind: row.kind || "", name: String(row.name), label: row.label || String(row.name) };
if (groupBy === "shape") target.shapes = row.shapes || "";
return target;
}

function barTarget(bar, lane, info) {
if (!info) return null;
if (bar.count > 1) return { type: "row", group_by: "name", kind: info.kind, name: info.name, label: info.name };
return {
type: "bar", thread: lane.thread, depth: lane.depth, start_ms: bar.start, end_ms: bar.end,
kind: info.kind, name: info.name, path: info.path || "", label: info.label,
};
}

function selectsRow(target, row, groupBy) {
if (!target || target.type !== "row") return false;
const same = target.kind === (row.kind || "") && target.name === String(row.name);
return same && (target.group_by || "name") === groupBy && (groupBy !== "shape" || target.shapes === (row.shapes || ""));
}

function node(doc, tag, className, text) {
const el = doc.createElement(tag);
if (className) el.className = className;
if (text !== undefined && text !== null && text !== "") el.textContent = String(text);
return el;
}

function table(doc, className, headers, items, cells) {
const el = node(doc, "table", `everyo-table ${className}`);
const head = el.createTHead().insertRow();
for (const h of headers || []) head.appendChild(node(doc, "th", "", h));
const body = el.createTBody();
for (const item of items) {
const tr = body.insertRow();
for (const [text, bar, title] of cells(item)) {
const td = node(doc, "td", bar === undefined ? "" : "everyo-why-num");
if (bar !== undefined && bar !== null) {
const div = node(doc, "div", "everyo-share-bar");
div.style.width = `${Math.max(0, Math.min(100, (Number(bar) || 0) * 100))}%`;
td.appendChild(div);
}
td.appendChild(doc.createTextNode(text));
if (title) td.title = title;
tr.appendChild(td);
}
}
return el;
}

function treeNode(doc, item, depth = 0) {
const details = node(doc, "details", "everyo-why-node");
details.open = true;
const summary = node(doc, "summary");
summary.append(node(doc, "span", "everyo-why-share", item.share), node(doc, "span", "everyo-why-where", item.where));
if (item.function && item.where !== item.function) summary.append(node(doc, "span", "everyo-why-fn", item.function));
if (item.source) summary.append(node(doc, "code", "everyo-why-source", item.source));
details.appendChild(summary);
for (const child of item.children || []) details.appendChild(treeNode(doc, child, depth + 1));
if (item.more) details.appendChild(node(doc, "div", "everyo-why-more", item.more));
return details;
}

function renderWhy(doc, why, { onClose, onToggle } = {}) {
if (!why || !why.state) return null;
const box = node(doc, "div", "everyo-why-body");
box.dataset.state = why.state;
const head = node(doc, "div", "everyo-why-head");
head.append(node(doc, "b", "everyo-why-title", why.title));
if (why.status) head.append(node(doc, "span", "everyo-why-status", why.status));
const close = node(doc, "button", "everyo-why-close", "×");
close.title = "close";
if (onClose) close.addEventListener("click", onClose);
head.append(close);
box.appendChild(head);
if (why.summary) box.appendChild(node(doc, "div", "everyo-why-summary", why.summary));
if (why.message) box.appendChild(node(doc, "div", "everyo-why-message", why.message));
if (why.state === "lines" || why.state === "empty") {
const fold = node(doc, "div", "everyo-controls");
const button = node(doc, "button", "everyo-why-toggle", why.toggle);
if (onToggle) button.addEventListener("click", onToggle);
fold.append(button, node(doc, "span", "everyo-why-folded", why.folded));
box.appendChild(fold);
}
if (why.expand && why.expand.caption) box.appendChild(node(doc, "div", "everyo-why-caption", why.expand.caption));
const functions = why.functions || [];
if (functions.length) {
box.appendChild(table(doc, "everyo-why-functions", why.function_headers, functions, (f) => [
[f.total, f.bar], [f.self, null], [`${f.function}  (${f.where})`, undefined, f.file],
]));
}
const lines = why.lines || [];
if (lines.length) {
box.appendChild(table(doc, "everyo-why-lines", why.headers, lines, (l) => [
[l.self, l.bar], [l.total, null], [`${l.where}  ${l.function}`, undefined, l.file], [l.source],
]));
}
if (why.tree) {
const tree = node(doc, "div", "everyo-why-tree");
tree.appendChild(node(doc, "div", "everyo-why-caption", "call tree"));
tree.appendChild(treeNode(doc, why.tree));
box.appendChild(tree);
}
if (why.hint) box.appendChild(node(doc, "div", "everyo-why-hint", why.hint));
return box;
}

function livePanel(live, target) {
if (!target || !target.type || !live || !live.panels) return null;
const asRow = target.type === "bar" ? { type: "row", group_by: "name", kind: target.kind, name: target.name } : target;
const entry = live.panels.find(({ key }) => selectsRow(asRow, key, key.group_by));
if (entry) return entry.panel;
return { state: "pending", title: target.label || target.name, message: live.other || "" };
}

function mountWhy(doc, model, { onFrames = null, onOutside = null } = {}) {
const el = node(doc, "div", "everyo-why");
el.hidden = true;
let shown = null;
const selection = () => {
const target = model.get("why_target");
return target && target.type ? target : null;
};
const select = (target) => {
commit(model, { why_target: target || {} });
update();
updateLink();
};
const handlers = {
onClose: () => select(null),
onToggle: () => commit(model, { why_all_frames: !model.get("why_all_frames") }),
};
const choose = (selected) => {
if (!selected) return null;
const live = model.get("why_live");
if (live && live.panels && selected.type !== "outside") return livePanel(live, selected);
const why = model.get("why");
return why && why.state ? why : shown;
};
const update = () => {
const selected = selection();
const why = choose(selected);
if (why === shown) return;
shown = why;
if (onFrames) onFrames(framesOf(why, selected));
const body = renderWhy(doc, why, handlers);
el.hidden = !body;
if (body) el.replaceChildren(body);
else el.replaceChildren();
};
const link = node(doc, "div", "everyo-why-outside");
link.hidden = true;
let linkShown = "";
function updateLink() {
const outside = model.get("why_outside") || {};
const selected = selection();
const open = Boolean(selected && selected.type === "outside"); // its panel is there already
const text = JSON.stringify([outside, open]);
if (text === linkShown) return;
linkShown = text;
link.replaceChildren();
link.hidden = !outside.target || open;
if (link.hidden) return;
const button = node(doc, "button", "everyo-why-outside-link", outside.text);
button.title = outside.title || "";
button.addEventListener("click", () => {
if (onOutside) onOutside(outside.target);
else select(outside.target);
});
link.appendChild(button);
}
const updateAll = () => {
update();
updateLink();
};
updateAll();
return { el, link, update: updateAll, select, traits: ["why", "why_live", "why_target", "why_outside"] };
}

function framesOf(why, selected) {
const expand = why && why.expand && selected ? why.expand : null;
if (!expand) return null;
if (selected.type === "bar") return { ...expand, thread: selected.thread, start: selected.start_ms, end: selected.end_ms };
if (selected.type === "outside") return { ...expand, thread: null, start: expand.start_ms, end: expand.end_ms };
return null;
}
return { rowTarget, barTarget, selectsRow, treeNode, renderWhy, livePanel, mountWhy, framesOf };
})();

// ---- src/live_axes.js
const __everyo_src_live_axes_js = (() => {
const { MERGED_COLOR, MERGED_KEY, colorKeys } = __everyo_src_figure_js;

const MIN_TICK_PX = 80; // x tick labels at least this far apart
const LEGEND_ROW_PX = 18;

function engagesChart(ev) {
if (ev.type === "pointermove") return (ev.movementX || 0) !== 0 || (ev.movementY || 0) !== 0;
return ev.type === "pointerdown" || ev.type === "focusin";
}

function niceStep(span, maxTicks) {
const raw = Math.abs(span) / Math.max(1, maxTicks);
if (!(raw > 0) || !Number.isFinite(raw)) return 1;
const decade = 10 ** Math.floor(Math.log10(raw));
const m = [1, 2, 2.5, 5, 10].find((f) => f * decade >= raw * (1 - 1e-9));
return m * decade;
}

function xTicks(x0, x1, widthPx, minPx = MIN_TICK_PX) {
const step = niceStep(x1 - x0, Math.max(1, Math.floor(widthPx / minPx)));
const values = [];
const first = Math.ceil(x0 / step - 1e-9);
for (let k = first; k * step <= x1 + 1e-9 * step && values.length < 1000; k++) {
values.push(Math.abs(k * step) < step * 1e-9 ? 0 : k * step);
}
return { step, values };
}

function tickText(value, step) {
if (Math.abs(value) >= 10000 && step >= 1000) {
const k = value / 1000;
return `${Number.isInteger(k) ? k : k.toFixed(step % 1000 ? 1 : 0)}k`;
}
let decimals = 0;
while (decimals < 10 && Math.abs(step * 10 ** decimals - Math.round(step * 10 ** decimals)) > 1e-6) decimals += 1;
return value.toFixed(decimals);
}

function laneTicks(lanes) {
if (lanes.bands.length > 1) {
return { title: "thread / depth", ticks: lanes.bands.map((b) => ({ row: b.first, text: b.name })) };
}
const step = lanes.nLanes <= 30 ? 1 : niceStep(lanes.nLanes, 10);
const ticks = [];
for (let r = 0; r < lanes.nLanes; r += step) ticks.push({ row: r, text: String(r) });
return { title: "depth", ticks };
}

function legendEntries(keys, mixed = false) {
const entries = colorKeys(keys);
if (mixed) entries.push([MERGED_KEY, MERGED_COLOR]);
return entries;
}

function paintAxes(ctx, { x0, x1, lanes, size, width, height, colors = {}, font = "sans-serif", legend = [], hidden = new Set() }) {
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

function paintLegend(ctx, entries, { left, bottom, right, color, font = "sans-serif", hidden = new Set() }) {
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
return { engagesChart, niceStep, xTicks, tickText, laneTicks, legendEntries, paintAxes, paintLegend };
})();

// ---- src/lod.js
const __everyo_src_lod_js = (() => {
const { lowerBound, upperBound } = __everyo_src_store_js;
const { MIXED } = __everyo_src_wire_js;

const MAX_BARS = 20000;
const READABLE_PX = 60; // a call narrower than this has no room for its name
const CELL_PX = 320; // a readable merge's cell: room for a few labelled bars
const MAX_BARS_LIVE = 4000;
const PASSES = 4; // merges tried before the guaranteed fit (views/lod.py: _MAX_PASSES)

function windowRange(lane, x0, x1) {
if (lane.ensureSorted) lane.ensureSorted();
return [lowerBound(lane.reach, lane.n, x0), upperBound(lane.start, lane.n, x1)];
}

function levelOfDetail(items, x0, x1, widthPx, maxBars = MAX_BARS, codes = null, readable = null) {
const span = x1 > x0 ? x1 - x0 : 1e-9;
const screenPx = span / Math.max(1, widthPx);
let ranges = items.map((item) => windowRange(item.lane, x0, x1));
if (readable) {
const edges = cellEdges(x0, x1, screenPx, readable.stepEnds);
items = readableLanes(items, ranges, edges, READABLE_PX * screenPx, readable.pathParent);
ranges = items.map((item) => [0, item.lane.n]);
}
let pixel = screenPx;
let count = scan(items, ranges, pixel, codes, null, x0);
for (let pass = 1; pass < PASSES && count > maxBars; pass++) {
pixel *= (1.25 * count) / maxBars;
count = scan(items, ranges, pixel, codes, null, x0);
}
if (count > maxBars) {
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

function cellEdges(x0, x1, screenPx, stepEnds = null) {
const cell = CELL_PX * screenPx;
const edges = [-Infinity];
const n = stepEnds ? stepEnds.length : 0;
if (n >= 2) {
const mean = (stepEnds[n - 1] - stepEnds[0]) / (n - 1);
let k = 1;
while (k * mean < cell && k < n) k *= 2;
const lo = lowerBound(stepEnds, n, x0);
const hi = upperBound(stepEnds, n, x1);
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

function readableLanes(items, ranges, edges, minMs, pathParent) {
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

function dominant(start, end, held, codes, lo, hi) {
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

function findBar(bars, row, t, slack = 0) {
const range = bars.rows.get(row);
if (!range) return -1;
const [lo, hi] = range;
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
return { MAX_BARS, READABLE_PX, CELL_PX, MAX_BARS_LIVE, windowRange, levelOfDetail, cellEdges, readableLanes, dominant, findBar };
})();

// ---- src/paint.js
const __everyo_src_paint_js = (() => {
const { barGroups, stepsInWindow } = __everyo_src_figure_js;
const { countText } = __everyo_src_format_js;

const LABEL_MIN_PX = 60;
const MAX_LABELS = 300;
const HALF_HEIGHT = 0.45; // of a row: bars of neighbouring rows do not touch

function pixelMap(x0, x1, nLanes, w, h) {
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

function barPixels(bars, i, map) {
let left = map.x(bars.start[i]);
let right = Math.max(map.x(bars.end[i]), left + 1);
if (right < 0 || left > map.w) return null;
if (left < 0) left = 0;
if (right > map.w) right = map.w;
return [left, right];
}

function fitText(text, chars) {
if (chars <= 0) return "";
return text.length <= chars ? text : chars <= 1 ? "…" : `${text.slice(0, chars - 1)}…`;
}

function labelPlan(bars, keys, map, hidden = new Set(), minPx = LABEL_MIN_PX, max = MAX_LABELS) {
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

function barText(name, count, chars) {
if (count <= 1) return fitText(name, chars);
const times = ` ×${countText(count)}`;
return chars >= times.length + 2 ? fitText(name, chars - times.length) + times : fitText(name, chars);
}

function prepareCanvas(canvas, w, h, dpr = 1) {
const cw = Math.max(1, Math.round(w * dpr));
const ch = Math.max(1, Math.round(h * dpr));
if (canvas.width !== cw) canvas.width = cw;
if (canvas.height !== ch) canvas.height = ch;
if (canvas.style.width !== `${w}px`) canvas.style.width = `${w}px`;
if (canvas.style.height !== `${h}px`) canvas.style.height = `${h}px`;
const ctx = canvas.getContext("2d");
ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
ctx.clearRect(0, 0, w, h);
return ctx;
}

function paintFlame(ctx, { bars, keys, map, hidden = new Set(), colors = {}, stepEnds = [], font = "sans-serif", labels = null }) {
let painted = 0;
const top = map.rowTop;
const height = Math.max(1, Math.round(map.rowHeight));
for (const group of barGroups(bars, keys)) {
if (hidden.has(group.colorKey)) continue;
ctx.fillStyle = group.fill;
for (const i of group.idx) {
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

const STEP_SPACING_PX = 8; // step markers closer than this are thinned out

function paintSteps(ctx, stepEnds, x0, x1, map, color, font = "sans-serif", maxLabels = 10) {
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
return { LABEL_MIN_PX, MAX_LABELS, pixelMap, barPixels, fitText, labelPlan, barText, prepareCanvas, paintFlame, STEP_SPACING_PX, paintSteps };
})();

// ---- src/theme.js
const __everyo_src_theme_js = (() => {

function detectTheme(body, fallback = "light") {
if (!body) return fallback;
const flag = body.dataset ? body.dataset.jpThemeLight : undefined;
if (flag === "true") return "light";
if (flag === "false") return "dark";
const classes = body.classList;
if (classes && classes.contains("jp-theme-dark")) return "dark";
if (classes && classes.contains("jp-theme-light")) return "light";
return fallback;
}

function watchTheme(doc, onChange) {
const body = doc.body;
let current = detectTheme(body);
onChange(current);
if (typeof MutationObserver === "undefined" || !body) return () => {};
const observer = new MutationObserver(() => {
const next = detectTheme(body);
if (next !== current) {
current = next;
onChange(next);
}
});
observer.observe(body, { attributes: true, attributeFilter: ["data-jp-theme-light", "class"] });
return () => observer.disconnect();
}

function syncTheme(model, doc) {
return watchTheme(doc, (theme) => {
if (model.get("theme") !== theme) {
model.set("theme", theme);
model.save_changes();
}
});
}

const DEFAULT_COLORS = {
paper_bgcolor: "#ffffff",
plot_bgcolor: "#ffffff",
font_color: "#2a3f5f",
grid_color: "#ebf0f8",
line_color: "#c8d4e3",
muted: "#6b7a90",
text_on_bar: "#111111",
frame_bar: "#9ecae1",
};

function figureColors(themes, theme) {
const all = themes || {};
return { ...DEFAULT_COLORS, ...(all.light || {}), ...(all[theme] || {}) };
}
return { detectTheme, watchTheme, syncTheme, DEFAULT_COLORS, figureColors };
})();

// ---- src/zoom.js
const __everyo_src_zoom_js = (() => {

function parseRelayout(ev, current = null) {
if (!ev) return null;
if (ev["xaxis.autorange"] === true || (ev.xaxis && ev.xaxis.autorange === true)) return { whole: true };
let range = null;
if (Array.isArray(ev["xaxis.range"])) range = ev["xaxis.range"];
else if (ev.xaxis && Array.isArray(ev.xaxis.range)) range = ev.xaxis.range;
else if ("xaxis.range[0]" in ev || "xaxis.range[1]" in ev) {
const [c0, c1] = current || [NaN, NaN];
range = [ev["xaxis.range[0]"] ?? c0, ev["xaxis.range[1]"] ?? c1];
}
if (!range) return null;
const x0 = Number(range[0]);
const x1 = Number(range[1]);
if (!Number.isFinite(x0) || !Number.isFinite(x1) || x0 === x1) return null;
return x0 < x1 ? { x0, x1 } : { x0: x1, x1: x0 };
}

function sameWindow(a, b) {
if (!a || !b) return a === b;
const tol = 1e-6 * Math.max(Math.abs(a[1] - a[0]), Math.abs(b[1] - b[0]), 1e-9);
return Math.abs(a[0] - b[0]) <= tol && Math.abs(a[1] - b[1]) <= tol;
}

function wholeWindow(wallMs, extentEnd) {
const end = Math.max(Number(wallMs) || 0, Number.isFinite(extentEnd) ? extentEnd : 0);
return [0, end > 0 ? end : 1];
}

function followWindow(wallMs, extentEnd) {
const end = wholeWindow(wallMs, extentEnd)[1] * 1.1;
const decade = 10 ** Math.floor(Math.log10(end));
const nice = [1, 2, 2.5, 5, 10].find((m) => m * decade >= end);
return [0, nice * decade];
}
return { parseRelayout, sameWindow, wholeWindow, followWindow };
})();

// ---- src/flame_view.js
const __everyo_src_flame_view_js = (() => {
const { showTooltip, pointerToData, tooltipLines } = __everyo_src_hover_js;
const { MARGIN, flameHeight, flameLayout, hiddenKeys, legendTraces } = __everyo_src_figure_js;
const { cancelFrame, nextFrame } = __everyo_src_frames_js;
const { whenIdle } = __everyo_src_idle_js;
const { barTarget } = __everyo_src_why_view_js;
const { layoutLanes } = __everyo_src_lanes_js;
const { engagesChart, legendEntries, paintAxes } = __everyo_src_live_axes_js;
const { MAX_BARS, MAX_BARS_LIVE, findBar, levelOfDetail } = __everyo_src_lod_js;
const { fitText, paintFlame, pixelMap, prepareCanvas } = __everyo_src_paint_js;
const { figureColors } = __everyo_src_theme_js;
const { MIXED } = __everyo_src_wire_js;
const { followWindow, parseRelayout, sameWindow, wholeWindow } = __everyo_src_zoom_js;

const DETAIL_DEBOUNCE_MS = 150;
const REACT_IDLE_MS = 150; // a deferred Plotly.react runs at the latest this much later
const STALE_RETRY_MS = 2000; // while live, re-ask a zoomed window's detail at most this often
const MARGIN_X = MARGIN.l + MARGIN.r;
const CONFIG = {
displaylogo: false,
doubleClick: "autosize", // relayout {xaxis.autorange: true}: back to the whole run
scrollZoom: false,
modeBarButtonsToRemove: ["select2d", "lasso2d", "resetScale2d", "toImage"],
};

const now = () => (typeof performance === "object" ? performance.now() : Date.now());

function running(report) {
return Boolean(report && (report.live || report.status === "running"));
}

class FlameView {
constructor(doc, model, state, root, options = {}) {
this.doc = doc;
this.model = model;
this.state = state;
this.root = root;
this.getReport = options.report || (() => this.model.get("report") || {});
this.onSelect = options.onSelect || null; // a click on a bar: why_view.js barTarget
this.windowListeners = new Set(); // called with each new window shown (linked charts)
this.plotly = null;
this.zoom = null; // null: the whole run (and follow it while it grows)
this.panning = null; // the range of a pan drag in progress
this.drawn = null; // what the last redraw showed: {window, bars, items, lanes, signature, raw}
this.structure = ""; // what the last Plotly.react drew, to skip it when nothing changed
this.figured = false; // a Plotly.react drew this view's figure (until then: the placeholder)
this.pendingFigure = null; // the react waiting for an idle moment: {traces, layout, structure}
this.cancelReact = null;
this.hidden = new Set(); // colour keys hidden through the legend
this.redraws = 0;
this.pending = false;
this.frame = null; // the animation frame of a scheduled redraw
this.detailTimer = 0;
this.asked = null; // {window, at, gen} of the last detail request
this.el = doc.createElement("div");
this.el.className = "everyo-flame-box";
this.canvas = doc.createElement("canvas");
this.canvas.className = "everyo-flame-canvas";
this.axes = doc.createElement("canvas"); // axes and legend until plotly's figure is drawn
this.axes.className = "everyo-flame-axes";
this.axes.hidden = true;
this.axesShown = ""; // what the axes canvas shows (skips repainting the same)
this.engaged = false; // a pointer moved over the chart: plotly's axes and zoom from then on
this.plot = doc.createElement("div");
this.plot.className = "everyo-flame";
this.message = doc.createElement("div");
this.message.className = "everyo-flame-message";
this.message.textContent = "loading plotly.js…";
this.tip = doc.createElement("div");
this.tip.className = "everyo-tooltip";
this.tip.style.display = "none";
this.el.append(this.message, this.axes, this.canvas, this.plot, this.tip);
const turns = ["pointermove", "pointerdown", "focusin"];
const engage = (ev) => {
if (this.engaged || !engagesChart(ev)) return;
this.engaged = true;
for (const type of turns) this.el.removeEventListener(type, engage);
this.schedule();
};
for (const type of turns) this.el.addEventListener(type, engage);
const hide = () => {
this.tip.style.display = "none";
};
this.plot.addEventListener("mousemove", (ev) => this.hover(ev));
this.plot.addEventListener("mouseleave", hide);
this.plot.addEventListener("mousedown", hide);
this.plot.addEventListener("pointerdown", (ev) => {
this.pressedAt = [ev.clientX, ev.clientY];
});
this.plot.addEventListener("click", (ev) => this.click(ev));
this.boxWidth = 0; // from the ResizeObserver: reading clientWidth in a redraw would force a
if (typeof ResizeObserver === "function") {
this.resizer = new ResizeObserver((entries) => {
const width = Math.floor(entries[entries.length - 1].contentRect.width);
if (width > 0 && width !== this.boxWidth) {
this.boxWidth = width;
this.schedule();
}
});
this.resizer.observe(this.el);
}
}

setPlotly(plotly) {
this.plotly = plotly;
this.message.textContent = "";
this.drawn = null;
this.schedule();
}

schedule() {
if (this.pending || this.destroyed) return;
this.pending = true;
this.frame = nextFrame(() => {
this.frame = null;
this.pending = false;
this.draw();
});
}

drawNow() {
if (this.destroyed) return;
if (this.frame !== null) cancelFrame(this.frame);
this.frame = null;
this.pending = false;
this.draw();
}

setZoom(window) {
this.zoom = window ? [window[0], window[1]] : null;
this.panning = null;
this.schedule();
}

width() {
if (!this.boxWidth) this.boxWidth = Math.floor(this.el.clientWidth || this.root.clientWidth || 0);
return Math.max(200, this.boxWidth || 900);
}

draw() {
if (this.destroyed) return;
const t0 = now();
const { store } = this.state;
if (this.runId !== store.runId) this.forgetRun(store.runId);
const report = this.getReport();
const width = this.width();
const size = this.plotSize();
const plotW = size && this.drawn && this.drawn.width === width ? size.w : Math.max(50, width - MARGIN_X);
const [x0, x1] = this.windowNow(report);
const theme = this.model.get("theme");
const themes = this.model.get("themes");
const maxBars = report.live ? MAX_BARS_LIVE : MAX_BARS;
const signature = [store.version, x0, x1, width, theme, maxBars, [...this.hidden].join(","), this.framesShown].join("|");
if (this.drawn && this.drawn.signature === signature && this.drawn.themes === themes) return;
const src = store.source(x0, x1, (x1 - x0) / plotW);
if (!this.panning) this.requestDetail(src, x0, x1, plotW);
const depths = mergedDepths(store, src.set);
const tree = this.frames && this.frames.thread === null ? this.frames : null;
const frames = tree || (this.frames && depths.has(this.frames.thread) ? this.frames : null);
const below = frames && !tree ? depths.get(frames.thread) + 1 : 0; // first row in its band
if (frames && !tree) depths.set(frames.thread, below - 1 + frames.rows);
const top = tree ? { rows: tree.rows, name: "sampled" } : null;
const lanes = layoutLanes(depths, (t) => store.threadName(t), top);
if (frames) lanes.frames = { ...frames, row0: tree ? 0 : lanes.offset.get(frames.thread) + below };
const items = [];
for (const lane of src.set.lanes.values()) {
const first = lanes.offset.get(lane.thread);
if (first !== undefined) items.push({ lane, row: first + lane.depth });
}
const readable = store.raw && src.set === store.whole ? { stepEnds: store.stepEnds, pathParent: store.resolvePaths() } : null;
const bars = levelOfDetail(items, x0, x1, plotW, maxBars, store.codes, readable);
for (let i = 0; i < bars.n && !this.mixedSeen; i++) {
this.mixedSeen = bars.key[i] === MIXED && !(bars.dom && store.keys[bars.dom[i]]);
}
const colors = figureColors(themes, theme);
if (this.el.style.background !== colors.paper_bgcolor) this.el.style.background = colors.paper_bgcolor;
const view = {
window: [x0, x1], bars, items, lanes, colors, width, report, signature, themes,
raw: store.raw && src.set === store.whole,
};
if (!this.figured) {
this.placeholder(width, lanes);
this.paintCanvasAxes(view);
}
const plotlyAxes = this.plotly && !this.panning && !this.canvasAxesOnly(report);
if (plotlyAxes && !this.drawFigure(view) && this.figured) return;
this.show(view, t0);
}

canvasAxesOnly(report) {
return !this.figured && !this.engaged && (running(report) || !report.run_id);
}

paintCanvasAxes(view) {
const { store } = this.state;
const report = view.report;
if (store.empty && !view.lanes.frames) {
this.axes.hidden = true;
this.axesShown = "";
if (running(report)) this.message.textContent = "recording…";
return;
}
if (this.message.textContent === "recording…" || this.message.textContent === "loading plotly.js…") {
this.message.textContent = "";
}
const legend = legendEntries(store.keys, this.mixedSeen);
const height = flameHeight(view.lanes.nLanes);
const shown = JSON.stringify([view.window, view.width, height, view.lanes.bands, legend, view.colors, [...this.hidden]]);
this.axes.hidden = false;
if (shown === this.axesShown) return;
this.axesShown = shown;
const win = this.doc.defaultView;
const ctx = prepareCanvas(this.axes, view.width, height, (win && win.devicePixelRatio) || 1);
if (!this.font) this.font = (win && win.getComputedStyle(this.root).fontFamily) || "sans-serif";
const painted = paintAxes(ctx, {
x0: view.window[0], x1: view.window[1], lanes: view.lanes, size: this.fallbackSize,
width: view.width, height, colors: view.colors, font: this.font, legend, hidden: this.hidden,
});
this.root.dataset.yrange = painted.yRange.join(",");
}

show(view, t0 = now()) {
const { store } = this.state;
const painted = this.paint(view.bars, view.lanes, view.colors);
const moved = !this.drawn || !sameWindow(this.drawn.window, view.window);
this.drawn = view;
this.redraws += 1;
const data = this.root.dataset;
data.bars = String(painted);
data.events = String(store.whole.n);
data.window = `${view.window[0]},${view.window[1]}`;
data.redraws = String(this.redraws);
data.axes = this.figured ? "plotly" : this.axes.hidden ? "none" : "canvas";
data.drawMs = (now() - t0).toFixed(1);
if (moved) for (const fn of this.windowListeners) fn(view.window);
}

windowNow(report = this.getReport()) {
const follow = report.live ? followWindow : wholeWindow;
return this.panning || this.zoom || follow(report.wall_ms, this.state.store.whole.x1);
}

forgetRun(runId) {
this.runId = runId;
this.zoom = null;
this.panning = null;
this.asked = null;
this.mixedSeen = false;
this.hidden = new Set();
}

drawFigure(view) {
const { store } = this.state;
const { report } = view;
const [x0, x1] = view.window;
if (store.empty && report.status === "running" && !view.lanes.frames) {
if (!this.figured) this.message.textContent = "recording…"; // (--no-live: until the cell ends)
return true;
}
const traces = legendTraces(store.keys, this.hidden, this.mixedSeen);
let message = null;
if (store.empty && !view.lanes.frames) message = (report.events || 0) > 0 ? "loading events…" : "no events";
const layout = flameLayout({ x0, x1, lanes: view.lanes, colors: view.colors, width: view.width, message });
const structure = JSON.stringify([traces, { ...layout, xaxis: { ...layout.xaxis, range: null } }]);
if (structure !== this.structure) {
this.pendingFigure = { traces, layout, structure };
if (!this.cancelReact) this.cancelReact = whenIdle(() => this.react(), REACT_IDLE_MS);
return false;
}
this.pendingFigure = null; // back to the structure drawn (a react asked for is not needed)
if (!sameWindow(this.axisRange(), [x0, x1])) {
this.ownRelayout = true;
try {
this.plotly.relayout(this.plot, { "xaxis.range": [x0, x1], "xaxis.autorange": false });
} finally {
this.ownRelayout = false;
}
}
return true;
}

react() {
this.cancelReact = null;
const pending = this.pendingFigure;
this.pendingFigure = null;
if (!pending || this.destroyed || !this.plotly) return;
this.structure = pending.structure;
if (!this.figured) {
this.figured = true;
this.message.remove();
this.plot.style.height = "";
this.axes.hidden = true;
this.axesShown = "";
}
const layout = { ...pending.layout, xaxis: { ...pending.layout.xaxis, range: this.windowNow() } };
this.ownRelayout = true;
try {
this.plotly.react(this.plot, pending.traces, layout, CONFIG);
} finally {
this.ownRelayout = false;
}
if (!this.listening && this.plot.on) {
this.plot.on("plotly_relayout", (ev) => this.relayout(ev));
this.plot.on("plotly_relayouting", (ev) => this.relayouting(ev));
this.plot.on("plotly_restyle", () => this.restyle());
this.listening = true;
}
this.drawn = null;
this.schedule();
}

setFrames(frames) {
this.frames = frames && frames.bars && frames.bars.length ? frames : null;
this.framesShown = (this.framesShown || 0) + 1;
this.schedule();
}

frameBars(lanes, map) {
const f = lanes.frames;
if (!f) return [];
const span = f.end - f.start;
const out = [];
for (const bar of f.bars) {
const x0 = Math.max(0, map.x(f.start + bar.left * span));
const x1 = Math.min(map.w, Math.max(x0 + 1, map.x(f.start + (bar.left + bar.width) * span)));
if (x1 > 0 && x0 < map.w) out.push({ x0, x1, row: f.row0 + bar.row, bar });
}
return out;
}

paint(bars, lanes, colors) {
const size = this.plotSize();
if (!size) return 0;
if (this.canvas.style.left !== `${size.l}px`) this.canvas.style.left = `${size.l}px`;
if (this.canvas.style.top !== `${size.t}px`) this.canvas.style.top = `${size.t}px`;
const view = this.doc.defaultView;
const ctx = prepareCanvas(this.canvas, size.w, size.h, (view && view.devicePixelRatio) || 1);
const map = pixelMap(bars.x0, bars.x1, lanes.nLanes, size.w, size.h);
if (!this.font) this.font = (view && view.getComputedStyle(this.root).fontFamily) || "sans-serif";
const { keys, stepEnds } = this.state.store;
const labels = [];
const painted = paintFlame(ctx, { bars, keys, map, hidden: this.hidden, colors, stepEnds, font: this.font, labels });
this.root.dataset.labels = labels.join("|");
let groups = 0;
for (let i = 0; i < bars.n; i++) groups += bars.group[i];
this.root.dataset.groups = String(groups); // bars standing for one call path's calls
const frames = this.frameBars(lanes, map);
const height = Math.max(1, Math.round(map.rowHeight));
for (const f of frames) {
ctx.fillStyle = colors.frame_bar;
const gap = f.x1 - f.x0 > 3 ? 1 : 0;
ctx.fillRect(Math.floor(f.x0), Math.round(map.rowTop(f.row)), Math.max(1, Math.round(f.x1 - f.x0) - gap), height);
const text = fitText(f.bar.text, Math.floor((f.x1 - f.x0 - 8) / 6.5));
ctx.fillStyle = colors.text_on_bar || "#111";
if (text) ctx.fillText(text, f.x0 + 3, map.rowTop(f.row) + height / 2, f.x1 - f.x0 - 6);
}
this.root.dataset.frames = frames.map((f) => f.bar.text).join("|");
this.framesDrawn = { frames, map };
return painted;
}

placeholder(width, lanes) {
const height = flameHeight(lanes.nLanes);
this.plot.style.height = `${height}px`;
this.fallbackSize = { l: MARGIN.l, t: MARGIN.t, w: width - MARGIN_X, h: height - MARGIN.t - MARGIN.b };
}

plotSize() {
if (!this.figured) return this.fallbackSize || null;
const full = this.plot._fullLayout;
return full && full._size && full._size.w > 0 ? full._size : null;
}

axisRange() {
const full = this.plot._fullLayout;
return full && full.xaxis && full.xaxis.range ? full.xaxis.range : null;
}

relayout(ev) {
if (this.ownRelayout) return;
const change = parseRelayout(ev, this.drawn && this.drawn.window);
if (!change) return;
this.panning = null;
if (change.whole) {
this.zoom = null;
this.drawn = null; // plotly autoranged the axis: set the explicit range again
this.schedule();
return;
}
const window = [change.x0, change.x1];
if (this.drawn && sameWindow(window, this.drawn.window)) return;
this.setZoom(window);
}

relayouting(ev) {
const full = this.plot._fullLayout;
if (!full || full.dragmode !== "pan") return;
const change = parseRelayout(ev, this.drawn && this.drawn.window);
if (change && !change.whole) {
this.panning = [change.x0, change.x1];
this.schedule();
}
}

restyle() {
const hidden = hiddenKeys(this.plot.data);
if ([...hidden].join(",") === [...this.hidden].join(",")) return;
this.hidden = hidden;
this.schedule();
}

requestDetail(src, x0, x1, plotW) {
const gen = this.state.store.whole;
const asked = this.asked;
const repeat = asked && sameWindow(asked.window, [x0, x1]) && (asked.gen === gen || Date.now() - asked.at < STALE_RETRY_MS);
if (!(src.coarse || src.stale) || repeat) {
if (!src.coarse) clearTimeout(this.detailTimer);
return;
}
clearTimeout(this.detailTimer);
this.detailTimer = setTimeout(() => {
this.asked = { window: [x0, x1], at: Date.now(), gen };
this.model.send({ type: "detail", x0, x1, width: Math.round(plotW), run: this.state.store.runId });
}, DETAIL_DEBOUNCE_MS);
}

frameAt(ev) {
const drawn = this.framesDrawn;
const size = this.plotSize();
if (!drawn || !drawn.frames.length || !size) return null;
const box = this.plot.getBoundingClientRect();
const x = ev.clientX - box.left - size.l;
const y = ev.clientY - box.top - size.t;
const { map } = drawn;
return drawn.frames.find((f) => x >= f.x0 && x <= f.x1 && y >= map.rowTop(f.row) && y <= map.rowTop(f.row) + map.rowHeight) || null;
}

barAt(ev) {
const drawn = this.drawn;
const size = this.plotSize();
if (!drawn || !size || !drawn.bars.n) return null;
const box = this.plot.getBoundingClientRect();
const xRange = drawn.window;
const yRange = [drawn.lanes.nLanes - 0.5, -0.5];
const p = pointerToData(ev.clientX - box.left - size.l, ev.clientY - box.top - size.t, size, xRange, yRange);
const pxMs = (xRange[1] - xRange[0]) / size.w;
const i = p && p.inRow ? findBar(drawn.bars, p.row, p.t, 2 * pxMs) : -1;
const keys = this.state.store.keys;
const info = i >= 0 ? keys[drawn.bars.key[i]] || null : null;
const dominant = i >= 0 && !info ? keys[drawn.bars.dom[i]] || null : null;
const shownAs = info || dominant;
if (i < 0 || this.hidden.has(shownAs ? shownAs.colorKey : "merged")) return null;
return { i, lane: drawn.items[drawn.bars.lane[i]].lane, info, dominant };
}

click(ev) {
const at = this.pressedAt;
this.pressedAt = null;
if (!this.onSelect || (at && Math.hypot(ev.clientX - at[0], ev.clientY - at[1]) > 4)) return;
const hit = this.barAt(ev);
if (!hit) return;
const { bars } = this.drawn;
const bar = { start: bars.start[hit.i], end: bars.end[hit.i], count: bars.count[hit.i] };
const target = barTarget(bar, hit.lane, hit.info);
if (target) this.onSelect(target);
}

hover(ev) {
const frame = this.frameAt(ev);
if (frame) {
const outer = this.el.getBoundingClientRect();
showTooltip(this.tip, [frame.bar.title], ev.clientX - outer.left, ev.clientY - outer.top, this.el.clientWidth);
return;
}
const hit = this.barAt(ev);
if (!hit) {
this.tip.style.display = "none";
return;
}
const drawn = this.drawn;
const { info, dominant, lane, i } = hit;
const { bars } = drawn;
const count = bars.count[i];
const start = bars.start[i];
const end = bars.end[i];
const group = bars.group[i] === 1;
const selfNs = drawn.raw && count === 1 && !group ? this.state.store.selfNs(lane.thread, lane.depth, start, end) : null;
const lines = tooltipLines({ start, end, count, info, dominant, selfNs, group });
const outer = this.el.getBoundingClientRect();
showTooltip(this.tip, lines, ev.clientX - outer.left, ev.clientY - outer.top, this.el.clientWidth);
}

destroy() {
this.destroyed = true;
if (this.frame !== null) cancelFrame(this.frame);
this.frame = null;
if (this.cancelReact) this.cancelReact();
this.cancelReact = null;
clearTimeout(this.detailTimer);
if (this.resizer) this.resizer.disconnect();
if (this.plotly && this.plotly.purge) this.plotly.purge(this.plot);
}
}

function mergedDepths(store, set) {
const depths = store.whole.depths();
if (set !== store.whole) {
for (const [t, d] of set.depths()) if (!(depths.get(t) >= d)) depths.set(t, d);
}
return depths;
}
return { DETAIL_DEBOUNCE_MS, REACT_IDLE_MS, running, FlameView };
})();

// ---- src/compare_view.js
const __everyo_src_compare_view_js = (() => {
const { FlameView } = __everyo_src_flame_view_js;
const { NO_VALUE } = __everyo_src_schema_js;

function diffCell(row, key) {
const texts = row.texts || {};
return key in texts ? String(texts[key]) : NO_VALUE;
}

function compareHeadline(c) {
return String(c.headline || "");
}

function stepsVerdictText(c) {
return String(c.steps_text || "");
}

function sharedExtent(c) {
return Math.max(Number(c.a && c.a.wall_ms) || 0, Number(c.b && c.b.wall_ms) || 0);
}

function renderDiffTable(doc, rows, columns = []) {
const table = doc.createElement("table");
table.className = "everyo-table everyo-diff-table";
const head = table.createTHead().insertRow();
for (const { header } of columns) {
const th = doc.createElement("th");
th.textContent = header;
head.appendChild(th);
}
const body = table.createTBody();
for (const row of rows) {
const tr = body.insertRow();
for (const { key } of columns) {
const td = tr.insertCell();
td.textContent = diffCell(row, key);
if (key === "verdict") {
td.className = `everyo-verdict everyo-verdict-${String(row.verdict).replace(/[^a-z]+/g, "-")}`;
if (row.why) td.title = row.why;
} else if (key !== "label") {
td.className = "everyo-num";
}
}
}
return table;
}

function flameBox(doc, side) {
const box = doc.createElement("div");
box.className = "everyo-compare-flame";
box.dataset.side = side;
const title = doc.createElement("div");
title.className = "everyo-compare-title";
box.appendChild(title);
return { box, title };
}

function mountCompare(doc, model, state) {
const el = doc.createElement("div");
el.className = "everyo-compare";
el.hidden = true;
const header = doc.createElement("div");
header.className = "everyo-compare-header";
const steps = doc.createElement("div");
steps.className = "everyo-compare-steps";
const a = flameBox(doc, "a");
const b = flameBox(doc, "b");
const tableHolder = doc.createElement("div");
tableHolder.className = "everyo-diff-holder";
const notes = doc.createElement("ul");
notes.className = "everyo-notes";
el.append(header, steps, a.box, b.box, tableHolder, notes);

const comparison = () => model.get("comparison") || {};
const sideReport = (side) => () => {
const c = comparison();
const run = c[side] || {};
return { run_id: run.run_id || side, wall_ms: sharedExtent(c), live: false, events: run.events || 0 };
};
let flames = null;
let plotly = null;
const makeFlames = () => {
const flameA = new FlameView(doc, model, { get store() { return state.compareStore; } }, a.box, { report: sideReport("a") });
const flameB = new FlameView(doc, model, { get store() { return state.store; } }, b.box, { report: sideReport("b") });
a.box.appendChild(flameA.el);
b.box.appendChild(flameB.el);
flameA.windowListeners.add((w) => flameB.setZoom(w));
flameB.windowListeners.add((w) => flameA.setZoom(w));
if (plotly) for (const f of [flameA, flameB]) f.setPlotly(plotly);
return [flameA, flameB];
};

let shown = null;
const update = () => {
const c = comparison();
el.hidden = !c.a || !c.b;
if (el.hidden || c === shown) return;
shown = c;
if (!flames) flames = makeFlames();
header.textContent = compareHeadline(c);
steps.textContent = stepsVerdictText(c);
steps.hidden = !c.steps;
a.title.textContent = `A · ${c.a.label} · ${c.a.wall || ""}`;
b.title.textContent = `B · ${c.b.label} · ${c.b.wall || ""}`;
tableHolder.replaceChildren(renderDiffTable(doc, c.rows || [], c.columns || []));
notes.replaceChildren(...(c.notes || []).map((text) => {
const li = doc.createElement("li");
li.textContent = text;
return li;
}));
el.dataset.rows = String((c.rows || []).length);
schedule();
};
const schedule = () => {
if (el.hidden || !flames) return;
for (const f of flames) f.schedule();
};
const setPlotly = (p) => {
plotly = p;
if (flames) for (const f of flames) f.setPlotly(p);
};
const destroy = () => {
if (flames) for (const f of flames) f.destroy();
};
update();
return { el, update, schedule, setPlotly, destroy, traits: ["comparison", "compare_id"] };
}
return { diffCell, compareHeadline, stepsVerdictText, sharedExtent, renderDiffTable, mountCompare };
})();

// ---- src/export.js
const __everyo_src_export_js = (() => {

function downloadBytes(doc, filename, data, mime = "application/json") {
const blob = new Blob([data], { type: mime });
const url = URL.createObjectURL(blob);
const link = doc.createElement("a");
link.href = url;
link.download = filename;
link.style.display = "none";
doc.body.appendChild(link);
link.click();
link.remove();
setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function isDownloadMessage(msg, buffers) {
return Boolean(msg && msg.type === "download" && msg.filename && buffers && buffers.length > 0);
}

function renderExportButton(doc, model, traits = { status: "export_status", busy: "export_busy" }) {
const wrap = doc.createElement("div");
wrap.className = "everyo-export";
const button = doc.createElement("button");
button.className = "everyo-export-button jp-Button";
button.textContent = "Export Chrome trace";
button.title = "Write <label>.trace.json next to the notebook and download it";
const status = doc.createElement("span");
status.className = "everyo-export-status";
const update = () => {
status.textContent = model.get(traits.status) || "";
button.disabled = Boolean(model.get(traits.busy));
};
button.addEventListener("click", () => model.send({ type: "export" }));
model.on(`change:${traits.status}`, update);
model.on(`change:${traits.busy}`, update);
update();
wrap.append(button, status);
return wrap;
}
return { downloadBytes, isDownloadMessage, renderExportButton };
})();

// ---- src/text.js
const __everyo_src_text_js = (() => {

function setText(el, text) {
const only = el.firstChild;
if (only && only.nodeType === 3 && !only.nextSibling) {
if (only.data === text) return false;
only.data = text;
return true;
}
if (!only && text === "") return false;
el.textContent = text;
return true;
}
return { setText };
})();

// ---- src/header.js
const __everyo_src_header_js = (() => {
const { setText } = __everyo_src_text_js;

function headerParts(report) {
const parts = [];
const texts = report.texts || {};
if (report.status) parts.push(report.error ? `${report.status} (${report.error})` : String(report.status));
if (texts.wall) parts.push(texts.wall);
if (texts.events) parts.push(texts.events);
const hot = (texts.hot_spots || []).slice(0, 3);
if (hot.length) parts.push(`hot spots (self time): ${hot.join(", ")}`);
return parts;
}

function renderHeader(doc, report) {
const div = doc.createElement("div");
div.className = "everyo-header";
if (!report || !report.run_id) {
div.append("No run yet: profile a cell with ");
const code = doc.createElement("code");
code.textContent = "%%everyo_profile";
div.append(code, ".");
return div;
}
const bold = doc.createElement("b");
const rest = doc.createElement("span");
div.append(bold, rest);
div.everyoParts = { bold, rest };
patchHeader(doc, div, report);
return div;
}

function patchHeader(doc, div, report) {
const parts = div.everyoParts;
if (!parts || !report || !report.run_id) return renderHeader(doc, report);
setText(parts.bold, String(report.label || report.run_id));
setText(parts.rest, headerParts(report).map((p) => ` · ${p}`).join(""));
const title = report.start_iso ? `started ${report.start_iso}` : "";
if (div.title !== title) div.title = title;
return div;
}

function renderNotes(doc, notes) {
const list = doc.createElement("ul");
list.className = "everyo-notes";
for (const note of notes || []) {
const item = doc.createElement("li");
item.className = "everyo-warning";
item.textContent = note;
list.appendChild(item);
}
list.hidden = list.childElementCount === 0;
return list;
}
return { headerParts, renderHeader, patchHeader, renderNotes };
})();

// ---- src/memory_view.js
const __everyo_src_memory_view_js = (() => {
const { MARGIN } = __everyo_src_figure_js;
const { whenIdle } = __everyo_src_idle_js;
const { figureColors } = __everyo_src_theme_js;
const { parseRelayout, sameWindow } = __everyo_src_zoom_js;

const MEMORY_HEIGHT = 170;
const CONFIG = { displaylogo: false, doubleClick: "autosize", scrollZoom: false, modeBarButtonsToRemove: ["select2d", "lasso2d", "toImage"] };

function peakText(memory) {
return String(memory.peak_text || "");
}

function memoryTraces(memory, colors = {}) {
const line = colors.memory || "#4c78a8";
return [
{
type: "scatter", mode: "lines", x: memory.t_ms, y: memory.bytes, name: memory.track,
line: { shape: "hv", width: 1.5, color: line }, fill: "tozeroy", fillcolor: "rgba(76,120,168,0.2)",
hovertemplate: memory.hovertemplate, showlegend: false, // the kernel's (views/memory.py)
},
{
type: "scatter", mode: "markers", x: [memory.peak.t_ms], y: [memory.peak.bytes], name: "peak",
marker: { color: "#e45756", size: 9 }, hovertemplate: `${peakText(memory)}<extra></extra>`,
showlegend: false,
},
];
}

function memoryLayout({ memory, x0, x1, width, colors = {} }) {
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
x: memory.peak.t_ms, y: memory.peak.bytes, text: peakText(memory), showarrow: false,
xanchor: memory.peak.t_ms > x0 + 0.6 * (x1 - x0) ? "right" : "left",
xshift: memory.peak.t_ms > x0 + 0.6 * (x1 - x0) ? -8 : 8, yanchor: "bottom",
font: { size: 11, color: colors.font_color },
}],
};
}

function mountMemory(doc, model, flame) {
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
return { MEMORY_HEIGHT, peakText, memoryTraces, memoryLayout, mountMemory };
})();

// ---- src/plotly_loader.js
const __everyo_src_plotly_loader_js = (() => {

const CACHE = "__everyoPlotly";
const RETRY_MS = 60000; // a kernel that never answered (restarted, gone): let another one ask

function plotlyCache(g = globalThis) {
if (!g[CACHE]) {
const cache = { asked: false, askedAt: 0, plotly: null, loading: false };
cache.promise = new Promise((resolve, reject) => {
cache.resolve = resolve;
cache.reject = reject;
});
if (g.Plotly && typeof g.Plotly.react === "function") {
cache.plotly = g.Plotly;
cache.resolve(g.Plotly);
}
g[CACHE] = cache;
}
return g[CACHE];
}

function loadPlotly(model, g = globalThis, now = Date.now()) {
const cache = plotlyCache(g);
if (!cache.plotly && g.Plotly && typeof g.Plotly.react === "function") {
cache.plotly = g.Plotly;
cache.resolve(g.Plotly);
}
if (!cache.plotly && (!cache.asked || now - cache.askedAt > RETRY_MS)) {
cache.asked = true;
cache.askedAt = now;
model.send({ type: "plotly" });
}
return cache.promise;
}

function failPlotly(error, g = globalThis) {
const cache = plotlyCache(g);
if (cache.plotly) return;
cache.error = String(error);
cache.reject(new Error(cache.error));
}

function wrapUmd(text) {
return `const module = { exports: {} }; const exports = module.exports;\n${text}\nexport default module.exports;\n`;
}

function bufferText(buf) {
const bytes = buf instanceof ArrayBuffer ? new Uint8Array(buf) : new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
return new TextDecoder("utf-8").decode(bytes);
}

async function receivePlotly(buffer, g = globalThis) {
const cache = plotlyCache(g);
if (cache.plotly || cache.loading) return cache.promise;
cache.loading = true;
const blob = new Blob([wrapUmd(bufferText(buffer))], { type: "text/javascript" });
const url = URL.createObjectURL(blob);
try {
const mod = await import(/* webpackIgnore: true */ url);
cache.plotly = mod.default && typeof mod.default.react === "function" ? mod.default : g.Plotly;
cache.resolve(cache.plotly);
} catch (err) {
cache.loading = false;
console.error("everyo: could not load plotly.js", err);
} finally {
URL.revokeObjectURL(url);
}
return cache.promise;
}
return { plotlyCache, loadPlotly, failPlotly, wrapUmd, bufferText, receivePlotly };
})();

// ---- src/live_report.js
const __everyo_src_live_report_js = (() => {

function liveReports() {
const live = { report: null, listeners: new Set() };
live.clear = () => {
live.report = null; // another run is shown
};
live.accept = (report) => {
if (!report || typeof report !== "object") return;
live.report = report;
for (const fn of [...live.listeners]) fn();
};
return live;
}

function newestReport(trait, message) {
if (!message) return trait;
if (!trait || typeof trait !== "object" || !(Number(trait.seq) >= Number(message.seq))) return message;
return trait;
}

function liveModel(model, live) {
const get = (name) => (name === "report" ? newestReport(model.get("report"), live.report) : model.get(name));
const on = (event, fn) => {
model.on(event, fn);
if (event === "change:report") live.listeners.add(fn);
};
const off = (event, fn) => {
model.off(event, fn);
if (event === "change:report") live.listeners.delete(fn);
};
return new Proxy(model, {
get(target, prop) {
if (prop === "get") return get;
if (prop === "on") return on;
if (prop === "off") return off;
const value = Reflect.get(target, prop);
return typeof value === "function" ? value.bind(target) : value;
},
});
}
return { liveReports, newestReport, liveModel };
})();

// ---- src/picker.js
const __everyo_src_picker_js = (() => {

function groupRunsByLabel(runs) {
const groups = new Map();
for (const run of runs) {
if (!groups.has(run.label)) groups.set(run.label, []);
groups.get(run.label).push(run);
}
for (const list of groups.values()) list.sort((a, b) => (b.start_time || 0) - (a.start_time || 0));
return groups;
}

function runOptionText(run) {
return String(run.text || run.label || "");
}

function renderPicker(doc, runs, selected, onPick) {
const select = doc.createElement("select");
select.className = "everyo-picker";
if (runs.length === 0) {
const option = doc.createElement("option");
option.textContent = "no runs yet: profile a cell with %%everyo_profile";
option.disabled = true;
select.appendChild(option);
}
for (const [label, group] of groupRunsByLabel(runs)) {
const optgroup = doc.createElement("optgroup");
optgroup.label = label;
for (const run of group) {
const option = doc.createElement("option");
option.value = run.id;
option.textContent = runOptionText(run);
option.selected = run.id === selected;
optgroup.appendChild(option);
}
select.appendChild(optgroup);
}
select.addEventListener("change", () => onPick(select.value));
return select;
}

function renderComparePicker(doc, runs, selected, compareId, onPick) {
const select = doc.createElement("select");
select.className = "everyo-compare-picker";
const none = doc.createElement("option");
none.value = "";
none.textContent = "nothing (one run)";
none.selected = !compareId;
select.appendChild(none);
for (const [label, group] of groupRunsByLabel(runs.filter((r) => r.id !== selected))) {
const optgroup = doc.createElement("optgroup");
optgroup.label = label;
for (const run of group) {
const option = doc.createElement("option");
option.value = run.id;
option.textContent = runOptionText(run);
option.selected = run.id === compareId;
optgroup.appendChild(option);
}
select.appendChild(optgroup);
}
select.addEventListener("change", () => onPick(select.value));
return select;
}
return { groupRunsByLabel, runOptionText, renderPicker, renderComparePicker };
})();

// ---- src/table.js
const __everyo_src_table_js = (() => {
const { setText } = __everyo_src_text_js;

function nextSort(state, clicked) {
if (state.sortBy === clicked) return { sortBy: clicked, descending: !state.descending };
return { sortBy: clicked, descending: true };
}

function rowOrder(table, sort) {
const byKey = (table.order || {})[sort.sortBy];
const order = byKey && byKey[sort.descending ? "descending" : "ascending"];
const n = (table.rows || []).length;
if (Array.isArray(order) && order.length === n) return order;
return [...Array(n).keys()];
}

function bodyCells(table, sort) {
const columns = table.columns || [];
const rows = table.rows || [];
return rowOrder(table, sort).map((i) =>
columns.map((col, c) => ({ text: String(rows[i].texts[c]), bar: col.bar ? rows[i].bar : null })),
);
}

function headKey(table, sort) {
const heads = (table.columns || []).map((c) => [c.key, c.header, c.align]);
return JSON.stringify([heads, sort.sortBy, Boolean(sort.descending)]);
}

function patchBody(doc, body, cells, columns = []) {
let written = 0;
while (body.rows.length > cells.length) body.deleteRow(body.rows.length - 1);
for (let r = 0; r < cells.length; r++) {
const tr = r < body.rows.length ? body.rows[r] : body.insertRow();
const row = cells[r];
while (tr.cells.length > row.length) tr.deleteCell(tr.cells.length - 1);
for (let c = 0; c < row.length; c++) {
const fresh = c >= tr.cells.length;
const td = fresh ? tr.insertCell() : tr.cells[c];
if (fresh && columns[c] && columns[c].align === "right") td.className = "everyo-num";
if (writeCell(doc, td, row[c])) written += 1;
}
}
return written;
}

function writeCell(doc, td, { text, bar }) {
const shown = td.everyoShown;
if (shown && shown.text === text && shown.bar === bar) return false;
td.everyoShown = { text, bar };
if (bar === null) {
setText(td, text);
return true;
}
let div = td.firstChild;
if (!div || div.className !== "everyo-share-bar") {
td.textContent = "";
div = doc.createElement("div");
div.className = "everyo-share-bar";
td.appendChild(div);
}
if (!shown || shown.bar !== bar) div.style.width = `${bar}%`;
const label = div.nextSibling;
if (label) {
if (label.data !== text) label.data = text;
} else {
td.appendChild(doc.createTextNode(text));
}
return true;
}

function renderTable(doc, table, sort, onSort) {
const el = doc.createElement("table");
el.className = "everyo-table";
el.dataset.head = headKey(table, sort);
const head = el.createTHead().insertRow();
for (const col of table.columns || []) {
const th = doc.createElement("th");
th.dataset.key = col.key;
if (col.align === "right") th.className = "everyo-num";
const arrow = sort.sortBy === col.key ? (sort.descending ? " ▼" : " ▲") : "";
th.textContent = col.header + arrow;
th.title = `Sort by ${col.header}`;
th.addEventListener("click", () => onSort(col.key));
head.appendChild(th);
}
patchBody(doc, el.createTBody(), bodyCells(table, sort), table.columns || []);
return el;
}
return { nextSort, rowOrder, bodyCells, headKey, patchBody, renderTable };
})();

// ---- src/sections.js
const __everyo_src_sections_js = (() => {
const { whenIdle } = __everyo_src_idle_js;
const { renderComparePicker, renderPicker } = __everyo_src_picker_js;
const { GROUP_HEADERS } = __everyo_src_schema_js;
const { bodyCells, headKey, nextSort, patchBody, renderTable, rowOrder } = __everyo_src_table_js;
const { rowTarget, selectsRow } = __everyo_src_why_view_js;

function shownRows(report, spec, sort) {
const rows = report.rows || [];
return rowOrder(spec, sort).map((i) => rows[i]);
}

function commit(model, values) {
for (const [name, value] of Object.entries(values)) model.set(name, value);
model.save_changes();
}

function mountPicker(doc, model) {
const box = doc.createElement("div");
box.className = "everyo-picker-row";
const label = doc.createElement("label");
label.className = "everyo-picker-box";
label.textContent = "run ";
const against = doc.createElement("label");
against.className = "everyo-compare-box";
against.textContent = "compare with ";
box.append(label, against);
let select = null;
let other = null;
const update = () => {
box.hidden = !model.get("picker");
if (box.hidden) return;
const runs = model.get("runs") || [];
const selected = model.get("selected");
const next = renderPicker(doc, runs, selected, (id) => commit(model, { selected: id }));
if (select) select.replaceWith(next);
else label.appendChild(next);
select = next;
const nextOther = renderComparePicker(doc, runs, selected, model.get("compare_id"), (id) => commit(model, { compare_id: id }));
if (other) other.replaceWith(nextOther);
else against.appendChild(nextOther);
other = nextOther;
};
update();
return { el: box, update, traits: ["picker", "runs", "selected", "compare_id"] };
}

const LIVE_TABLE_MS = 1000;

function mountTable(doc, model, { now = () => performance.now(), onSelect = null } = {}) {
const el = doc.createElement("div");
el.className = "everyo-table-section";
const controls = doc.createElement("div");
controls.className = "everyo-controls";
const label = doc.createElement("label");
label.textContent = "group by ";
const select = doc.createElement("select");
select.className = "everyo-group-by";
for (const [value, text] of Object.entries(GROUP_HEADERS)) {
const option = doc.createElement("option");
option.value = value;
option.textContent = text;
select.appendChild(option);
}
select.addEventListener("change", () => commit(model, { group_by: select.value }));
label.appendChild(select);
controls.appendChild(label);
const holder = doc.createElement("div");
holder.className = "everyo-table-holder";
el.append(controls, holder);
let table = null;
let liveAt = -Infinity; // when live numbers were last written
let shown = model.get("report") || {}; // the report whose numbers the table shows
let order = []; // the shown rows in the order of the body's rows
const groupOf = () => model.get("group_by") || "name";
const mark = () => {
if (!table) return;
const target = model.get("why_target");
const trs = table.tBodies[0].rows;
for (let i = 0; i < trs.length; i++) {
const on = Boolean(order[i]) && selectsRow(target, order[i], groupOf());
if (Boolean(trs[i].everyoSelected) !== on) {
trs[i].everyoSelected = on;
trs[i].className = on ? "everyo-selected" : "";
}
}
};
holder.addEventListener("click", (ev) => {
let tr = ev.target;
while (tr && tr.tagName !== "TR") tr = tr.parentNode || tr.parent;
const body = tr && (tr.parentNode || tr.parent);
if (!onSelect || !table || body !== table.tBodies[0]) return;
const row = order[[...body.rows].indexOf(tr)];
if (row) onSelect(rowTarget(row, groupOf()));
});
const update = () => {
select.value = model.get("group_by") || "name";
const report = model.get("report") || {};
const spec = report.table || { columns: [], rows: [] };
const sort = { sortBy: model.get("sort_by") || "total_ms", descending: model.get("descending") !== false };
const onSort = (key) => {
const next = nextSort(sort, key);
commit(model, { sort_by: next.sortBy, descending: next.descending });
};
if (table && table.dataset.head === headKey(spec, sort)) {
const t = now();
if (report.live && t - liveAt < LIVE_TABLE_MS) return; // a later report brings newer numbers
liveAt = report.live ? t : -Infinity;
shown = report;
patchBody(doc, table.tBodies[0], bodyCells(spec, sort), spec.columns);
order = shownRows(report, spec, sort);
mark();
return;
}
shown = report;
table = renderTable(doc, spec, sort, onSort);
order = shownRows(report, spec, sort);
holder.replaceChildren(table);
mark();
};
update();
return { el, update, mark, shown: () => shown, traits: ["report", "group_by", "sort_by", "descending"] };
}

function showIcicle(report, figure) {
return Boolean(!(report && report.live) && figure && Array.isArray(figure.data) && figure.data.length);
}

function mountIcicle(doc, model) {
const el = doc.createElement("div");
el.className = "everyo-icicle";
el.hidden = true;
let plotly = null;
let drawn = null;
let cancel = null;
const draw = () => {
cancel = null;
const figure = model.get("icicle");
if (!plotly || !showIcicle(model.get("report"), figure) || figure === drawn) return;
drawn = figure;
const layout = { ...(figure.layout || {}), autosize: true };
delete layout.width;
plotly.react(el, figure.data, layout, { displaylogo: false, responsive: true });
};
const update = () => {
const figure = model.get("icicle");
el.hidden = !showIcicle(model.get("report"), figure);
if (el.hidden || !plotly || figure === drawn || cancel) return;
cancel = whenIdle(draw);
};
const setPlotly = (p) => {
plotly = p;
update();
};
const destroy = () => {
if (cancel) cancel();
cancel = null;
if (plotly && plotly.purge) plotly.purge(el);
plotly = null;
};
return { el, update, setPlotly, destroy, traits: ["icicle", "report"] };
}
return { mountPicker, LIVE_TABLE_MS, mountTable, showIcicle, mountIcicle };
})();

// ---- src/steps.js
const __everyo_src_steps_js = (() => {
const { setText } = __everyo_src_text_js;

function stepBounds(stepEnds, k, firstStart = 0) {
if (!Number.isInteger(k) || k < 0 || k >= stepEnds.length) return null;
const start = k === 0 ? Math.min(firstStart, stepEnds[0]) : stepEnds[k - 1];
return [start, stepEnds[k]];
}

function zoomWindow(start, end, margin = 0.05, extent = null) {
const pad = Math.max((end - start) * margin, 1e-6);
let x0 = start - pad;
let x1 = end + pad;
if (extent) {
x0 = Math.max(x0, Math.min(extent[0], start));
x1 = Math.min(x1, Math.max(extent[1], end));
}
return [x0, x1];
}

function stepRows(steps) {
if (!steps) return [];
const rows = [];
for (const what of ["median", "p95", "slowest", "fastest"]) {
const s = steps[what];
if (s && typeof s.start_ms === "number" && typeof s.end_ms === "number") rows.push({ what, ...s });
}
return rows;
}

function mountSteps(doc, { onZoom, stepWindowOf, extent = () => null }) {
const el = doc.createElement("div");
el.className = "everyo-steps";
const line = doc.createElement("div");
line.className = "everyo-controls";
const summary = doc.createElement("span");
const input = doc.createElement("input");
input.type = "number";
input.min = "0";
input.className = "everyo-step-input";
let typed = false; // the user's own step number: updates leave it alone
input.addEventListener("input", () => {
typed = true;
});
const go = doc.createElement("button");
go.className = "everyo-step-zoom jp-Button";
go.textContent = "zoom to step";
const zoomTo = () => {
const window = stepWindowOf(Number(input.value));
if (window) onZoom(window);
};
go.addEventListener("click", zoomTo);
input.addEventListener("keydown", (ev) => {
if (ev.key === "Enter") zoomTo();
});
line.append(summary, go, input);
const table = doc.createElement("table");
table.className = "everyo-table everyo-step-table";
const head = table.createTHead().insertRow();
for (const text of ["", "step", "duration", ""]) {
const th = doc.createElement("th");
th.textContent = text;
head.appendChild(th);
}
const body = table.createTBody();
el.append(line, table);

const newRow = () => {
const tr = body.insertRow();
for (let c = 0; c < 3; c++) tr.insertCell();
const button = doc.createElement("button");
button.className = "everyo-step-row-zoom jp-Button";
button.textContent = "zoom";
button.addEventListener("click", () => onZoom(zoomWindow(tr.everyoRow.start_ms, tr.everyoRow.end_ms, 0.05, extent())));
tr.insertCell().appendChild(button);
return tr;
};
const update = (steps, texts = {}) => {
const durations = texts.step_durations || {};
setText(summary, texts.steps || "");
const max = String(Math.max(0, steps.count - 1));
if (input.max !== max) input.max = max;
const slowest = String(steps.slowest ? steps.slowest.index : 0);
if (!typed && input.value !== slowest) input.value = slowest;
const rows = stepRows(steps);
while (body.rows.length > rows.length) body.deleteRow(body.rows.length - 1);
rows.forEach((row, r) => {
const tr = r < body.rows.length ? body.rows[r] : newRow();
tr.everyoRow = row;
if (tr.dataset.what !== row.what) tr.dataset.what = row.what;
setText(tr.cells[0], row.what);
setText(tr.cells[1], `#${row.index}`);
setText(tr.cells[2], durations[row.what] || "");
const button = tr.cells[3].firstChild;
const title = `Zoom the flame chart to step ${row.index}`;
if (button.title !== title) button.title = title;
});
};
return { el, update };
}
return { stepBounds, zoomWindow, stepRows, mountSteps };
})();

// ---- src/style.js
const __everyo_src_style_js = (() => {

const CSS = `
.everyo-widget { font-family: var(--jp-ui-font-family, sans-serif);
  font-size: var(--jp-ui-font-size1, 13px); color: var(--jp-ui-font-color1, #222); }
.everyo-dashboard { content-visibility: auto; contain-intrinsic-size: auto 600px; }
.everyo-table { border-collapse: collapse; width: 100%; }
.everyo-table th { cursor: pointer; text-align: left; padding: 2px 8px; user-select: none;
  border-bottom: 1px solid var(--jp-border-color1, #bbb); white-space: nowrap; }
.everyo-table td { padding: 2px 8px; position: relative; white-space: nowrap;
  border-bottom: 1px solid var(--jp-border-color3, #eee); }
.everyo-share-bar { position: absolute; left: 0; top: 2px; bottom: 2px; z-index: 0;
  background: var(--jp-brand-color2, #90caf9); opacity: 0.45; }
.everyo-warning { margin: 4px 0; color: var(--jp-warn-color1, #b26a00); }
.everyo-controls { display: flex; gap: 8px; align-items: center; margin-bottom: 4px; }
.everyo-export { display: flex; gap: 8px; align-items: center; }
.everyo-export-button { padding: 4px 10px; cursor: pointer; }
.everyo-export-status { color: var(--jp-ui-font-color2, #555); }
.everyo-picker { min-width: 24em; }
.everyo-header { padding: 4px 0; }
.everyo-notes { margin: 2px 0 4px; padding-left: 1.4em; }
.everyo-steps { margin: 4px 0; }
.everyo-step-input { width: 6em; }
.everyo-step-table { width: auto; }
.everyo-flame-box { position: relative; min-height: 40px; }
.everyo-flame-canvas { position: absolute; left: 0; top: 0; z-index: 0; pointer-events: none; }
.everyo-flame-axes { position: absolute; left: 0; top: 0; z-index: 0; pointer-events: none; }
.everyo-flame-axes[hidden] { display: none; }
.everyo-flame { position: relative; z-index: 1; }
.everyo-flame-message { position: absolute; left: 60px; top: 10px; z-index: 2;
  color: var(--jp-ui-font-color2, #555); }
.everyo-tooltip { position: absolute; z-index: 10; pointer-events: none; max-width: 420px;
  padding: 4px 8px; border-radius: 3px; font-size: 12px; line-height: 1.35; white-space: nowrap;
  background: var(--jp-layout-color0, #fff); color: var(--jp-ui-font-color1, #222);
  border: 1px solid var(--jp-border-color1, #bbb); box-shadow: 0 1px 4px rgba(0,0,0,0.25); }
.everyo-icicle { margin-top: 8px; }
.everyo-memory { margin-top: 0; }
.everyo-picker-row:not([hidden]) { display: flex; gap: 12px; align-items: center; margin-bottom: 4px; }
.everyo-compare { margin-top: 10px; }
.everyo-compare-only > :not(.everyo-compare):not(style) { display: none !important; }
.everyo-compare-header { font-weight: 600; padding: 4px 0; }
.everyo-compare-title { color: var(--jp-ui-font-color2, #555); margin-top: 6px; }
.everyo-diff-holder { overflow-x: auto; }
.everyo-diff-table { width: auto; }
.everyo-table .everyo-num { text-align: right; font-variant-numeric: tabular-nums; }
.everyo-verdict-faster { color: var(--jp-success-color1, #1a7f37); }
.everyo-verdict-slower { color: var(--jp-error-color1, #cf222e); }
.everyo-verdict-within-noise, .everyo-verdict-negligible-change, .everyo-verdict-too-little-data { color: var(--jp-ui-font-color2, #555); }
.everyo-verdict-inconclusive-the-machine-was-busy { color: var(--jp-warn-color1, #9a6700); }
.everyo-table-holder tbody tr, .everyo-flame { cursor: pointer; }
.everyo-table tr.everyo-selected td { background: var(--jp-layout-color2, #eef3f8); }
.everyo-why { margin: 6px 0; padding: 6px 8px; border: 1px solid var(--jp-border-color2, #ccc); }
.everyo-why-head { display: flex; gap: 10px; }
.everyo-why-close { margin-left: auto; }
.everyo-why-message { color: var(--jp-warn-color1, #b26a00); }
.everyo-why .everyo-table { width: auto; margin: 4px 0; }
.everyo-why-num { text-align: right; }
.everyo-why td:last-child, .everyo-why code { font-family: var(--jp-code-font-family, monospace); white-space: pre; }
.everyo-why-node { margin-left: 1.1em; white-space: nowrap; }
.everyo-why summary > * { margin-right: 8px; }
.everyo-why-outside { margin: 2px 0 4px; }
.everyo-why-outside-link { padding: 2px 8px; cursor: pointer; }
`;

const STYLE_ID = "everyo-widget-style";

function addStyle(doc, el) {
let style = doc.getElementById(STYLE_ID);
if (!style) {
style = doc.createElement("style");
style.id = STYLE_ID;
(doc.head || el).appendChild(style);
}
if (style.textContent !== CSS) style.textContent = CSS; // a newer build in the same page
el.classList.add("everyo-widget");
}
return { CSS, STYLE_ID, addStyle };
})();

// ---- src/dashboard_widget.js (entry)
const { mountCompare } = __everyo_src_compare_view_js;
const { downloadBytes, isDownloadMessage, renderExportButton } = __everyo_src_export_js;
const { FlameView, running } = __everyo_src_flame_view_js;
const { frameBatcher, reportWaiter } = __everyo_src_frames_js;
const { patchHeader, renderHeader, renderNotes } = __everyo_src_header_js;
const { mountMemory } = __everyo_src_memory_view_js;
const { failPlotly, loadPlotly, receivePlotly } = __everyo_src_plotly_loader_js;
const { liveModel, liveReports } = __everyo_src_live_report_js;
const { mountIcicle, mountPicker, mountTable } = __everyo_src_sections_js;
const { mountSteps, stepBounds, zoomWindow } = __everyo_src_steps_js;
const { EventStore } = __everyo_src_store_js;
const { mountWhy } = __everyo_src_why_view_js;
const { addStyle } = __everyo_src_style_js;
const { syncTheme } = __everyo_src_theme_js;
const { decodeColumns } = __everyo_src_wire_js;
const { wholeWindow } = __everyo_src_zoom_js;

const STATES = new Set();
const IDENTITY_TRAITS = ["report", "themes", "runs", "icicle", "comparison"];
const REPORT_WAIT_MS = 100; // how long the chart waits for the report after a live refresh's events

function ownsModel(state, model) {
return IDENTITY_TRAITS.some((name) => {
const value = model.get(name);
return value !== null && typeof value === "object" && value === state.model.get(name);
});
}

function createState(model) {
const state = {
model,
store: new EventStore(model.get("run_id") || ""),
compareStore: new EventStore(model.get("compare_id") || ""), // A's, while comparing
listeners: new Set(),
resendAsked: false,
compareResendAsked: false,
live: liveReports(), // a live refresh's report comes with its events
};
const notify = () => state.listeners.forEach((fn) => fn());
const onMessage = (msg, buffers) => {
if (!msg) return;
if (msg.type === "plotly") {
if (msg.error) failPlotly(msg.error);
else if (buffers && buffers.length) receivePlotly(buffers[0]);
} else if (msg.type === "download") {
if (isDownloadMessage(msg, buffers)) downloadBytes(document, msg.filename, buffers[0]);
} else if (msg.type === "report") {
if (msg.run === (model.get("run_id") || "")) state.live.accept(msg.report);
} else if (msg.type === "events" || msg.type === "bars") {
const runId = model.get("run_id") || "";
const compareId = model.get("compare_id") || "";
if (msg.run !== runId && msg.run !== compareId) return;
const cols = decodeColumns(msg, buffers);
let changed = false;
if (compareId && msg.run === compareId) {
if (state.compareStore.runId !== compareId) state.compareStore.reset(compareId);
if (state.compareStore.apply(cols)) {
state.compareResendAsked = false;
changed = true;
}
}
if (msg.run === runId) {
if (state.store.runId !== runId) state.store.reset(runId);
if (state.store.apply(cols)) {
state.resendAsked = false;
changed = true;
}
}
if (changed) notify();
if (msg.run === runId && msg.report) state.live.accept(msg.report); // after its events
}
};
const onRun = () => {
state.live.clear();
state.store.reset(model.get("run_id") || "");
state.resendAsked = false;
notify();
};
const onCompare = () => {
state.compareStore.reset(model.get("compare_id") || "");
state.compareResendAsked = false;
notify();
};
model.on("msg:custom", onMessage);
model.on("change:run_id", onRun);
model.on("change:compare_id", onCompare);
state.dispose = () => {
model.off("msg:custom", onMessage);
model.off("change:run_id", onRun);
model.off("change:compare_id", onCompare);
STATES.delete(state);
};
STATES.add(state);
return state;
}

function initialize({ model }) {
const state = createState(model);
return () => state.dispose();
}

function askResend(model, state) {
const report = model.get("report") || {};
if (state.store.empty && (report.events || 0) > 0 && !state.resendAsked) {
state.resendAsked = true;
model.send({ type: "resend" });
}
const a = (model.get("comparison") || {}).a;
const compareId = model.get("compare_id") || "";
if (compareId && a && a.events > 0 && state.compareStore.empty && !state.compareResendAsked) {
state.compareResendAsked = true;
model.send({ type: "resend", run: compareId });
}
}

function render({ model: traits, el }) {
let state = [...STATES].find((s) => ownsModel(s, traits));
if (!state) {
state = createState(traits); // no initialize (older anywidget): the views keep the store
state.fromView = true;
}
const model = liveModel(traits, state.live); // the report: the newest, trait or message
state.views = (state.views || 0) + 1;
const doc = el.ownerDocument || document;
el.classList.add("everyo-dashboard");
addStyle(doc, el);

const picker = mountPicker(doc, model);
let header = renderHeader(doc, model.get("report"));
let notes = renderNotes(doc, (model.get("report") || {}).notes);
let notesShown = JSON.stringify((model.get("report") || {}).notes || []);
const steps = doc.createElement("div");
steps.className = "everyo-steps-box";
const selectAfter = (anchorOf) => (target) => {
const anchor = anchorOf();
if (anchor.nextSibling !== why.el) anchor.after(why.el);
why.select(target);
};
const flame = new FlameView(doc, model, state, el);
const why = mountWhy(doc, model, {
onFrames: (frames) => flame.setFrames(frames),
onOutside: (target) => selectAfter(() => flame.el)(target),
});
const memory = mountMemory(doc, model, flame);
const exportBox = renderExportButton(doc, model);
const table = mountTable(doc, model, { onSelect: selectAfter(() => table.el) });
flame.onSelect = selectAfter(() => flame.el);
const icicle = mountIcicle(doc, model);
const compare = mountCompare(doc, model, state);
el.append(picker.el, header, notes, why.link, steps, flame.el, why.el, memory.el, exportBox, table.el, icicle.el, compare.el);
const showOwn = () => el.classList.toggle("everyo-compare-only", Boolean(model.get("compare_only")));

const extent = () => wholeWindow((model.get("report") || {}).wall_ms, state.store.whole.x1);
const stepWindowOf = (k) => {
const { store } = state;
const bounds = stepBounds(store.stepEnds, k, Number.isFinite(store.whole.x0) ? store.whole.x0 : 0);
return bounds && zoomWindow(bounds[0], bounds[1], 0.05, extent());
};
let stepsShown; // JSON of what is shown: a live report is a new object a few times a second
let stepsPanel = null;
const drawSteps = () => {
const info = table.shown().steps;
const text = JSON.stringify(info || null);
if (text === stepsShown) return;
stepsShown = text;
steps.hidden = !info;
if (!info) return;
if (!stepsPanel) {
stepsPanel = mountSteps(doc, { onZoom: (w) => flame.setZoom(w), stepWindowOf, extent });
steps.append(stepsPanel.el);
}
stepsPanel.update(info, table.shown().texts || {});
};
const onReport = () => {
table.update();
const report = table.shown();
const nextHeader = patchHeader(doc, header, report);
if (nextHeader !== header) header.replaceWith(nextHeader);
header = nextHeader;
if (JSON.stringify(report.notes || []) !== notesShown) {
notesShown = JSON.stringify(report.notes || []);
const nextNotes = renderNotes(doc, report.notes);
notes.replaceWith(nextNotes);
notes = nextNotes;
}
drawSteps();
waiter.report();
flame.drawNow(); // this is a frame already: the chart and the header change in the same one
showOwn();
askResend(model, state);
};
drawSteps();
showOwn();

const waiter = reportWaiter(() => flame.schedule(), REPORT_WAIT_MS);
const onData = () => {
compare.schedule();
waiter.data(running(model.get("report")));
};
const redraw = () => {
flame.schedule();
compare.schedule();
};
const onComparison = () => {
compare.update();
showOwn();
askResend(model, state);
};
state.listeners.add(onData);
const inFrame = frameBatcher();
const bindings = [
["report", inFrame(onReport)],
["theme", redraw],
["themes", redraw],
...picker.traits.map((t) => [t, picker.update]),
...table.traits.filter((t) => t !== "report").map((t) => [t, inFrame(table.update)]),
...icicle.traits.map((t) => [t, inFrame(icicle.update)]),
...memory.traits.map((t) => [t, inFrame(memory.update)]),
...why.traits.map((t) => [t, inFrame(why.update)]),
["why_target", inFrame(table.mark)],
["comparison", onComparison],
["compare_id", onComparison],
["compare_only", showOwn],
];
for (const [name, fn] of bindings) model.on(`change:${name}`, fn);
const stopTheme = syncTheme(model, doc);

flame.schedule(); // bars held already (a second view) show before plotly.js is there
let closed = false;
loadPlotly(model).then((plotly) => {
if (closed) return;
el.dataset.plotly = "loaded";
flame.setPlotly(plotly);
icicle.setPlotly(plotly);
memory.setPlotly(plotly);
compare.setPlotly(plotly);
}, (err) => {
if (closed) return;
el.dataset.plotly = "failed";
flame.message.textContent = `no flame chart axes: ${err.message}`;
});
askResend(model, state);

return () => {
closed = true;
waiter.dispose();
inFrame.cancel();
stopTheme();
for (const [name, fn] of bindings) model.off(`change:${name}`, fn);
state.listeners.delete(onData);
flame.destroy();
icicle.destroy();
memory.destroy();
compare.destroy();
state.views -= 1;
if (state.fromView && state.views === 0) state.dispose();
};
}

return { initialize, render };
})());

export default __everyo_impl;
