import { test } from "node:test";
import assert from "node:assert/strict";
import { bundle } from "../build.mjs";

test("bundles are deterministic and self-contained ES modules", async () => {
  const first = bundle("dashboard", "src/dashboard_widget.js");
  assert.equal(first, bundle("dashboard", "src/dashboard_widget.js"));
  assert.match(first.split("\n")[0], /^\/\/ everyo-lab \d+\.\d+\.\d+ \| dashboard\.js \| sources sha256:[0-9a-f]{16}/);
  assert.doesNotMatch(first, /^import /m);
  const url = `data:text/javascript;base64,${Buffer.from(first).toString("base64")}`;
  const mod = await import(url);
  assert.equal(typeof mod.default.render, "function");
});
