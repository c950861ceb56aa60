import { test } from "node:test";
import assert from "node:assert/strict";
import { HAVE_ESBUILD, bundle } from "../build.mjs";

const needsEsbuild = { skip: !HAVE_ESBUILD && 'esbuild is not installed: run "npm ci" in js/' };

test("bundles are deterministic and self-contained ES modules", needsEsbuild, async () => {
  const first = bundle("dashboard", "src/dashboard_widget.js");
  assert.equal(first, bundle("dashboard", "src/dashboard_widget.js"));
  assert.match(first.split("\n")[0], /^\/\/ everyo-lab \d+\.\d+\.\d+ \| dashboard\.js \| sources sha256:[0-9a-f]{16}/);
  assert.doesNotMatch(first, /^import /m);
  const url = `data:text/javascript;base64,${Buffer.from(first).toString("base64")}`;
  const mod = await import(url);
  assert.equal(typeof mod.default.render, "function");
});

test("the bundle leaves out comments and whitespace, never text inside a template literal", needsEsbuild, async () => {
  const fixture = bundle("fixture", "test/fixtures/bundle_entry.js");
  assert.doesNotMatch(fixture, /leading remark|a doc block|one line|kept: code/);
  const mod = await import(`data:text/javascript;base64,${Buffer.from(fixture).toString("base64")}`);
  assert.equal(mod.default.css, "\n// not a comment: inside the template\n  /* nor this, nor its indentation */\n");
  assert.equal(mod.default.url, "http://x");
  const built = bundle("dashboard", "src/dashboard_widget.js");
  // 73 KB for one run's dashboard, 88 KB with the comparison and memory views (issue 11), 92 KB
  // with the live in-place updates, 99 KB with the live canvas axes, 93 KB without indentation,
  // 107 KB with the why panel and an event's sampled frames in the chart (issue 34), 84 KB
  // built by esbuild without whitespace, 89 KB with the readable merge of a zoomed-out chart
  // (issue 43); each widget's saved state holds it: keep it under 108 KB
  assert.ok(built.length < 108000, `${built.length} bytes`);
  assert.doesNotMatch(built, /^\s*\/\*\*/m);
});

test("a page evaluates each build once: every widget's import shares one implementation", needsEsbuild, async () => {
  const text = bundle("dashboard", "src/dashboard_widget.js");
  // anywidget imports the ESM afresh for each widget: two URLs, two module records
  const load = (tag) => import(`data:text/javascript;base64,${Buffer.from(`${text}// ${tag}\n`).toString("base64")}`);
  const [a, b] = [await load("first widget"), await load("second widget")];
  assert.notEqual(a, b);
  assert.equal(a.default, b.default);
  assert.equal(a.default.render, b.default.render);
  const other = bundle("sweep", "src/sweep_widget.js");
  const sweep = await import(`data:text/javascript;base64,${Buffer.from(other).toString("base64")}`);
  assert.notEqual(sweep.default, a.default);
});
