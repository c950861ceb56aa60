import { test } from "node:test";
import assert from "node:assert/strict";
import { bundle, stripComments } from "../build.mjs";

test("bundles are deterministic and self-contained ES modules", async () => {
  const first = bundle("dashboard", "src/dashboard_widget.js");
  assert.equal(first, bundle("dashboard", "src/dashboard_widget.js"));
  assert.match(first.split("\n")[0], /^\/\/ everyo-lab \d+\.\d+\.\d+ \| dashboard\.js \| sources sha256:[0-9a-f]{16}/);
  assert.doesNotMatch(first, /^import /m);
  const url = `data:text/javascript;base64,${Buffer.from(first).toString("base64")}`;
  const mod = await import(url);
  assert.equal(typeof mod.default.render, "function");
});

test("the bundle leaves out whole-line comments and indentation, never text inside a template literal", () => {
  const source = [
    "// a comment",
    "/**",
    " * a doc block",
    " */",
    "const a = 1; // kept: code before it",
    "/* one line */",
    "  const css = `",
    "// not a comment: inside the template",
    "  /* nor this, nor its indentation */",
    "`;",
    "    const url = \"http://x\";",
  ].join("\n");
  assert.equal(stripComments(source), [
    "const a = 1; // kept: code before it",
    "const css = `",
    "// not a comment: inside the template",
    "  /* nor this, nor its indentation */",
    "`;",
    "const url = \"http://x\";",
  ].join("\n"));
  const built = bundle("dashboard", "src/dashboard_widget.js");
  // 73 KB for one run's dashboard, 88 KB with the comparison and memory views (issue 11), 92 KB
  // with the live in-place updates, 99 KB with the live canvas axes, 93 KB without indentation,
  // 107 KB with the why panel and an event's sampled frames in the chart (issue 34),
  // 112 KB with the readable merge of a zoomed-out chart (issue 43); each widget's saved state
  // holds it: keep it under 114 KB
  assert.ok(built.length < 114000, `${built.length} bytes`);
  assert.doesNotMatch(built, /^\s*\/\*\*/m);
});

test("a page evaluates each build once: every widget's import shares one implementation", async () => {
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
