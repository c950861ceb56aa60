// Follow JupyterLab's light/dark theme: the figures recolour from the `themes` trait here, and
// the kernel is told (for what it renders itself: static HTML, a saved notebook's output).

/** "light" or "dark" from JupyterLab's body attributes (`data-jp-theme-light`), else `fallback`. */
export function detectTheme(body, fallback = "light") {
  if (!body) return fallback;
  const flag = body.dataset ? body.dataset.jpThemeLight : undefined;
  if (flag === "true") return "light";
  if (flag === "false") return "dark";
  const classes = body.classList;
  if (classes && classes.contains("jp-theme-dark")) return "dark";
  if (classes && classes.contains("jp-theme-light")) return "light";
  return fallback;
}

/** Call `onChange(theme)` now and whenever JupyterLab switches theme; returns a disconnect fn. */
export function watchTheme(doc, onChange) {
  const body = doc.body;
  let current = detectTheme(body);
  onChange(current);
  if (typeof MutationObserver === "undefined" || !body) return () => {};
  const observer = new MutationObserver(() => {
    const next = detectTheme(body);
    if (next !== current) {
      current = next;
      onChange(next);
    }
  });
  observer.observe(body, { attributes: true, attributeFilter: ["data-jp-theme-light", "class"] });
  return () => observer.disconnect();
}

/** Report the page theme through the model's `theme` trait (only when it differs). */
export function syncTheme(model, doc) {
  return watchTheme(doc, (theme) => {
    if (model.get("theme") !== theme) {
      model.set("theme", theme);
      model.save_changes();
    }
  });
}

/** Plotly's "plotly_white" colours: what a figure uses until the kernel sends its themes. */
export const DEFAULT_COLORS = {
  paper_bgcolor: "#ffffff",
  plot_bgcolor: "#ffffff",
  font_color: "#2a3f5f",
  grid_color: "#ebf0f8",
  line_color: "#c8d4e3",
  muted: "#6b7a90",
  text_on_bar: "#111111",
  frame_bar: "#9ecae1",
};

/** The figure colours of `theme` from the `themes` trait (light ones when missing). */
export function figureColors(themes, theme) {
  const all = themes || {};
  return { ...DEFAULT_COLORS, ...(all.light || {}), ...(all[theme] || {}) };
}
