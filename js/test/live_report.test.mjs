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

test("liveModel: views read and hear the newest report, by the kernel's number, from either route", () => {
  const model = traitModel({ report: { seq: 1, status: "running", events: 0 }, top: 5 });
  const live = liveReports();
  const view = liveModel(model, live);
  const heard = [];
  const onReport = () => heard.push(view.get("report").events);
  view.on("change:report", onReport);
  assert.equal(view.get("report").events, 0); // no live report yet: the trait
  live.accept({ seq: 2, status: "running", live: true, events: 10 });
  live.accept({ seq: 3, status: "running", live: true, events: 25 });
  assert.deepEqual(heard, [10, 25]);
  assert.equal(view.get("top"), 5); // other traits are the model's
  model.set("report", { seq: 4, status: "completed", events: 30 }); // the final report, as a trait
  assert.deepEqual(heard, [10, 25, 30]); // newer: shown at once, in the same listener
  live.accept(null); // a message without a report changes nothing
  live.accept({ seq: 3, events: 25 }); // an older report arriving late: not shown
  assert.equal(view.get("report").events, 30);
  view.off("change:report", onReport);
  live.accept({ seq: 5, status: "running", events: 40 });
  assert.deepEqual(heard, [10, 25, 30, 30]);
});

test("liveModel: the model's own methods stay bound to it; another run clears the message's report", () => {
  const model = traitModel({ report: {} });
  const live = liveReports();
  const view = liveModel(model, live);
  view.send({ type: "resend" });
  assert.deepEqual(model.sent, [{ type: "resend" }]);
  live.accept({ seq: 2, events: 2 });
  live.clear(); // another run is shown: its trait until its own live report
  assert.deepEqual(view.get("report"), {});
  live.accept({ seq: 3, events: 3 });
  model.set("report", { seq: 4, events: 4 });
  assert.equal(view.get("report").events, 4);
});
