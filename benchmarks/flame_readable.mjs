// The flame chart's level of detail for a long run zoomed out, with and without the readable
// merge (issue 43, item 12): `node benchmarks/flame_readable.mjs`. A run shaped like the issue's
// (1,800 training steps of a small MLP, 11 events a step: 19,800 events; two depths), held as
// the browser's store holds raw events; per window, the median time of 200 levelOfDetail calls
// (what a repaint computes before it paints) and the bars it returns. The call paths are
// resolved once (store.resolvePaths), outside the repaints; its time is printed too.
import { EventStore } from "../js/src/store.js";
import { levelOfDetail, MAX_BARS } from "../js/src/lod.js";

const STEPS = 1800;
const TOP = [["Sequential", 0.035], ["backward", 0.08], ["SGD.step", 0.012]];
const BELOW = [[["Linear", 0.012], ["ReLU", 0.004], ["Linear", 0.01]], [["sum.backward", 0.02], ["power.backward", 0.01], ["Linear.backward", 0.02], ["ReLU.backward", 0.005], ["Linear.backward", 0.015]], []];
const keys = new Map();
const keyOf = (name) => (keys.has(name) ? keys.get(name) : keys.set(name, keys.size).get(name));
const rows = [];
const stepEnds = [];
let t = 0;
for (let s = 0; s < STEPS; s++) {
  TOP.forEach(([name, dur], j) => {
    const start = t;
    let u = t + 0.002;
    for (const [child, d] of BELOW[j]) {
      rows.push([u, u + d, 1, keyOf(child)]);
      u += d + 0.002;
    }
    t = Math.max(u, start + dur);
    rows.push([start, t, 0, keyOf(name)]);
    t += 0.01;
  });
  stepEnds.push(t);
  t += 0.005;
}
const n = rows.length;
const store = new EventStore("bench");
store.whole.append({
  n, start: Float64Array.from(rows, (r) => r[0]), end: Float64Array.from(rows, (r) => r[1]),
  depth: Uint16Array.from(rows, (r) => r[2]), thread: new Uint16Array(n),
  key: Int32Array.from(rows, (r) => r[3]), count: new Uint32Array(n).fill(1),
});
store.stepEnds = Float64Array.from(stepEnds);
store.version += 1;
let t0 = performance.now();
const pathParent = store.resolvePaths();
const resolveMs = performance.now() - t0;
const items = [...store.whole.lanes.values()].map((lane) => ({ lane, row: lane.depth }));

function median(fn, repeat = 200) {
  const times = [];
  let out;
  for (let i = 0; i < repeat; i++) {
    t0 = performance.now();
    out = fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return [times[repeat >> 1], out];
}

console.log(`${n} events, ${STEPS} steps; call paths resolved once in ${resolveMs.toFixed(2)} ms`);
const whole = store.whole.x1;
for (const [what, x0, x1] of [["whole run", 0, whole], ["a tenth", whole * 0.45, whole * 0.55], ["two steps", stepEnds[899], stepEnds[901]]]) {
  const [before, a] = median(() => levelOfDetail(items, x0, x1, 820, MAX_BARS, store.codes));
  const [after, b] = median(() => levelOfDetail(items, x0, x1, 820, MAX_BARS, store.codes, { stepEnds: store.stepEnds, pathParent }));
  console.log(`${what}: without ${before.toFixed(3)} ms (${a.n} bars), with the readable merge ${after.toFixed(3)} ms (${b.n} bars)`);
}
