import { test } from "node:test";
import assert from "node:assert/strict";
import { liveModel, liveReports } from "../src/live_report.js";

/** A Backbone-like model: traits, `change:NAME` listeners in registration order, `set`. */
function traitModel(traits) {
  const handlers = new Map();
  return {
    sent: [],
    get: (name) => traits[name],
    set(name, value) {
      traits[name] = value;
      for (const fn of [...(handlers.get(`change:${name}`) || [])]) fn();
    },
    on(event, fn) {
      if (!handlers.has(event)) handlers.set(event, []);
      handlers.get(event).push(fn);
    },
    off(event, fn) {
      handlers.set(event, (handlers.get(event) || []).filter((f) => f !== fn));
    },
    send(msg) {
      this.sent.push(msg);
    },
  };
}

test("liveModel: a live report is what views read and hear, until the trait changes", () => {
  const model = traitModel({ report: { status: "running", events: 0 }, top: 5 });
  const live = liveReports(model);
  const view = liveModel(model, live);
  const heard = [];
  const onReport = () => heard.push(view.get("report").events);
  view.on("change:report", onReport);
  assert.equal(view.get("report").events, 0); // no live report yet: the trait
  live.accept({ status: "running", live: true, events: 10 });
  live.accept({ status: "running", live: true, events: 25 });
  assert.deepEqual(heard, [10, 25]);
  assert.equal(view.get("top"), 5); // other traits are the model's
  model.set("report", { status: "completed", events: 30 }); // the final report, as a trait
  assert.deepEqual(heard, [10, 25, 30]); // the trait wins at once, in the same listener
  live.accept(null); // a message without a report changes nothing
  assert.equal(view.get("report").events, 30);
  view.off("change:report", onReport);
  live.accept({ status: "running", events: 40 });
  assert.deepEqual(heard, [10, 25, 30]);
});

test("liveModel: the model's own methods stay bound to it; dispose stops listening", () => {
  const model = traitModel({ report: {} });
  const live = liveReports(model);
  const view = liveModel(model, live);
  view.send({ type: "resend" });
  assert.deepEqual(model.sent, [{ type: "resend" }]);
  live.accept({ events: 2 });
  live.clear(); // another run is shown: its trait until its own live report
  assert.deepEqual(view.get("report"), {});
  live.accept({ events: 3 });
  live.dispose();
  model.set("report", { events: 4 });
  assert.equal(view.get("report").events, 3); // no longer dropped by trait changes
});
