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

/**
 * A live refresh brings its events, then its report (one message: the report is taken right
 * after the events are stored). `reportWaiter(draw, waitMs)` draws for new
 * events only if no report follows within `waitMs` (`data(live)`: events arrived; not live,
 * `draw` at once); `report()` drops the pending draw, since the report's own frame draws the
 * chart with the header: the page lays out and paints once per refresh, not twice.
 * `later`/`cancel` (setTimeout and clearTimeout) are for tests.
 */
export function reportWaiter(draw, waitMs, { later = setTimeout, cancel = clearTimeout } = {}) {
  let timer = null;
  const drop = () => {
    if (timer !== null) cancel(timer);
    timer = null;
  };
  return {
    data(live) {
      if (!live) {
        draw();
      } else if (timer === null) {
        timer = later(() => {
          timer = null;
          draw();
        }, waitMs);
      }
    },
    report: drop,
    dispose: drop,
  };
}
