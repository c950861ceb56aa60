// The flame chart of one view: level of detail for the window on screen, bars painted on a
// canvas under plotly's transparent plot area, plotly for axes, legend and x-only zoom, our own
// hover, and detail requests when kernel bars are too coarse. Redraws are coalesced to one per
// animation frame. Plotly.react runs only when the figure's structure changes (lanes, legend,
// theme, size), in an idle task of its own (it is the costliest step: not in the frame that
// also lays out the page, nor in the task that renders a new view); a new window is a cheap
// Plotly.relayout of the x range, in the frame.
//
// While the run is live and nobody has pointed at the chart, plotly draws nothing: the axes
// and legend are painted on a canvas of their own (live_axes.js), so a live cell costs the
// page a few milliseconds a refresh. A pointer moving over the chart (engagesChart: not one
// the page scrolled the chart under), a press or focus, or the run's end, brings plotly's axes,
// zoom and legend; until its figure is drawn the canvas axes stay.
import { showTooltip, pointerToData, tooltipLines } from "./hover.js";
import { MARGIN, flameHeight, flameLayout, hiddenKeys, legendTraces } from "./figure.js";
import { cancelFrame, nextFrame } from "./frames.js";
import { whenIdle } from "./idle.js";
import { barTarget } from "./why_view.js";
import { layoutLanes } from "./lanes.js";
import { engagesChart, legendEntries, paintAxes } from "./live_axes.js";
import { MAX_BARS, MAX_BARS_LIVE, findBar, levelOfDetail } from "./lod.js";
import { fitText, paintFlame, pixelMap, prepareCanvas } from "./paint.js";
import { figureColors } from "./theme.js";
import { MIXED } from "./wire.js";
import { followWindow, parseRelayout, sameWindow, wholeWindow } from "./zoom.js";

export const DETAIL_DEBOUNCE_MS = 150;
export const REACT_IDLE_MS = 150; // a deferred Plotly.react runs at the latest this much later
const STALE_RETRY_MS = 2000; // while live, re-ask a zoomed window's detail at most this often
const MARGIN_X = MARGIN.l + MARGIN.r;
const CONFIG = {
  displaylogo: false,
  doubleClick: "autosize", // relayout {xaxis.autorange: true}: back to the whole run
  scrollZoom: false,
  // the bars are not plotly's: its PNG export would show empty axes
  modeBarButtonsToRemove: ["select2d", "lasso2d", "resetScale2d", "toImage"],
};

const now = () => (typeof performance === "object" ? performance.now() : Date.now());

/** True while `report`'s run is recording (a live report, or a run still running). */
export function running(report) {
  return Boolean(report && (report.live || report.status === "running"));
}

export class FlameView {
  /**
   * `state`: the model's `{store}`; `root`: the widget element that carries the test hooks.
   * `options.report`: where the run's `{run_id, wall_ms, live, events}` come from (default: the
   * `report` trait; a comparison's two charts read one shared extent).
   */
  constructor(doc, model, state, root, options = {}) {
    this.doc = doc;
    this.model = model;
    this.state = state;
    this.root = root;
    this.getReport = options.report || (() => this.model.get("report") || {});
    this.onSelect = options.onSelect || null; // a click on a bar: why_view.js barTarget
    this.windowListeners = new Set(); // called with each new window shown (linked charts)
    this.plotly = null;
    this.zoom = null; // null: the whole run (and follow it while it grows)
    this.panning = null; // the range of a pan drag in progress
    this.drawn = null; // what the last redraw showed: {window, bars, items, lanes, signature, raw}
    this.structure = ""; // what the last Plotly.react drew, to skip it when nothing changed
    this.figured = false; // a Plotly.react drew this view's figure (until then: the placeholder)
    this.pendingFigure = null; // the react waiting for an idle moment: {traces, layout, structure}
    this.cancelReact = null;
    this.hidden = new Set(); // colour keys hidden through the legend
    this.redraws = 0;
    this.pending = false;
    this.frame = null; // the animation frame of a scheduled redraw
    this.detailTimer = 0;
    this.asked = null; // {window, at, gen} of the last detail request
    this.el = doc.createElement("div");
    this.el.className = "everyo-flame-box";
    this.canvas = doc.createElement("canvas");
    this.canvas.className = "everyo-flame-canvas";
    this.axes = doc.createElement("canvas"); // axes and legend until plotly's figure is drawn
    this.axes.className = "everyo-flame-axes";
    this.axes.hidden = true;
    this.axesShown = ""; // what the axes canvas shows (skips repainting the same)
    this.engaged = false; // a pointer moved over the chart: plotly's axes and zoom from then on
    this.plot = doc.createElement("div");
    this.plot.className = "everyo-flame";
    this.message = doc.createElement("div");
    this.message.className = "everyo-flame-message";
    this.message.textContent = "loading plotly.js…";
    this.tip = doc.createElement("div");
    this.tip.className = "everyo-tooltip";
    this.tip.style.display = "none";
    this.el.append(this.message, this.axes, this.canvas, this.plot, this.tip);
    const turns = ["pointermove", "pointerdown", "focusin"];
    const engage = (ev) => {
      if (this.engaged || !engagesChart(ev)) return;
      this.engaged = true;
      for (const type of turns) this.el.removeEventListener(type, engage);
      this.schedule();
    };
    for (const type of turns) this.el.addEventListener(type, engage);
    const hide = () => {
      this.tip.style.display = "none";
    };
    this.plot.addEventListener("mousemove", (ev) => this.hover(ev));
    this.plot.addEventListener("mouseleave", hide);
    this.plot.addEventListener("mousedown", hide);
    // a click (not the end of a zoom or pan drag) on a bar selects it for the why panel
    this.plot.addEventListener("pointerdown", (ev) => {
      this.pressedAt = [ev.clientX, ev.clientY];
    });
    this.plot.addEventListener("click", (ev) => this.click(ev));
    this.boxWidth = 0; // from the ResizeObserver: reading clientWidth in a redraw would force a
    // layout of the whole notebook right after the table's DOM changed
    if (typeof ResizeObserver === "function") {
      this.resizer = new ResizeObserver((entries) => {
        const width = Math.floor(entries[entries.length - 1].contentRect.width);
        if (width > 0 && width !== this.boxWidth) {
          this.boxWidth = width;
          this.schedule();
        }
      });
      this.resizer.observe(this.el);
    }
  }

  /**
   * plotly.js is there: the next frame draws the axes (not this task: a view rendered while
   * plotly.js is already loaded would build its DOM and draw its first figure in one task).
   */
  setPlotly(plotly) {
    this.plotly = plotly;
    this.message.textContent = "";
    this.drawn = null;
    this.schedule();
  }

  /** Redraw at the next animation frame (several calls before it: one redraw). */
  schedule() {
    if (this.pending || this.destroyed) return;
    this.pending = true;
    this.frame = nextFrame(() => {
      this.frame = null;
      this.pending = false;
      this.draw();
    });
  }

  /**
   * Redraw now, dropping a scheduled redraw: for code that runs in an animation frame already
   * (the report's DOM updates), so the page lays out and paints once, not in two frames.
   */
  drawNow() {
    if (this.destroyed) return;
    if (this.frame !== null) cancelFrame(this.frame);
    this.frame = null;
    this.pending = false;
    this.draw();
  }

  /** Zoom to `[x0, x1]` (null: the whole run). */
  setZoom(window) {
    this.zoom = window ? [window[0], window[1]] : null;
    this.panning = null;
    this.schedule();
  }

  width() {
    if (!this.boxWidth) this.boxWidth = Math.floor(this.el.clientWidth || this.root.clientWidth || 0);
    return Math.max(200, this.boxWidth || 900);
  }

  draw() {
    if (this.destroyed) return;
    const t0 = now();
    const { store } = this.state;
    if (this.runId !== store.runId) this.forgetRun(store.runId);
    const report = this.getReport();
    const width = this.width();
    const size = this.plotSize();
    const plotW = size && this.drawn && this.drawn.width === width ? size.w : Math.max(50, width - MARGIN_X);
    const [x0, x1] = this.windowNow(report);
    const theme = this.model.get("theme");
    const themes = this.model.get("themes");
    const maxBars = report.live ? MAX_BARS_LIVE : MAX_BARS;
    const signature = [store.version, x0, x1, width, theme, maxBars, [...this.hidden].join(","), this.framesShown].join("|");
    if (this.drawn && this.drawn.signature === signature && this.drawn.themes === themes) return;
    const src = store.source(x0, x1, (x1 - x0) / plotW);
    if (!this.panning) this.requestDetail(src, x0, x1, plotW);
    const depths = mergedDepths(store, src.set);
    // the sampled call tree of a run without events (thread null): a band of its own, on top
    const tree = this.frames && this.frames.thread === null ? this.frames : null;
    const frames = tree || (this.frames && depths.has(this.frames.thread) ? this.frames : null);
    const below = frames && !tree ? depths.get(frames.thread) + 1 : 0; // first row in its band
    if (frames && !tree) depths.set(frames.thread, below - 1 + frames.rows);
    const top = tree ? { rows: tree.rows, name: "sampled" } : null;
    const lanes = layoutLanes(depths, (t) => store.threadName(t), top);
    if (frames) lanes.frames = { ...frames, row0: tree ? 0 : lanes.offset.get(frames.thread) + below };
    const items = [];
    for (const lane of src.set.lanes.values()) {
      const first = lanes.offset.get(lane.thread);
      if (first !== undefined) items.push({ lane, row: first + lane.depth });
    }
    // raw events of the whole run: merged by call path where too narrow to read
    const readable = store.raw && src.set === store.whole ? { stepEnds: store.stepEnds, pathParent: store.resolvePaths() } : null;
    const bars = levelOfDetail(items, x0, x1, plotW, maxBars, store.codes, readable);
    // once merged bars of several colours were drawn, their legend entry stays (no re-layout)
    for (let i = 0; i < bars.n && !this.mixedSeen; i++) {
      this.mixedSeen = bars.key[i] === MIXED && !(bars.dom && store.keys[bars.dom[i]]);
    }
    const colors = figureColors(themes, theme);
    if (this.el.style.background !== colors.paper_bgcolor) this.el.style.background = colors.paper_bgcolor;
    const view = {
      window: [x0, x1], bars, items, lanes, colors, width, report, signature, themes,
      raw: store.raw && src.set === store.whole,
    };
    if (!this.figured) {
      this.placeholder(width, lanes);
      this.paintCanvasAxes(view);
    }
    // a new structure: the react comes first, in a task of its own (the bars are painted after);
    // none while the run records and nobody uses the chart (the canvas axes do)
    const plotlyAxes = this.plotly && !this.panning && !this.canvasAxesOnly(report);
    if (plotlyAxes && !this.drawFigure(view) && this.figured) return;
    this.show(view, t0);
  }

  /** The axes stay on the canvas: plotly has drawn nothing yet, the run records (or none is
   * shown yet: a profiled cell's widget shows before its run starts, and a figure drawn then
   * would end the canvas axes for the whole live run), and the chart has not been pointed at. */
  canvasAxesOnly(report) {
    return !this.figured && !this.engaged && (running(report) || !report.run_id);
  }

  /**
   * Until plotly's first figure: the axes, lane labels and legend of `view` on the axes canvas
   * (repainted only when they change), or, with no events yet, "recording…".
   */
  paintCanvasAxes(view) {
    const { store } = this.state;
    const report = view.report;
    if (store.empty && !view.lanes.frames) {
      this.axes.hidden = true;
      this.axesShown = "";
      if (running(report)) this.message.textContent = "recording…";
      return;
    }
    if (this.message.textContent === "recording…" || this.message.textContent === "loading plotly.js…") {
      this.message.textContent = "";
    }
    const legend = legendEntries(store.keys, this.mixedSeen);
    const height = flameHeight(view.lanes.nLanes);
    const shown = JSON.stringify([view.window, view.width, height, view.lanes.bands, legend, view.colors, [...this.hidden]]);
    this.axes.hidden = false;
    if (shown === this.axesShown) return;
    this.axesShown = shown;
    const win = this.doc.defaultView;
    const ctx = prepareCanvas(this.axes, view.width, height, (win && win.devicePixelRatio) || 1);
    if (!this.font) this.font = (win && win.getComputedStyle(this.root).fontFamily) || "sans-serif";
    const painted = paintAxes(ctx, {
      x0: view.window[0], x1: view.window[1], lanes: view.lanes, size: this.fallbackSize,
      width: view.width, height, colors: view.colors, font: this.font, legend, hidden: this.hidden,
    });
    this.root.dataset.yrange = painted.yRange.join(",");
  }

  /** Paint `view` on the canvas and publish what is shown (the test hooks). */
  show(view, t0 = now()) {
    const { store } = this.state;
    const painted = this.paint(view.bars, view.lanes, view.colors);
    const moved = !this.drawn || !sameWindow(this.drawn.window, view.window);
    this.drawn = view;
    this.redraws += 1;
    const data = this.root.dataset;
    data.bars = String(painted);
    data.events = String(store.whole.n);
    data.window = `${view.window[0]},${view.window[1]}`;
    data.redraws = String(this.redraws);
    data.axes = this.figured ? "plotly" : this.axes.hidden ? "none" : "canvas";
    data.drawMs = (now() - t0).toFixed(1);
    if (moved) for (const fn of this.windowListeners) fn(view.window);
  }

  /** The window to show: a pan in progress, the zoom, else the whole run (followed while live). */
  windowNow(report = this.getReport()) {
    const follow = report.live ? followWindow : wholeWindow;
    return this.panning || this.zoom || follow(report.wall_ms, this.state.store.whole.x1);
  }

  /** Another run is shown (the picker): its whole extent, nothing hidden, nothing asked. */
  forgetRun(runId) {
    this.runId = runId;
    this.zoom = null;
    this.panning = null;
    this.asked = null;
    this.mixedSeen = false;
    this.hidden = new Set();
  }

  /**
   * Axes and legend. The same structure (lanes, legend, theme, size): a relayout of the x range
   * at once (a few milliseconds), and true. A new structure: false, and Plotly.react (tens of
   * milliseconds, the first one of a view the most) waits for an idle moment in a task of its
   * own, then the next frame paints the newest view. Until then the canvas shows the previous
   * view under the previous axes, or, before a view's first figure, the canvas axes.
   */
  drawFigure(view) {
    const { store } = this.state;
    const { report } = view;
    const [x0, x1] = view.window;
    if (store.empty && report.status === "running" && !view.lanes.frames) {
      // a cell that has recorded nothing yet: no axes to draw (their react would be one of a
      // live cell's costliest tasks, taking CPU from the kernel when its run starts)
      if (!this.figured) this.message.textContent = "recording…"; // (--no-live: until the cell ends)
      return true;
    }
    const traces = legendTraces(store.keys, this.hidden, this.mixedSeen);
    let message = null;
    if (store.empty && !view.lanes.frames) message = (report.events || 0) > 0 ? "loading events…" : "no events";
    const layout = flameLayout({ x0, x1, lanes: view.lanes, colors: view.colors, width: view.width, message });
    const structure = JSON.stringify([traces, { ...layout, xaxis: { ...layout.xaxis, range: null } }]);
    if (structure !== this.structure) {
      this.pendingFigure = { traces, layout, structure };
      if (!this.cancelReact) this.cancelReact = whenIdle(() => this.react(), REACT_IDLE_MS);
      return false;
    }
    this.pendingFigure = null; // back to the structure drawn (a react asked for is not needed)
    if (!sameWindow(this.axisRange(), [x0, x1])) {
      this.ownRelayout = true;
      try {
        this.plotly.relayout(this.plot, { "xaxis.range": [x0, x1], "xaxis.autorange": false });
      } finally {
        this.ownRelayout = false;
      }
    }
    return true;
  }

  /**
   * The deferred Plotly.react of the newest figure asked for. The bars are painted by the next
   * frame's redraw (before that frame is laid out and shown: the new axes never show with
   * the old bars), so this task holds the react alone.
   */
  react() {
    this.cancelReact = null;
    const pending = this.pendingFigure;
    this.pendingFigure = null;
    if (!pending || this.destroyed || !this.plotly) return;
    this.structure = pending.structure;
    if (!this.figured) {
      this.figured = true;
      this.message.remove();
      this.plot.style.height = "";
      this.axes.hidden = true;
      this.axesShown = "";
    }
    // the window as it is now (the run grew while the react waited): the next frame's redraw
    // then finds the axis right and needs no relayout
    const layout = { ...pending.layout, xaxis: { ...pending.layout.xaxis, range: this.windowNow() } };
    this.ownRelayout = true;
    try {
      this.plotly.react(this.plot, pending.traces, layout, CONFIG);
    } finally {
      this.ownRelayout = false;
    }
    if (!this.listening && this.plot.on) {
      this.plot.on("plotly_relayout", (ev) => this.relayout(ev));
      this.plot.on("plotly_relayouting", (ev) => this.relayouting(ev));
      this.plot.on("plotly_restyle", () => this.restyle());
      this.listening = true;
    }
    this.drawn = null;
    this.schedule();
  }

  /** Paint the bars on the canvas, placed exactly over plotly's plot area. */
  /**
   * Expand an event into its sampled frames (the why panel's `expand`, placed by fractions of
   * the event's span `[start, end]`): rows of bars under its thread's band; null collapses it.
   * With `thread` null (a run without events: its sampled call tree over the run's time, each
   * function as wide as its share), the rows are a band of their own on top.
   */
  setFrames(frames) {
    this.frames = frames && frames.bars && frames.bars.length ? frames : null;
    this.framesShown = (this.framesShown || 0) + 1;
    this.schedule();
  }

  /** The expanded event's frame bars on screen: `[{x0, x1, row, bar}]` (pixels, plot rows). */
  frameBars(lanes, map) {
    const f = lanes.frames;
    if (!f) return [];
    const span = f.end - f.start;
    const out = [];
    for (const bar of f.bars) {
      const x0 = Math.max(0, map.x(f.start + bar.left * span));
      const x1 = Math.min(map.w, Math.max(x0 + 1, map.x(f.start + (bar.left + bar.width) * span)));
      if (x1 > 0 && x0 < map.w) out.push({ x0, x1, row: f.row0 + bar.row, bar });
    }
    return out;
  }

  paint(bars, lanes, colors) {
    const size = this.plotSize();
    if (!size) return 0;
    // the plot div is the box's first child in flow, at its top left corner
    if (this.canvas.style.left !== `${size.l}px`) this.canvas.style.left = `${size.l}px`;
    if (this.canvas.style.top !== `${size.t}px`) this.canvas.style.top = `${size.t}px`;
    const view = this.doc.defaultView;
    const ctx = prepareCanvas(this.canvas, size.w, size.h, (view && view.devicePixelRatio) || 1);
    const map = pixelMap(bars.x0, bars.x1, lanes.nLanes, size.w, size.h);
    if (!this.font) this.font = (view && view.getComputedStyle(this.root).fontFamily) || "sans-serif";
    const { keys, stepEnds } = this.state.store;
    const labels = [];
    const painted = paintFlame(ctx, { bars, keys, map, hidden: this.hidden, colors, stepEnds, font: this.font, labels });
    this.root.dataset.labels = labels.join("|");
    let groups = 0;
    for (let i = 0; i < bars.n; i++) groups += bars.group[i];
    this.root.dataset.groups = String(groups); // bars standing for one call path's calls
    const frames = this.frameBars(lanes, map);
    const height = Math.max(1, Math.round(map.rowHeight));
    for (const f of frames) {
      ctx.fillStyle = colors.frame_bar;
      // a pixel's gap after a bar wider than 3 px: neighbours of one frame (a call tree's two
      // lines of one function) read as two bars
      const gap = f.x1 - f.x0 > 3 ? 1 : 0;
      ctx.fillRect(Math.floor(f.x0), Math.round(map.rowTop(f.row)), Math.max(1, Math.round(f.x1 - f.x0) - gap), height);
      const text = fitText(f.bar.text, Math.floor((f.x1 - f.x0 - 8) / 6.5));
      ctx.fillStyle = colors.text_on_bar || "#111";
      if (text) ctx.fillText(text, f.x0 + 3, map.rowTop(f.row) + height / 2, f.x1 - f.x0 - 6);
    }
    this.root.dataset.frames = frames.map((f) => f.bar.text).join("|");
    this.framesDrawn = { frames, map };
    return painted;
  }

  /**
   * Until plotly.js is there (a kernel busy with a cell answers its request only after it),
   * the bars are painted where plotly's plot area will be; axes, legend and zoom come later.
   */
  placeholder(width, lanes) {
    const height = flameHeight(lanes.nLanes);
    this.plot.style.height = `${height}px`;
    this.fallbackSize = { l: MARGIN.l, t: MARGIN.t, w: width - MARGIN_X, h: height - MARGIN.t - MARGIN.b };
  }

  plotSize() {
    if (!this.figured) return this.fallbackSize || null;
    const full = this.plot._fullLayout;
    return full && full._size && full._size.w > 0 ? full._size : null;
  }

  axisRange() {
    const full = this.plot._fullLayout;
    return full && full.xaxis && full.xaxis.range ? full.xaxis.range : null;
  }

  /** A user zoom, pan or double-click (our own relayouts set the range drawn: ignored). */
  relayout(ev) {
    if (this.ownRelayout) return;
    const change = parseRelayout(ev, this.drawn && this.drawn.window);
    if (!change) return;
    this.panning = null;
    if (change.whole) {
      this.zoom = null;
      this.drawn = null; // plotly autoranged the axis: set the explicit range again
      this.schedule();
      return;
    }
    const window = [change.x0, change.x1];
    if (this.drawn && sameWindow(window, this.drawn.window)) return;
    this.setZoom(window);
  }

  /** While a pan drag moves the axis, repaint the bars at its range (plotly draws the rest). */
  relayouting(ev) {
    const full = this.plot._fullLayout;
    if (!full || full.dragmode !== "pan") return;
    const change = parseRelayout(ev, this.drawn && this.drawn.window);
    if (change && !change.whole) {
      this.panning = [change.x0, change.x1];
      this.schedule();
    }
  }

  /** A legend click hid or showed colour keys. */
  restyle() {
    const hidden = hiddenKeys(this.plot.data);
    if ([...hidden].join(",") === [...this.hidden].join(",")) return;
    this.hidden = hidden;
    this.schedule();
  }

  /** Ask the kernel for finer bars when the held ones are too coarse (debounced). */
  requestDetail(src, x0, x1, plotW) {
    const gen = this.state.store.whole;
    const asked = this.asked;
    const repeat = asked && sameWindow(asked.window, [x0, x1]) && (asked.gen === gen || Date.now() - asked.at < STALE_RETRY_MS);
    if (!(src.coarse || src.stale) || repeat) {
      if (!src.coarse) clearTimeout(this.detailTimer);
      return;
    }
    clearTimeout(this.detailTimer);
    this.detailTimer = setTimeout(() => {
      this.asked = { window: [x0, x1], at: Date.now(), gen };
      this.model.send({ type: "detail", x0, x1, width: Math.round(plotW), run: this.state.store.runId });
    }, DETAIL_DEBOUNCE_MS);
  }

  /** The expanded event's frame bar under a pointer event, or null. */
  frameAt(ev) {
    const drawn = this.framesDrawn;
    const size = this.plotSize();
    if (!drawn || !drawn.frames.length || !size) return null;
    const box = this.plot.getBoundingClientRect();
    const x = ev.clientX - box.left - size.l;
    const y = ev.clientY - box.top - size.t;
    const { map } = drawn;
    return drawn.frames.find((f) => x >= f.x0 && x <= f.x1 && y >= map.rowTop(f.row) && y <= map.rowTop(f.row) + map.rowHeight) || null;
  }

  /** The drawn bar under a pointer event: `{i, lane, info, dominant}`, or null. */
  barAt(ev) {
    const drawn = this.drawn;
    const size = this.plotSize();
    if (!drawn || !size || !drawn.bars.n) return null;
    const box = this.plot.getBoundingClientRect();
    const xRange = drawn.window;
    const yRange = [drawn.lanes.nLanes - 0.5, -0.5];
    const p = pointerToData(ev.clientX - box.left - size.l, ev.clientY - box.top - size.t, size, xRange, yRange);
    const pxMs = (xRange[1] - xRange[0]) / size.w;
    const i = p && p.inRow ? findBar(drawn.bars, p.row, p.t, 2 * pxMs) : -1;
    const keys = this.state.store.keys;
    const info = i >= 0 ? keys[drawn.bars.key[i]] || null : null;
    const dominant = i >= 0 && !info ? keys[drawn.bars.dom[i]] || null : null;
    const shownAs = info || dominant;
    if (i < 0 || this.hidden.has(shownAs ? shownAs.colorKey : "merged")) return null;
    return { i, lane: drawn.items[drawn.bars.lane[i]].lane, info, dominant };
  }

  /** A click that did not move (a drag zooms or pans): the bar under it selects its event. */
  click(ev) {
    const at = this.pressedAt;
    this.pressedAt = null;
    if (!this.onSelect || (at && Math.hypot(ev.clientX - at[0], ev.clientY - at[1]) > 4)) return;
    const hit = this.barAt(ev);
    if (!hit) return;
    const { bars } = this.drawn;
    const bar = { start: bars.start[hit.i], end: bars.end[hit.i], count: bars.count[hit.i] };
    const target = barTarget(bar, hit.lane, hit.info);
    if (target) this.onSelect(target);
  }

  hover(ev) {
    const frame = this.frameAt(ev);
    if (frame) {
      const outer = this.el.getBoundingClientRect();
      showTooltip(this.tip, [frame.bar.title], ev.clientX - outer.left, ev.clientY - outer.top, this.el.clientWidth);
      return;
    }
    const hit = this.barAt(ev);
    if (!hit) {
      this.tip.style.display = "none";
      return;
    }
    const drawn = this.drawn;
    const { info, dominant, lane, i } = hit;
    const { bars } = drawn;
    const count = bars.count[i];
    const start = bars.start[i];
    const end = bars.end[i];
    const group = bars.group[i] === 1;
    const selfNs = drawn.raw && count === 1 && !group ? this.state.store.selfNs(lane.thread, lane.depth, start, end) : null;
    const lines = tooltipLines({ start, end, count, info, dominant, selfNs, group });
    const outer = this.el.getBoundingClientRect();
    showTooltip(this.tip, lines, ev.clientX - outer.left, ev.clientY - outer.top, this.el.clientWidth);
  }

  destroy() {
    this.destroyed = true;
    if (this.frame !== null) cancelFrame(this.frame);
    this.frame = null;
    if (this.cancelReact) this.cancelReact();
    this.cancelReact = null;
    clearTimeout(this.detailTimer);
    if (this.resizer) this.resizer.disconnect();
    if (this.plotly && this.plotly.purge) this.plotly.purge(this.plot);
  }
}

/** Deepest depth per thread over the whole-run set and the set drawn (a detail answer). */
function mergedDepths(store, set) {
  const depths = store.whole.depths();
  if (set !== store.whole) {
    for (const [t, d] of set.depths()) if (!(depths.get(t) >= d)) depths.set(t, d);
  }
  return depths;
}
