"""What a live cell costs the page: Chromium's busy time while a profiled loop runs, from a trace.

    python benchmarks/page_trace.py [--workload cnn1] [--rounds 2] [--seconds 3]
        [--bundle old=/tmp/old_dashboard.js ...]

One JupyterLab page in headless Chromium (the set-up of ``dashboard_browser.py``). Each round
runs a plain cell (the compute-bound loop of ``harness.WORKLOADS[workload]``, no magic), a
cell under ``%%everyo_profile`` (live), and one such cell per ``--bundle NAME=PATH``: a setup
cell before it gives the ``Dashboard`` class that build of the front end to send (for example
an older one, ``git show COMMIT:everyo_lab/static/dashboard.js > /tmp/old_dashboard.js``;
both builds then live side by side in the page). Each measured cell runs under a Chromium trace
(``devtools.timeline``), and the figure is the time Chromium's threads were busy (top-level
trace tasks, every process) from the key press that ran the cell to the end of its loop: the
page's work while the profiled code runs, the final view left out. Also per cell: the main
thread's share of it, and its frames (a "frame" here is a main-thread task that updated the
layer tree). Medians over the rounds, and each.

The default loop, the issue's CNN with OpenBLAS held to one thread, leaves Chromium a core of
its own, so the figure is the page's own cost and not what it could get of a busy machine.
Diagnostics, not a target: tests never assert these figures.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "browser"))

import harness  # noqa: E402

CATEGORIES = [
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "blink",
    "cc",
    "toplevel",
]
SETUP = 'get_ipython().run_line_magic("load_ext", "everyo_lab")\nimport everyo_lab.live'
USE_BUNDLE = (
    "from everyo_lab.widgets.dashboard import Dashboard as _D\n"
    "_D._esm = open({path!r}).read()  # this build of the front end for the next widgets"
)
CURRENT = (
    "from everyo_lab.widgets.dashboard import Dashboard as _D, STATIC as _S\n"
    "_D._esm = (_S / 'dashboard.js').read_text()  # back to this checkout's build"
)


def busy(trace: bytes, seconds: float) -> dict:
    """Chromium's busy ms from the cell's key press to ``seconds`` later (every thread), the main
    thread's, and its frames."""
    events = json.loads(trace)
    events = events["traceEvents"] if isinstance(events, dict) else events
    names = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    timed = [e for e in events if e.get("ph") == "X" and "dur" in e]
    main = [e for e in timed if names.get((e["pid"], e["tid"])) == "CrRendererMain"]
    presses = [
        e["ts"]
        for e in main
        if e["name"] == "EventDispatch"
        and e.get("args", {}).get("data", {}).get("type") in ("keydown", "keyup")
    ]
    t0 = min(presses) if presses else min(e["ts"] for e in main)
    t1 = t0 + seconds * 1e6
    per_thread: dict = defaultdict(list)
    for e in timed:
        per_thread[(e["pid"], e["tid"])].append(e)
    total = main_ms = 0.0
    frames = 0
    for key, items in per_thread.items():
        items.sort(key=lambda e: (e["ts"], -e["dur"]))
        end = -1.0
        for e in items:
            if e["ts"] < end:
                continue  # nested in a task counted already
            end = e["ts"] + e["dur"]
            if not t0 <= e["ts"] < t1:
                continue
            ms = e.get("tdur", e["dur"]) / 1e3
            total += ms
            if names.get(key) == "CrRendererMain":
                main_ms += ms
    for e in main:
        if e["name"] == "PaintArtifactCompositor::Update" and t0 <= e["ts"] < t1:
            frames += 1
    return {"all": total, "main": main_ms, "frames": frames}


def plan(workload: str, rounds: int, seconds: float, bundles: dict) -> tuple[list, list]:
    cells = [SETUP, harness.warmup_cell(), harness.WORKLOADS[workload]]
    measured = [None, None, None]
    variants = [("plain", None, None), ("live", "", None)]
    variants += [(name, "", path) for name, path in bundles.items()]
    for _ in range(rounds):
        for name, magic, path in variants:
            if path is not None:
                cells.append(USE_BUNDLE.format(path=str(path)))
                measured.append(None)
            cells.append(harness.training_cell(seconds, magic=magic, sleep=None))
            measured.append(name)
            if path is not None:
                cells.append(CURRENT)
                measured.append(None)
    return cells, measured


def measure(workload: str, rounds: int, seconds: float, bundles: dict) -> dict:
    cells, measured = plan(workload, rounds, seconds, bundles)
    out: dict = defaultdict(list)
    with harness.notebook_page(cells, "trace.ipynb", "everyo-trace-") as s:
        for index, name in enumerate(measured):
            if name is None:
                s.run_cell(index)
                s.wait_prompt(index, timeout_ms=180000)
                continue
            s.bytes.wait_quiet(s.page)
            s.page.wait_for_timeout(1000)
            browser = s.page.context.browser
            browser.start_tracing(page=s.page, categories=CATEGORIES)
            s.run_cell(index)
            s.wait_prompt(index, timeout_ms=180000)
            s.bytes.wait_quiet(s.page)
            out[name].append(busy(browser.stop_tracing(), seconds))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=sorted(harness.WORKLOADS), default="cnn1")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument(
        "--bundle",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="also measure live cells with this build of the dashboard's front end",
    )
    args = parser.parse_args()
    bundles = {}
    for item in args.bundle:
        name, sep, path = item.partition("=")
        if not sep or not re.fullmatch(r"\w+", name) or not Path(path).is_file():
            parser.error(f"--bundle takes NAME=PATH of an existing file, got {item!r}")
        bundles[name] = Path(path).resolve()
    if args.rounds < 1 or args.seconds <= 0:
        parser.error("--rounds must be at least 1 and --seconds positive")
    reason = harness.missing()
    if reason:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    found = measure(args.workload, args.rounds, args.seconds, bundles)
    print(
        f"{args.workload}, {args.rounds} rounds of {args.seconds:g}-s cells; Chromium busy ms "
        "from the key press to the loop's end (median; each)"
    )
    print("| cell | all threads | main thread | main-thread frames |")
    print("| --- | ---: | ---: | ---: |")
    for name, rows in found.items():
        cols = []
        for key, fmt in (("all", "{:.0f}"), ("main", "{:.0f}"), ("frames", "{:.0f}")):
            values = [r[key] for r in rows]
            each = ", ".join(fmt.format(v) for v in values)
            cols.append(f"{fmt.format(statistics.median(values))} ({each})")
        print(f"| {name} | " + " | ".join(cols) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
