// Messages built as everyo_lab/widgets/wire.py builds them, for the tests.

/**
 * An `events` (with `self`, the self times, when any row has one; or `bars`, with `count`)
 * message: header plus buffers, each buffer a DataView
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
  // events: the kernel's self times (ticks), when the rows give them (`self`)
  if (type === "events" && rows.some((r) => "self" in r)) columns.push(Uint32Array.from(rows, (r) => r.self || 0));
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

/**
 * Just enough of a DOM for the panels' tests: elements and text nodes (`nodeType`, `data`),
 * `append`, `textContent`, attributes as plain properties, `dataset`, listeners
 * (`node.fire(type, event)` calls them) and the table API (`createTHead`, `createTBody`,
 * `insertRow`, `insertCell`, `rows`, `cells`, `deleteRow`, `deleteCell`). `doc.inserted`
 * counts the nodes put into the tree.
 */
export function fakeDocument() {
  const doc = { inserted: 0 };
  class FakeText {
    constructor(text) {
      this.nodeType = 3;
      this._data = String(text);
      this.parent = null;
    }
    get data() { return this._data; }
    set data(text) { this._data = String(text); }
    get textContent() { return this._data; }
    get nextSibling() { return sibling(this, 1); }
  }
  const sibling = (node, step) => {
    const list = node.parent ? node.parent.childNodes : [];
    return list[list.indexOf(node) + step] || null;
  };
  class FakeElement {
    constructor(tag) {
      this.nodeType = 1;
      this.tagName = tag.toUpperCase();
      this.childNodes = [];
      this.className = "";
      this.dataset = {};
      this.style = {};
      this.title = "";
      this.hidden = false;
      this.parent = null;
      this.listeners = {};
    }
    get firstChild() { return this.childNodes[0] || null; }
    get nextSibling() { return sibling(this, 1); }
    appendChild(node) {
      if (node.parent) node.parent.childNodes.splice(node.parent.childNodes.indexOf(node), 1);
      node.parent = this;
      this.childNodes.push(node);
      doc.inserted += 1;
      return node;
    }
    append(...nodes) {
      for (const n of nodes) this.appendChild(typeof n === "string" ? new FakeText(n) : n);
    }
    get textContent() { return this.childNodes.map((c) => c.textContent).join(""); }
    set textContent(text) {
      for (const c of this.childNodes) c.parent = null;
      this.childNodes = [];
      if (text !== "") this.appendChild(new FakeText(text));
    }
    replaceChildren(...nodes) {
      for (const c of this.childNodes) c.parent = null;
      this.childNodes = [];
      this.append(...nodes);
    }
    get tBodies() { return this.childNodes.filter((c) => c.tagName === "TBODY"); }
    addEventListener(type, fn) { (this.listeners[type] ||= []).push(fn); }
    fire(type, event = {}) { for (const fn of this.listeners[type] || []) fn(event); }
    // tables
    createTHead() { return this.appendChild(new FakeElement("thead")); }
    createTBody() { return this.appendChild(new FakeElement("tbody")); }
    get rows() { return this.childNodes; }
    get cells() { return this.childNodes; }
    insertRow() { return this.appendChild(new FakeElement("tr")); }
    insertCell() { return this.appendChild(new FakeElement("td")); }
    deleteRow(i) { this.childNodes.splice(i, 1)[0].parent = null; }
    deleteCell(i) { this.childNodes.splice(i, 1)[0].parent = null; }
  }
  doc.createElement = (tag) => new FakeElement(tag);
  doc.createTextNode = (text) => new FakeText(text);
  return doc;
}
