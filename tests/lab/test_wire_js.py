"""The wire format's two sides kept in step: messages the kernel encodes
(``everyo_lab/widgets/wire.py``), decoded by the browser's ``js/src/wire.js``, read the same
events, bars, self times, step ends, keys and threads as the kernel sent (the tests of
``js/test`` build their messages by hand, ``js/test/helpers.mjs``: this one holds that copy's
source to the truth)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("anywidget")

from everyo_lab.views.flame.lod import merge_bars  # noqa: E402
from everyo_lab.widgets.wire import MIXED, encode_bars, encode_events  # noqa: E402

JS = Path(__file__).resolve().parents[2] / "js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

SCRIPT = """
import { readFileSync } from "node:fs";
import { decodeColumns } from "%(js)s/src/wire.js";
const messages = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = messages.map(({ header, buffers }) => {
  // each buffer at an odd offset of one shared ArrayBuffer, as a websocket frame may give them
  const bytes = buffers.map((b) => Buffer.from(b, "base64"));
  const shared = new ArrayBuffer(bytes.reduce((n, b) => n + b.length + 3, 8));
  let at = 1;
  const views = bytes.map((b) => {
    new Uint8Array(shared, at, b.length).set(b);
    const view = new DataView(shared, at, b.length);
    at += b.length + 3;
    return view;
  });
  const c = decodeColumns(header, views);
  return { type: c.type, n: c.n, start: [...c.start], end: [...c.end], depth: [...c.depth],
           thread: [...c.thread], key: [...c.key], count: [...c.count], dom: [...c.dom],
           selfNs: c.selfNs ? [...c.selfNs] : null, stepEnds: [...c.stepEnds], step0: c.step0,
           keys: c.keys, key0: c.key0, threads: c.threads, window: c.window, pxMs: c.pxMs,
           complete: c.complete, reset: c.reset };
});
console.log(JSON.stringify(out));
"""


def _browser(tmp_path, messages) -> list[dict]:
    data = [
        {"header": m.header, "buffers": [base64.b64encode(bytes(b)).decode() for b in m.buffers]}
        for m in messages
    ]
    (tmp_path / "messages.json").write_text(json.dumps(data))
    script = tmp_path / "decode.mjs"
    script.write_text(SCRIPT % {"js": JS.as_posix()})
    done = subprocess.run(
        [NODE, str(script), str(tmp_path / "messages.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def _events(rng, n, *, span_ns):
    start = np.sort(rng.integers(0, span_ns, n)).astype(np.int64)
    dur = rng.integers(1, max(2, span_ns // n), n).astype(np.int64)
    keys = [("module", f"M{k}", str(k)) for k in range(5)]
    return SimpleNamespace(
        start_ns=start,
        dur_ns=dur,
        depth=rng.integers(0, 4, n),
        tid=np.zeros(n, np.int64),
        key=rng.integers(0, len(keys), n),
        keys=keys,
        self_ns=(dur * rng.uniform(0, 1, n)).astype(np.int64),
    )


@pytest.mark.parametrize("span_ns", [50_000, 9_000_000_000])  # 9 s: ticks coarser than 1 ns
def test_the_browser_reads_the_events_the_kernel_sends(tmp_path, span_ns):
    rng = np.random.default_rng(1)
    batch = _events(rng, 300, span_ns=span_ns)
    thread = rng.integers(0, 3, 300)
    msg = encode_events(
        "r1",
        batch,
        thread,
        reset=True,
        key0=2,
        threads={0: "MainThread", 2: "worker"},
        step_ends_ms=[0.5, 1.25],
        step0=3,
        complete=True,
    )
    (got,) = _browser(tmp_path, [msg])
    tick = msg.header["tick_ns"]
    assert (tick == 1) == (span_ns < 2**32)
    start_ms = np.asarray(batch.start_ns) / 1e6
    end_ms = np.asarray(batch.start_ns + batch.dur_ns) / 1e6
    # starts round down and ends up to the message's tick, never by more than one tick
    assert np.all(np.asarray(got["start"]) <= start_ms + 1e-9)
    assert np.all(start_ms - np.asarray(got["start"]) < tick / 1e6 + 1e-9)
    assert np.all(np.asarray(got["end"]) >= end_ms - 1e-9)
    assert np.all(np.asarray(got["end"]) - end_ms < tick / 1e6 + 1e-9)
    assert got["depth"] == batch.depth.tolist() and got["thread"] == thread.tolist()
    assert got["key"] == batch.key.tolist() and got["count"] == [1] * 300
    assert np.all(np.abs(np.asarray(got["selfNs"]) - batch.self_ns) <= tick / 2)
    assert got["stepEnds"] == [0.5, 1.25] and got["step0"] == 3
    assert got["keys"] == [list(k) for k in msg.header["keys"]] and got["key0"] == 2
    assert got["threads"] == {"0": "MainThread", "2": "worker"}
    assert got["complete"] and got["reset"] and got["window"] is None


def test_the_browser_reads_the_bars_the_kernel_merges(tmp_path):
    rng = np.random.default_rng(2)
    batch = _events(rng, 2000, span_ns=4_000_000)
    lane = np.asarray(batch.depth, np.int64)
    bars = merge_bars(
        batch.start_ns,
        batch.dur_ns,
        lane,
        np.asarray(batch.key, np.int64),
        x_range_ns=(1_000_000, 3_000_000),
        width_px=200,
        max_shapes=20_000,
    )
    key = np.where(bars.uniform, np.asarray(batch.key)[bars.row], MIXED)
    msg = encode_bars(
        "r1",
        bars,
        bars.lane,
        np.zeros(len(bars), np.int64),
        key,
        batch.keys,
        dom=np.asarray(bars.dom, np.int64),
        window=(1.0, 3.0),
        threads={0: "MainThread"},
        step_ends_ms=[2.0],
    )
    (got,) = _browser(tmp_path, [msg])
    assert got["type"] == "bars" and got["n"] == len(bars) > 50
    assert got["count"] == bars.count.tolist() and got["depth"] == bars.lane.tolist()
    assert got["key"] == key.tolist() and MIXED in got["key"] and got["selfNs"] is None
    assert got["dom"] == bars.dom.tolist()
    assert got["window"] == [1.0, 3.0] and got["stepEnds"] == [2.0]
    assert got["pxMs"] == pytest.approx(bars.pixel_ns / 1e6) and got["threads"] == {
        "0": "MainThread"
    }
