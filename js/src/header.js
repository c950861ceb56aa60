// The header line and the notes of a run, from the report trait (plain DOM, no plotly).
import { formatMs, formatShare } from "./format.js";
import { setText } from "./text.js";
import { eventLabel } from "./wire.js";

/** "Conv2d [features.3] 12.3 ms (45.6 %)". */
export function hotSpotText(spot) {
  const label = spot.label || eventLabel(spot.name || "?", spot.path);
  const parts = [label];
  if (typeof spot.self_ms === "number") parts.push(`${formatMs(spot.self_ms)} ms`);
  if (typeof spot.share === "number") parts.push(`(${formatShare(spot.share)})`);
  return parts.join(" ");
}

/**
 * The header's parts after the label: status (error), wall time, events, hot spots. A report
 * from the kernel carries these words (`texts`, spelt by views/report.py for every renderer),
 * shown as they are; the formatting here is for a report without them.
 */
export function headerParts(report) {
  const parts = [];
  const texts = report.texts || {};
  if (report.status) parts.push(report.error ? `${report.status} (${report.error})` : String(report.status));
  if (texts.wall) parts.push(texts.wall);
  else if (typeof report.wall_ms === "number") parts.push(`${formatMs(report.wall_ms)} ms`);
  if (texts.events) parts.push(texts.events);
  else if (typeof report.events === "number") parts.push(`${report.events.toLocaleString("en-US")} events`);
  const hot = (texts.hot_spots || (report.hot_spots || []).map(hotSpotText)).slice(0, 3);
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
