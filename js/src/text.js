// Writing text into the DOM without replacing nodes.

/**
 * Bring `el`'s text to `text`; returns whether anything was written. Where `el` holds one text
 * node its character data changes in place: `el.textContent = ...` would remove that node and
 * insert a new one, which a live refresh a few times a second turns into style and layout
 * work for every such cell.
 */
export function setText(el, text) {
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
