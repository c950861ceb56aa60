// anywidget entry: the dashboard of one run (header, notes, steps, flame chart, export button,
// summary table, icicle, optional run picker), drawn with plotly.js loaded once per page.
//
// Per model (`initialize`): the event store and the custom-message handler, so every view of
// the widget shares one copy of the events. Per view (`render`): the DOM and the flame chart.
import { mountCompare } from "./compare_view.js";
import { downloadBytes, isDownloadMessage, renderExportButton } from "./export.js";
import { FlameView, running } from "./flame_view.js";
import { frameBatcher, reportWaiter } from "./frames.js";
import { patchHeader, renderHeader, renderNotes } from "./header.js";
import { mountMemory } from "./memory_view.js";
import { failPlotly, loadPlotly, receivePlotly } from "./plotly_loader.js";
import { liveModel, liveReports } from "./live_report.js";
import { mountIcicle, mountPicker, mountTable } from "./sections.js";
import { mountSteps, stepBounds, zoomWindow } from "./steps.js";
import { EventStore } from "./store.js";
import { mountWhy } from "./why_view.js";
import { addStyle } from "./style.js";
import { syncTheme } from "./theme.js";
import { decodeColumns } from "./wire.js";
import { wholeWindow } from "./zoom.js";

// Model states of this module instance. A view's model proxy is not the proxy `initialize`
// got, but both read the same model: its object-valued traits are the same objects.
const STATES = new Set();
const IDENTITY_TRAITS = ["report", "themes", "runs", "icicle", "comparison"];
const REPORT_WAIT_MS = 100; // how long the chart waits for the report after a live refresh's events

function ownsModel(state, model) {
  return IDENTITY_TRAITS.some((name) => {
    const value = model.get(name);
    return value !== null && typeof value === "object" && value === state.model.get(name);
  });
}

function createState(model) {
  const state = {
    model,
    store: new EventStore(model.get("run_id") || ""),
    compareStore: new EventStore(model.get("compare_id") || ""), // A's, while comparing
    listeners: new Set(),
    resendAsked: false,
    compareResendAsked: false,
    live: liveReports(), // a live refresh's report comes with its events
  };
  const notify = () => state.listeners.forEach((fn) => fn());
  const onMessage = (msg, buffers) => {
    if (!msg) return;
    if (msg.type === "plotly") {
      if (msg.error) failPlotly(msg.error);
      else if (buffers && buffers.length) receivePlotly(buffers[0]);
    } else if (msg.type === "download") {
      if (isDownloadMessage(msg, buffers)) downloadBytes(document, msg.filename, buffers[0]);
    } else if (msg.type === "report") {
      if (msg.run === (model.get("run_id") || "")) state.live.accept(msg.report);
    } else if (msg.type === "events" || msg.type === "bars") {
      const runId = model.get("run_id") || "";
      const compareId = model.get("compare_id") || "";
      if (msg.run !== runId && msg.run !== compareId) return;
      const cols = decodeColumns(msg, buffers);
      let changed = false;
      if (compareId && msg.run === compareId) {
        if (state.compareStore.runId !== compareId) state.compareStore.reset(compareId);
        if (state.compareStore.apply(cols)) {
          state.compareResendAsked = false;
          changed = true;
        }
      }
      if (msg.run === runId) {
        if (state.store.runId !== runId) state.store.reset(runId);
        if (state.store.apply(cols)) {
          state.resendAsked = false;
          changed = true;
        }
      }
      if (changed) notify();
      if (msg.run === runId && msg.report) state.live.accept(msg.report); // after its events
    }
  };
  const onRun = () => {
    state.live.clear();
    state.store.reset(model.get("run_id") || "");
    state.resendAsked = false;
    notify();
  };
  const onCompare = () => {
    state.compareStore.reset(model.get("compare_id") || "");
    state.compareResendAsked = false;
    notify();
  };
  model.on("msg:custom", onMessage);
  model.on("change:run_id", onRun);
  model.on("change:compare_id", onCompare);
  state.dispose = () => {
    model.off("msg:custom", onMessage);
    model.off("change:run_id", onRun);
    model.off("change:compare_id", onCompare);
    STATES.delete(state);
  };
  STATES.add(state);
  return state;
}

function initialize({ model }) {
  const state = createState(model);
  return () => state.dispose();
}

/** A view with nothing to show of a run that has events asks the kernel for everything (of
 * the shown run, and of the compared run A). */
function askResend(model, state) {
  const report = model.get("report") || {};
  if (state.store.empty && (report.events || 0) > 0 && !state.resendAsked) {
    state.resendAsked = true;
    model.send({ type: "resend" });
  }
  const a = (model.get("comparison") || {}).a;
  const compareId = model.get("compare_id") || "";
  if (compareId && a && a.events > 0 && state.compareStore.empty && !state.compareResendAsked) {
    state.compareResendAsked = true;
    model.send({ type: "resend", run: compareId });
  }
}

function render({ model: traits, el }) {
  let state = [...STATES].find((s) => ownsModel(s, traits));
  if (!state) {
    state = createState(traits); // no initialize (older anywidget): the views keep the store
    state.fromView = true;
  }
  const model = liveModel(traits, state.live); // the report: the newest, trait or message
  state.views = (state.views || 0) + 1;
  const doc = el.ownerDocument || document;
  el.classList.add("everyo-dashboard");
  addStyle(doc, el);

  const picker = mountPicker(doc, model);
  let header = renderHeader(doc, model.get("report"));
  let notes = renderNotes(doc, (model.get("report") || {}).notes);
  let notesShown = JSON.stringify((model.get("report") || {}).notes || []);
  const steps = doc.createElement("div");
  steps.className = "everyo-steps-box";
  // the why panel opens next to what was clicked: under the flame chart, or under the table
  const selectAfter = (anchorOf) => (target) => {
    const anchor = anchorOf();
    if (anchor.nextSibling !== why.el) anchor.after(why.el);
    why.select(target);
  };
  const flame = new FlameView(doc, model, state, el);
  const why = mountWhy(doc, model, {
    onFrames: (frames) => flame.setFrames(frames),
    onOutside: (target) => selectAfter(() => flame.el)(target),
  });
  const memory = mountMemory(doc, model, flame);
  const exportBox = renderExportButton(doc, model);
  const table = mountTable(doc, model, { onSelect: selectAfter(() => table.el) });
  flame.onSelect = selectAfter(() => flame.el);
  const icicle = mountIcicle(doc, model);
  const compare = mountCompare(doc, model, state);
  el.append(picker.el, header, notes, why.link, steps, flame.el, why.el, memory.el, exportBox, table.el, icicle.el, compare.el);
  // everyo_lab.compare(a, b): the comparison alone (a CSS rule hides the run's own sections)
  const showOwn = () => el.classList.toggle("everyo-compare-only", Boolean(model.get("compare_only")));

  // the run's extent on the chart's clock, which step zooms stay inside
  const extent = () => wholeWindow((model.get("report") || {}).wall_ms, state.store.whole.x1);
  const stepWindowOf = (k) => {
    // where step 0 starts is the kernel's (the step rule: step_stats.step_ends), as the ends
    const steps = table.shown().steps || {};
    const bounds = stepBounds(state.store.stepEnds, k, Number.isFinite(steps.first_start_ms) ? steps.first_start_ms : 0);
    return bounds && zoomWindow(bounds[0], bounds[1], 0.05, extent());
  };
  let stepsShown; // JSON of what is shown: a live report is a new object a few times a second
  let stepsPanel = null;
  const drawSteps = () => {
    const info = table.shown().steps;
    const text = JSON.stringify(info || null);
    if (text === stepsShown) return;
    stepsShown = text;
    steps.hidden = !info;
    if (!info) return;
    if (!stepsPanel) {
      stepsPanel = mountSteps(doc, { onZoom: (w) => flame.setZoom(w), stepWindowOf, extent });
      steps.append(stepsPanel.el);
    }
    stepsPanel.update(info, table.shown().texts || {});
  };
  const onReport = () => {
    // the table decides which report's numbers the page shows now (a live table is rewritten
    // at most every LIVE_TABLE_MS); the header, notes and steps box show that same report, so
    // no two numbers on the page come from different refreshes. The chart follows every one.
    table.update();
    const report = table.shown();
    const nextHeader = patchHeader(doc, header, report);
    if (nextHeader !== header) header.replaceWith(nextHeader);
    header = nextHeader;
    if (JSON.stringify(report.notes || []) !== notesShown) {
      notesShown = JSON.stringify(report.notes || []);
      const nextNotes = renderNotes(doc, report.notes);
      notes.replaceWith(nextNotes);
      notes = nextNotes;
    }
    drawSteps();
    waiter.report();
    flame.drawNow(); // this is a frame already: the chart and the header change in the same one
    showOwn();
    askResend(model, state);
  };
  drawSteps();
  showOwn();

  // new events of a live run: the chart waits for the report that follows them
  const waiter = reportWaiter(() => flame.schedule(), REPORT_WAIT_MS);
  const onData = () => {
    compare.schedule();
    waiter.data(running(model.get("report")));
  };
  const redraw = () => {
    flame.schedule();
    compare.schedule();
  };
  const onComparison = () => {
    compare.update();
    showOwn();
    askResend(model, state);
  };
  state.listeners.add(onData);
  // Trait changes update the DOM in the next animation frame, together with the flame chart's
  // redraw: a live refresh (its events, then its report) costs the page one style, layout and
  // paint pass, not one per section.
  const inFrame = frameBatcher();
  const bindings = [
    ["report", inFrame(onReport)],
    ["theme", redraw],
    ["themes", redraw],
    ...picker.traits.map((t) => [t, picker.update]),
    // a report reaches the table through onReport only: a second call in the same frame, a
    // moment later, could pass the table's interval and show numbers the header does not
    ...table.traits.filter((t) => t !== "report").map((t) => [t, inFrame(table.update)]),
    ...icicle.traits.map((t) => [t, inFrame(icicle.update)]),
    ...memory.traits.map((t) => [t, inFrame(memory.update)]),
    ...why.traits.map((t) => [t, inFrame(why.update)]),
    ["why_target", inFrame(table.mark)],
    ["comparison", onComparison],
    ["compare_id", onComparison],
    ["compare_only", showOwn],
  ];
  for (const [name, fn] of bindings) model.on(`change:${name}`, fn);
  const stopTheme = syncTheme(model, doc);

  flame.schedule(); // bars held already (a second view) show before plotly.js is there
  let closed = false;
  loadPlotly(model).then((plotly) => {
    if (closed) return;
    el.dataset.plotly = "loaded";
    flame.setPlotly(plotly);
    icicle.setPlotly(plotly);
    memory.setPlotly(plotly);
    compare.setPlotly(plotly);
  }, (err) => {
    if (closed) return;
    el.dataset.plotly = "failed";
    flame.message.textContent = `no flame chart axes: ${err.message}`;
  });
  askResend(model, state);

  return () => {
    closed = true;
    waiter.dispose();
    inFrame.cancel();
    stopTheme();
    for (const [name, fn] of bindings) model.off(`change:${name}`, fn);
    state.listeners.delete(onData);
    flame.destroy();
    icicle.destroy();
    memory.destroy();
    compare.destroy();
    state.views -= 1;
    if (state.fromView && state.views === 0) state.dispose();
  };
}

export default { initialize, render };
