"""The numbers the browser spells itself (js/src/format.js: the hover of a bar it merged or an
event it drew, the seconds a sweep point has run) read exactly as the kernel spells the same
numbers (everyo/spelling.py), for the same inputs: each glossary spelling, both sides."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from everyo.spelling import NO_VALUE, clock_text, count_text, duration_text, seconds_text

JS = Path(__file__).resolve().parents[2] / "js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

SCRIPT = """
import { readFileSync } from "node:fs";
import { clockText, countText, durationText, secondsText, toNs } from "%(js)s/src/format.js";
import { tooltipLines } from "%(js)s/src/hover.js";
const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const info = { label: "L", kind: "module", colorKey: "L" };
console.log(JSON.stringify({
  duration: input.ns.map(durationText),
  clock: input.ns.map(clockText),
  count: input.counts.map(countText),
  seconds: input.seconds.map(secondsText),
  // what the hover does: times arrive in milliseconds (the wire's), spelt from whole ns
  hover: input.spans.map(([s, e, count]) =>
    tooltipLines({ start: s / 1e6, end: e / 1e6, count, info })),
  missing: [durationText(null), clockText(undefined), countText(NaN), secondsText(null)],
}));
"""


def _inputs() -> dict:
    rng = np.random.default_rng(7)
    edges = [0, 1, 5, 99, 123, 999, 1000, 1005, 9995, 12345, 99_949, 99_950, 99_960, 123_456]
    edges += [999_499, 999_500, 999_600, 1_000_000, 1_125_000, 1_005_000, 12_345_678]
    edges += [99_994_999, 99_995_000, 100_000_000, 100_500_000, 1_234_567_890, 86_400 * 10**9]
    ns = edges + [-1_125_000] + [int(x) for x in 10 ** rng.uniform(0, 13, 300)]
    seconds = [0.0, 0.04, 0.05, 0.15, 0.25, 1.25, 2.14, 2.675, 9.95, 59.95, 1e4 + 0.05, -1.0]
    seconds += [float(x) for x in rng.uniform(0, 120, 100)]
    starts = [int(x) for x in 10 ** rng.uniform(3, 13, 200)]
    durs = [int(x) for x in 10 ** rng.uniform(0, 10, 200)]
    spans = [[s, s + d, int(n)] for s, d, n in zip(starts, durs, rng.integers(1, 3000, 200))]
    spans += [[100_000, 1_225_000, 1], [0, 12_000_000, 1500]]  # a float-ms tie; many events
    counts = [0, 1, 999, 1000, 1_234_567, -5]
    return {"ns": ns, "seconds": seconds, "spans": spans, "counts": counts}


def _python(inputs: dict) -> dict:
    def hover(start, end, n):
        if n > 1:
            return [
                f"merged: {count_text(n)} events · {duration_text(end - start)}",
                "L",
                f"from {clock_text(start)} to {clock_text(end)} ms",
                "zoom in to see them",
            ]
        return [
            "L",
            "module",
            f"start {clock_text(start)} ms · duration {duration_text(end - start)}",
        ]

    return {
        "duration": [duration_text(n) for n in inputs["ns"]],
        "clock": [clock_text(n) for n in inputs["ns"]],
        "count": [count_text(n) for n in inputs["counts"]],
        "seconds": [seconds_text(s) for s in inputs["seconds"]],
        "hover": [hover(*span) for span in inputs["spans"]],
        "missing": [NO_VALUE] * 4,
    }


def test_the_browser_spells_every_number_it_measures_as_the_kernel_does(tmp_path):
    inputs = _inputs()
    data = tmp_path / "inputs.json"
    data.write_text(json.dumps(inputs))
    script = tmp_path / "format.mjs"
    script.write_text(SCRIPT % {"js": JS.as_posix()})
    result = subprocess.run(
        [NODE, str(script), str(data)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    browser, kernel = json.loads(result.stdout), _python(inputs)
    given = {"duration": "ns", "clock": "ns", "count": "counts", "seconds": "seconds"}
    for what in kernel:
        source = inputs[given.get(what, "spans")]
        mismatches = [(x, b, k) for x, b, k in zip(source, browser[what], kernel[what]) if b != k]
        assert not mismatches, f"{what}: (input, browser, kernel) {mismatches[:5]}"
    # the spellings the glossary names, on the inputs where rounding rules differ most
    assert kernel["duration"][inputs["ns"].index(1_125_000)] == "1.13 ms"  # half up
    assert kernel["duration"][inputs["ns"].index(99_960)] == "0.100 ms"
    assert kernel["seconds"][inputs["seconds"].index(1.25)] == "1.3 s"
