"""Does the live dashboard stay live through a long cell? Measured in Debian's Chromium.

    python benchmarks/live_long_run.py [--seconds 40] [--window 10]

One JupyterLab page, one kernel: ``%load_ext everyo_lab``, a warm-up profiled cell (the page's
first dashboard loads plotly.js), then a compute-bound profiled loop of ``--seconds`` (the stress
loop of ``dashboard_browser.py``: a 32-64-8 MLP, about 15,000 steps and 150,000 events a second).
The page is sampled every 50 ms while the cell runs; printed: the header's changes a second (new
live reports) in windows of ``--window`` seconds from the cell's start, and the cell's output
(steps done, events recorded), and how long after the loop the final view came.

What it catches: a live refresh whose cost grows with the run (each refresh then paces itself
further from the last, and the page goes quiet late in a long cell). The issue's target for the
live chart is at least two visible changes a second while the cell runs. Tests never assert
these rates; the windows' arithmetic is tested in ``tests/test_dashboard_browser_bench.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "browser"))

import harness  # noqa: E402


def window_rates(samples: list[dict], t0: float, window_s: float, key: str = "header") -> list:
    """``(from s, to s, changes, seconds covered)`` of ``key`` per window from page time ``t0``
    (ms), over the samples that show a dashboard; a change counts in the window of the first
    sample that shows the new value."""
    shown = [s for s in samples if s and s.get("board")]
    if not shown:
        return []
    times = [(s["t"] - t0) / 1000 for s in shown]
    changed = [t for t, a, b in zip(times[1:], shown, shown[1:]) if b.get(key) != a.get(key)]
    out, lo = [], 0.0
    while lo < times[-1]:
        hi = lo + window_s
        covered = max(0.0, min(hi, times[-1]) - max(lo, times[0]))
        out.append((lo, hi, sum(1 for t in changed if lo <= t < hi), covered))
        lo = hi
    return out


def measure(seconds: float, window_s: float) -> tuple[list, str]:
    cells = [
        'get_ipython().run_line_magic("load_ext", "everyo_lab")',
        harness.warmup_cell(),
        harness.training_cell(seconds, magic="--label long", sleep=None, report="long"),
    ]
    with harness.notebook_page(cells, prefix="everyo-long-") as s:
        for index in (0, 1):
            s.run_cell(index)
            s.wait_prompt(index)
        s.wait_plotly_chart(1)
        s.bytes.wait_quiet(s.page)
        watch = s.run_and_watch(2, timeout_ms=int(seconds * 1000) + 120000, every_ms=50)
        rates = window_rates(watch.running(), watch.span_ms()[0], window_s)
        return rates, s.cell(2).locator(".jp-OutputArea").inner_text()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=40.0, help="length of the profiled loop")
    ap.add_argument("--window", type=float, default=10.0, help="seconds per window")
    args = ap.parse_args(argv)
    if args.seconds <= 0 or args.window <= 0:
        ap.error("--seconds and --window must be positive")
    rates, output = measure(args.seconds, args.window)
    print(f"{args.seconds:g}-s compute-bound profiled loop: new live reports a second")
    print("| seconds from the cell's start | header changes | a second |")
    print("| --- | ---: | ---: |")
    for lo, hi, changes, span in rates:
        if hi > args.seconds:  # the loop has ended: the cell builds its final, exact view
            break
        rate = f"{changes / span:.2f}" if span else "–"
        print(f"| {lo:g}–{hi:g} | {changes} in {span:.1f} s | {rate} |")
    if rates:
        running = rates[-1][0] + rates[-1][3]
        print(
            f"the cell showed [*] for {running:.1f} s: the final view came "
            f"{running - args.seconds:.1f} s after the loop's {args.seconds:g} s"
        )
    steps = next((line for line in output.splitlines() if line.startswith("STEPS")), "")
    header = next((line for line in output.splitlines() if "events" in line), "")
    print(f"{steps}\n{header}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
