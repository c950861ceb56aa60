// Decoding the kernel's `events` and `bars` messages (spec: everyo_lab/widgets/wire.py).
//
// Each message is a JSON header plus binary buffers: start, dur (uint32 ticks), depth, thread
// (uint16), key (uint16 or uint32), for events their self time (uint32 ticks: the kernel's,
// shown as sent), for bars a count (uint32) and the main key, then the step ends (float64 ms).
// Buffers arrive as DataView (sometimes ArrayBuffer); a view's offset need not be aligned to
// its element size, in which case the bytes are copied first.

/** Key of a bar merging events of several colours (sent as all ones). */
export const MIXED = -1;

/** An ArrayBuffer, DataView or typed array as `{buffer, byteOffset, byteLength}`. */
function bytesOf(buf) {
  if (buf instanceof ArrayBuffer) return { buffer: buf, byteOffset: 0, byteLength: buf.byteLength };
  if (buf && buf.buffer instanceof ArrayBuffer) return buf;
  throw new TypeError("expected an ArrayBuffer or a view of one");
}

/** `n` elements of type `Type` read from `buf` (copied when the offset is unaligned). */
export function typedColumn(buf, Type, n) {
  const { buffer, byteOffset, byteLength } = bytesOf(buf);
  const bytes = n * Type.BYTES_PER_ELEMENT;
  if (bytes > byteLength) throw new RangeError(`buffer of ${byteLength} bytes, ${bytes} expected`);
  if (byteOffset % Type.BYTES_PER_ELEMENT === 0) return new Type(buffer, byteOffset, n);
  return new Type(buffer.slice(byteOffset, byteOffset + bytes));
}

/** `n` float64s of `buf`, or all it holds when the header does not say how many. */
function float64s(buf, n) {
  if (!buf) return new Float64Array(0);
  const all = Math.floor(bytesOf(buf).byteLength / 8);
  return typedColumn(buf, Float64Array, Number.isInteger(n) ? Math.min(n, all) : all);
}

/**
 * The columns of an `events` or `bars` message, with times in ms from the run start.
 *
 * Returns `{type, run, reset, n, start, end (Float64Array ms), depth, thread (Uint16Array),
 * key (Int32Array, MIXED for a merged bar of several colours), count (Uint32Array, all ones
 * for raw events), dom (Int32Array: a bar's key with the most time, MIXED when unknown),
 * selfNs (Float64Array: each raw event's self time in ns, NaN when not sent; null for bars),
 * stepEnds (Float64Array), step0 (where they go in the held list), keys, key0,
 * threads, window, pxMs, complete}`.
 */
export function decodeColumns(msg, buffers) {
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
  // bars: the key with the most time in each bar (a merged bar of several classes)
  let dom = key;
  if (isBars && buffers.length > 7) {
    const rawDom = typedColumn(buffers[6], KeyType, n);
    dom = new Int32Array(n);
    for (let i = 0; i < n; i++) dom[i] = rawDom[i] === allOnes ? MIXED : rawDom[i];
  }
  // events: the kernel's self times (ticks), when the message has them
  let selfNs = null;
  if (!isBars) {
    selfNs = new Float64Array(n).fill(NaN);
    if (buffers.length > 6) {
      const rawSelf = typedColumn(buffers[5], Uint32Array, n);
      for (let i = 0; i < n; i++) selfNs[i] = rawSelf[i] * (msg.tick_ns || 1);
    }
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
    selfNs,
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

/** What colours and labels a key entry `[kind, name, path, colour]` stands for. */
export function keyInfo(entry) {
  const [kind, name, path, color] = entry;
  return { kind, name, path, color, colorKey: kind === "module" ? name : kind, label: eventLabel(name, path) };
}

/** "Conv2d [features.3]": the name, and the path in brackets when there is one that differs. */
export function eventLabel(name, path) {
  return path && path !== name ? `${name} [${path}]` : String(name);
}
