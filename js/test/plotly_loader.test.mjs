import { test } from "node:test";
import assert from "node:assert/strict";
import { bufferText, loadPlotly, plotlyCache, wrapUmd } from "../src/plotly_loader.js";

const fakeModel = () => {
  const sent = [];
  return { sent, send: (m) => sent.push(m) };
};

test("the first widget of a page asks once; later ones reuse the same promise", () => {
  const g = {};
  const a = fakeModel();
  const b = fakeModel();
  const p1 = loadPlotly(a, g, 1000);
  const p2 = loadPlotly(b, g, 2000);
  assert.equal(p1, p2);
  assert.deepEqual(a.sent, [{ type: "plotly" }]);
  assert.deepEqual(b.sent, []);
  loadPlotly(b, g, 1000 + 61000); // the asked kernel never answered: another may ask
  assert.deepEqual(b.sent, [{ type: "plotly" }]);
});

test("a page that already has Plotly never asks", async () => {
  const Plotly = { react() {} };
  const g = { Plotly };
  const m = fakeModel();
  assert.equal(await loadPlotly(m, g), Plotly);
  assert.deepEqual(m.sent, []);
  assert.equal(plotlyCache(g).plotly, Plotly);
});

test("the UMD wrapped as an ES module exports what it assigns to module.exports", async () => {
  const umd = `(function (root, factory) {
    if (typeof module === "object" && module.exports) { module.exports = factory(); }
    else { root.Plotly = factory(); }
  })(this, () => ({ react: () => "drawn", version: "test" }));`;
  const text = wrapUmd(bufferText(new TextEncoder().encode(umd)));
  const mod = await import(`data:text/javascript;base64,${Buffer.from(text).toString("base64")}`);
  assert.equal(mod.default.version, "test");
  assert.equal(mod.default.react(), "drawn");
});

test("bufferText decodes DataViews at an offset", () => {
  const bytes = new TextEncoder().encode("xxplotly");
  assert.equal(bufferText(new DataView(bytes.buffer, 2, 6)), "plotly");
  assert.equal(bufferText(bytes.buffer), "xxplotly");
});

test("a kernel that cannot send plotly.js rejects the page's promise with its reason", async () => {
  const { failPlotly, loadPlotly } = await import("../src/plotly_loader.js");
  const g = {};
  const sent = [];
  const promise = loadPlotly({ send: (m) => sent.push(m) }, g, 0);
  failPlotly("plotly is not installed", g);
  await assert.rejects(promise, /plotly is not installed/);
  assert.deepEqual(sent, [{ type: "plotly" }]);
});
