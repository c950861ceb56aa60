// The reports of a model: each report reaches the page once, either as the `report` trait (the
// final report, a new sort or grouping, a new run: what a saved notebook keeps) or, while a run
// records, in the message that brings its events (one message a refresh, not two: each one
// wakes the kernel's IOPub thread, the Jupyter server and the browser, which a loop keeping
// every core busy pays for). The kernel numbers its reports (`seq`), and the views read the
// newest, wherever it came from.

/** The message-borne part of a model's reports. */
export function liveReports() {
  const live = { report: null, listeners: new Set() };
  live.clear = () => {
    live.report = null; // another run is shown
  };
  /** A message's report (of the shown run): the views' report listeners run next. */
  live.accept = (report) => {
    if (!report || typeof report !== "object") return;
    live.report = report;
    for (const fn of [...live.listeners]) fn();
  };
  return live;
}

/** The newer of the trait's report and the last message's (by the kernel's `seq`). */
export function newestReport(trait, message) {
  if (!message) return trait;
  if (!trait || typeof trait !== "object" || !(Number(trait.seq) >= Number(message.seq))) return message;
  return trait;
}

/**
 * `model` for a view: `get("report")` is the newest report, and a `change:report` listener also
 * hears reports that came in messages; everything else is the model's own.
 */
export function liveModel(model, live) {
  const get = (name) => (name === "report" ? newestReport(model.get("report"), live.report) : model.get(name));
  const on = (event, fn) => {
    model.on(event, fn);
    if (event === "change:report") live.listeners.add(fn);
  };
  const off = (event, fn) => {
    model.off(event, fn);
    if (event === "change:report") live.listeners.delete(fn);
  };
  return new Proxy(model, {
    get(target, prop) {
      if (prop === "get") return get;
      if (prop === "on") return on;
      if (prop === "off") return off;
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
