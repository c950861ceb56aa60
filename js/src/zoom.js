// Reading plotly's relayout events as zoom windows.

/**
 * What a `plotly_relayout` event asks of the x axis: `{whole: true}` (double-click or
 * autoscale: back to the whole run), `{x0, x1}` (a drag, pan or zoom button; a lone range end
 * keeps the other one of `current`), or null (nothing about the x range).
 */
export function parseRelayout(ev, current = null) {
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

/** True when two windows are the same to within a millionth of their span. */
export function sameWindow(a, b) {
  if (!a || !b) return a === b;
  const tol = 1e-6 * Math.max(Math.abs(a[1] - a[0]), Math.abs(b[1] - b[0]), 1e-9);
  return Math.abs(a[0] - b[0]) <= tol && Math.abs(a[1] - b[1]) <= tol;
}

/** The whole run's window: from 0 to the wall time, or to the last event's end if later. */
export function wholeWindow(wallMs, extentEnd) {
  const end = Math.max(Number(wallMs) || 0, Number.isFinite(extentEnd) ? extentEnd : 0);
  return [0, end > 0 ? end : 1];
}

/**
 * The window of a run that is still growing: from 0 to a round number at least 10 % past its
 * end (1827 ms -> 2500), so the axis, whose redraw costs far more than the bars', changes
 * only now and then while the bars follow the run.
 */
export function followWindow(wallMs, extentEnd) {
  const end = wholeWindow(wallMs, extentEnd)[1] * 1.1;
  const decade = 10 ** Math.floor(Math.log10(end));
  const nice = [1, 2, 2.5, 5, 10].find((m) => m * decade >= end);
  return [0, nice * decade];
}
