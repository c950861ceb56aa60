// The "why" panel: the hot lines of the selected table row or flame-chart bar. Selecting sets
// the `why_target` trait; the kernel answers with the `why` trait (everyo_lab/views/why/why_panel.py),
// every text and figure in it already written, so this module lays it out and formats nothing.
// While the run records the kernel rewrites `why` at the live table's pace; each rewrite
// replaces the panel's content (a few dozen nodes at most: the kernel bounds the lines, the
// tree and the bars).

function commit(model, values) {
  for (const [name, value] of Object.entries(values)) model.set(name, value);
  model.save_changes();
}

/** What a table row selects (the row as the report gives it, the table's grouping). */
export function rowTarget(row, groupBy) {
  const target = { type: "row", group_by: groupBy || "name", kind: row.kind || "", name: String(row.name), label: row.label || String(row.name) };
  if (groupBy === "shape") target.shapes = row.shapes || "";
  return target;
}

/**
 * What a flame-chart bar selects: one event (`count` 1), or, for a bar that merges events of one
 * key, every event of that name; null for a bar that merges several keys (zoom in first).
 */
export function barTarget(bar, lane, info) {
  if (!info) return null;
  if (bar.count > 1) return { type: "row", group_by: "name", kind: info.kind, name: info.name, label: info.name };
  return {
    type: "bar", thread: lane.thread, depth: lane.depth, start_ms: bar.start, end_ms: bar.end,
    kind: info.kind, name: info.name, path: info.path || "", label: info.label,
  };
}

/** True when `target` (a `why_target`) selects the table row `row` of grouping `groupBy`. */
export function selectsRow(target, row, groupBy) {
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

/** A table of `items`, each row's cells from `cells(item)`: `[text, bar?, title?]` (`bar`: a share
 * in [0, 1] drawn under the text, a layout number). */
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

/** The call tree as nested <details> (open), each summary one node's share and line. */
export function treeNode(doc, item, depth = 0) {
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

/** The panel's content for `why` (the trait), or null when nothing is selected. */
export function renderWhy(doc, why, { onClose, onToggle } = {}) {
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

/** The live panel of `target` in `live` (the `why_live` trait): the row's, or for one event
 * the panel of every event of its name; a note when the kernel keeps none for it. */
export function livePanel(live, target) {
  if (!target || !target.type || !live || !live.panels) return null;
  const asRow = target.type === "bar" ? { type: "row", group_by: "name", kind: target.kind, name: target.name } : target;
  const entry = live.panels.find(({ key }) => selectsRow(asRow, key, key.group_by));
  if (entry) return entry.panel;
  return { state: "pending", title: target.label || target.name, message: live.other || "" };
}

/**
 * The panel bound to the model: `select(target)` sets `why_target` (a click), the close button
 * clears it, the fold button flips `why_all_frames`; `update` lays out what there is to show,
 * and hands one event's sampled frames (`expand`) to `onFrames` (the flame chart draws them
 * under the event; null when there are none).
 * While the run records, the kernel answers a selection only when the cell ends (its comm
 * messages wait for the cell), so the panel shows the selection's entry of `why_live`; after
 * that the `why` trait (until it comes, the last panel shown stays).
 * `link`: the button that opens the panel of the time outside every event (the `why_outside`
 * trait: shown when the kernel finds enough of the run's sampled time there, or the run has no
 * events; hidden while that panel is open), through `onOutside(target)` (default: select it).
 */
export function mountWhy(doc, model, { onFrames = null, onOutside = null } = {}) {
  const el = node(doc, "div", "everyo-why");
  el.hidden = true;
  let shown = null;
  // the selection is the trait: a new view of the widget (the cell's end re-renders it) keeps
  // it, and the kernel clears it when the dashboard shows another run
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

/**
 * What the flame chart draws of the panel `why` of the selection `selected`: one event's
 * sampled frames under its thread in its span, or the sampled call tree of a run without
 * events (its own band, over the run's time: `thread` null); null when there is none.
 */
export function framesOf(why, selected) {
  const expand = why && why.expand && selected ? why.expand : null;
  if (!expand) return null;
  if (selected.type === "bar") return { ...expand, thread: selected.thread, start: selected.start_ms, end: selected.end_ms };
  if (selected.type === "outside") return { ...expand, thread: null, start: expand.start_ms, end: expand.end_ms };
  return null;
}
