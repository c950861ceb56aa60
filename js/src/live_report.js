// The live report: while a run records, the kernel sends each refresh's report in the same
// message as its events (one message a refresh, not two: each one wakes the kernel's IOPub
// thread, the Jupyter server and the browser, which a loop keeping every core busy pays for),
// and leaves the `report` trait of the page's model as it was. The views read the report
// through `liveModel`: the newest live report while there is one, else the trait. A trait
// change (the final report, a new sort while live) drops the live one, so the trait wins.

/** The live-report part of a model's shared state; `dispose` stops listening. */
export function liveReports(model) {
  const live = { report: null, listeners: new Set() };
  const dropLive = () => {
    live.report = null;
  };
  // registered before any view's listener (in the model's state), so they read the trait
  model.on("change:report", dropLive);
  live.dispose = () => model.off("change:report", dropLive);
  live.clear = dropLive; // another run is shown
  /** A message's report (of the shown run): the views' report listeners run next. */
  live.accept = (report) => {
    if (!report || typeof report !== "object") return;
    live.report = report;
    for (const fn of [...live.listeners]) fn();
  };
  return live;
}

/**
 * `model` for a view: `get("report")` is the live report while there is one, and a
 * `change:report` listener also hears live reports; everything else is the model's own.
 */
export function liveModel(model, live) {
  const get = (name) => (name === "report" && live.report ? live.report : model.get(name));
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
