// Messages built as everyo_lab/widgets/wire.py builds them, for the tests.

/**
 * An `events` (or `bars`, with `count`) message: header plus buffers, each buffer a DataView
 * at an odd offset of a shared ArrayBuffer (as a websocket frame may deliver them).
 */
export function message(type, rows, { run = "r1", tickNs = 1000, t0Ms = 0, keys = [], key0 = 0, steps = [], threads = {}, window = null, pxMs = 0, reset = false, keyBytes = 2, unaligned = true } = {}) {
  const n = rows.length;
  const KeyType = keyBytes === 4 ? Uint32Array : Uint16Array;
  const columns = [
    Uint32Array.from(rows, (r) => r.start),
    Uint32Array.from(rows, (r) => r.dur),
    Uint16Array.from(rows, (r) => r.depth || 0),
    Uint16Array.from(rows, (r) => r.thread || 0),
    KeyType.from(rows, (r) => (r.key === -1 ? (keyBytes === 4 ? 0xffffffff : 0xffff) : r.key || 0)),
  ];
  const ones = keyBytes === 4 ? 0xffffffff : 0xffff;
  if (type === "bars") {
    columns.push(Uint32Array.from(rows, (r) => r.count || 1));
    const dom = (r) => ("dom" in r ? r.dom : r.key);
    columns.push(KeyType.from(rows, (r) => (dom(r) === -1 ? ones : dom(r) || 0)));
  }
  columns.push(Float64Array.from(steps));
  const total = columns.reduce((sum, c) => sum + c.byteLength + 3, 0);
  const shared = new ArrayBuffer(total + 8);
  let offset = unaligned ? 1 : 0;
  const buffers = columns.map((col) => {
    new Uint8Array(shared, offset, col.byteLength).set(new Uint8Array(col.buffer, col.byteOffset, col.byteLength));
    const view = new DataView(shared, offset, col.byteLength);
    offset += col.byteLength + (unaligned ? 3 : 8 - (col.byteLength % 8 || 8));
    return view;
  });
  const header = {
    type, run, reset, n, t0_ms: t0Ms, tick_ns: tickNs, key_bytes: keyBytes, key0, keys, threads,
    steps: steps.length, complete: false,
  };
  if (type === "bars") Object.assign(header, { window, px_ms: pxMs, reset: true, key0: 0 });
  return [header, buffers];
}

/** A lane-like object (as store.js Lane) from `[start, end]` pairs. */
export function lane(pairs, { key = 0, count = null } = {}) {
  const n = pairs.length;
  const start = Float64Array.from(pairs, (p) => p[0]);
  const end = Float64Array.from(pairs, (p) => p[1]);
  const reach = new Float64Array(n);
  for (let i = 0; i < n; i++) reach[i] = Math.max(i ? reach[i - 1] : -Infinity, end[i]);
  const keys = Int32Array.from(pairs, (p) => (p[2] === undefined ? key : p[2]));
  const counts = Uint32Array.from(pairs, (p, i) => (count ? count[i] : 1));
  return { n, start, end, reach, key: keys, count: counts };
}
