// plotly.js reaches the page once: the first widget asks its kernel for plotly.min.js (one
// binary buffer), the UMD is wrapped as an ES module, imported from a Blob URL and cached on
// globalThis, where every later widget of the page (each has its own copy of this module)
// finds it without asking. Whichever model receives the library resolves the shared promise.

const CACHE = "__everyoPlotly";
const RETRY_MS = 60000; // a kernel that never answered (restarted, gone): let another one ask

/** The page-wide cache: `{promise, resolve, reject, asked, askedAt, plotly}`. */
export function plotlyCache(g = globalThis) {
  if (!g[CACHE]) {
    const cache = { asked: false, askedAt: 0, plotly: null, loading: false };
    cache.promise = new Promise((resolve, reject) => {
      cache.resolve = resolve;
      cache.reject = reject;
    });
    if (g.Plotly && typeof g.Plotly.react === "function") {
      cache.plotly = g.Plotly;
      cache.resolve(g.Plotly);
    }
    g[CACHE] = cache;
  }
  return g[CACHE];
}

/** A promise of plotly.js; sends `{type: "plotly"}` unless the page already asked. */
export function loadPlotly(model, g = globalThis, now = Date.now()) {
  const cache = plotlyCache(g);
  if (!cache.plotly && g.Plotly && typeof g.Plotly.react === "function") {
    cache.plotly = g.Plotly;
    cache.resolve(g.Plotly);
  }
  if (!cache.plotly && (!cache.asked || now - cache.askedAt > RETRY_MS)) {
    cache.asked = true;
    cache.askedAt = now;
    model.send({ type: "plotly" });
  }
  return cache.promise;
}

/** The kernel could not send plotly.js (`error` says why): every widget of the page says so. */
export function failPlotly(error, g = globalThis) {
  const cache = plotlyCache(g);
  if (cache.plotly) return;
  cache.error = String(error);
  cache.reject(new Error(cache.error));
}

/** The UMD text of plotly.min.js as the text of an ES module whose default export is Plotly. */
export function wrapUmd(text) {
  return `const module = { exports: {} }; const exports = module.exports;\n${text}\nexport default module.exports;\n`;
}

/** Text of a buffer (ArrayBuffer or a view). */
export function bufferText(buf) {
  const bytes = buf instanceof ArrayBuffer ? new Uint8Array(buf) : new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  return new TextDecoder("utf-8").decode(bytes);
}

/** Load plotly.js from the `plotly` message's buffer (once per page) and resolve the cache. */
export async function receivePlotly(buffer, g = globalThis) {
  const cache = plotlyCache(g);
  if (cache.plotly || cache.loading) return cache.promise;
  cache.loading = true;
  const blob = new Blob([wrapUmd(bufferText(buffer))], { type: "text/javascript" });
  const url = URL.createObjectURL(blob);
  try {
    const mod = await import(/* webpackIgnore: true */ url);
    cache.plotly = mod.default && typeof mod.default.react === "function" ? mod.default : g.Plotly;
    cache.resolve(cache.plotly);
  } catch (err) {
    cache.loading = false;
    console.error("everyo: could not load plotly.js", err);
  } finally {
    URL.revokeObjectURL(url);
  }
  return cache.promise;
}
