// Work that may wait for an idle moment of the page, in a task of its own.

/**
 * Run `fn` when the page is idle, at the latest `timeoutMs` later, in a task of its own;
 * returns a function that cancels it. Without requestIdleCallback: a timer.
 */
export function whenIdle(fn, timeoutMs = 500, g = globalThis) {
  if (typeof g.requestIdleCallback === "function") {
    const id = g.requestIdleCallback(() => fn(), { timeout: timeoutMs });
    return () => g.cancelIdleCallback(id);
  }
  const id = setTimeout(fn, 0);
  return () => clearTimeout(id);
}
