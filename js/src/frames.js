// Deferring DOM work to the next animation frame, several updates batched into one.

export const nextFrame = (fn) =>
  typeof requestAnimationFrame === "function" ? requestAnimationFrame(fn) : setTimeout(fn, 16);

/** Cancel what `nextFrame` returned. */
export const cancelFrame = (id) =>
  typeof cancelAnimationFrame === "function" ? cancelAnimationFrame(id) : clearTimeout(id);

/**
 * `inFrame(fn)` is `fn` deferred to the next animation frame; every function deferred before
 * that frame runs once in it, in the order first asked. `inFrame.cancel()` drops them.
 */
export function frameBatcher(schedule = nextFrame) {
  let due = new Set();
  let pending = false;
  let cancelled = false;
  const run = () => {
    pending = false;
    const fns = due;
    due = new Set();
    if (!cancelled) for (const fn of fns) fn();
  };
  const inFrame = (fn) => () => {
    due.add(fn);
    if (!pending && !cancelled) {
      pending = true;
      schedule(run);
    }
  };
  inFrame.cancel = () => {
    cancelled = true;
    due.clear();
  };
  return inFrame;
}
