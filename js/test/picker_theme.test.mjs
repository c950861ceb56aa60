import { test } from "node:test";
import assert from "node:assert/strict";
import { groupRunsByLabel, runOptionText } from "../src/picker.js";
import { detectTheme } from "../src/theme.js";
import { isDownloadMessage } from "../src/export.js";

test("groupRunsByLabel groups by label, newest first", () => {
  const runs = [
    { id: "1", label: "train", start_time: 1 },
    { id: "2", label: "eval", start_time: 2 },
    { id: "3", label: "train", start_time: 3 },
  ];
  const groups = groupRunsByLabel(runs);
  assert.deepEqual([...groups.keys()], ["train", "eval"]);
  assert.deepEqual(groups.get("train").map((r) => r.id), ["3", "1"]);
});

test("runOptionText: the kernel's words as they are, else the label", () => {
  const text = "train · completed · 1234.500 ms · 42 events";
  assert.equal(runOptionText({ label: "train", status: "completed", wall_ms: 1234.5, events: 42, text }), text);
  assert.equal(runOptionText({ label: "x", status: "running", wall_ms: 3 }), "x");
});

test("detectTheme reads JupyterLab's body attributes", () => {
  const body = (flag, classes = []) => ({
    dataset: flag === undefined ? {} : { jpThemeLight: flag },
    classList: { contains: (c) => classes.includes(c) },
  });
  assert.equal(detectTheme(body("true")), "light");
  assert.equal(detectTheme(body("false")), "dark");
  assert.equal(detectTheme(body(undefined, ["jp-theme-dark"])), "dark");
  assert.equal(detectTheme(body(undefined)), "light");
  assert.equal(detectTheme(null, "dark"), "dark");
});

test("isDownloadMessage needs a file name and a buffer", () => {
  assert.equal(isDownloadMessage({ type: "download", filename: "a.trace.json" }, [new DataView(new ArrayBuffer(2))]), true);
  assert.equal(isDownloadMessage({ type: "download", filename: "a.trace.json" }, []), false);
  assert.equal(isDownloadMessage({ type: "other" }, [1]), false);
});
