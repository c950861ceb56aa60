// The header line and the notes of a run, from the report (plain DOM, no plotly). Every word
// and number in it is the kernel's (`report.texts`, spelt by views/report.py for every
// renderer); nothing here formats a figure.
import { setText } from "./text.js";

/** The header's parts after the label: status (error), wall time, events, hot spots. */
export function headerParts(report) {
  const parts = [];
  const texts = report.texts || {};
  if (report.status) parts.push(report.error ? `${report.status} (${report.error})` : String(report.status));
  if (texts.wall) parts.push(texts.wall);
  if (texts.events) parts.push(texts.events);
  const hot = (texts.hot_spots || []).slice(0, 3);
  if (hot.length) parts.push(`hot spots (self time): ${hot.join(", ")}`);
  return parts;
}

/** `<div class="everyo-header"><b>label</b> · status · ... </div>`. */
export function renderHeader(doc, report) {
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

/**
 * The header for `report`: `div` itself with its texts rewritten where they changed (a live
 * report arrives a few times a second, and a new header each time cost the page a style and
 * layout pass of the elements it replaced), or, when `div` cannot show this report (no run
 * yet, or a run now), a new one for the caller to put in its place.
 */
export function patchHeader(doc, div, report) {
  const parts = div.everyoParts;
  if (!parts || !report || !report.run_id) return renderHeader(doc, report);
  setText(parts.bold, String(report.label || report.run_id));
  setText(parts.rest, headerParts(report).map((p) => ` · ${p}`).join(""));
  const title = report.start_iso ? `started ${report.start_iso}` : "";
  if (div.title !== title) div.title = title;
  return div;
}

/** The notes as a list (nothing when there are none). */
export function renderNotes(doc, notes) {
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
