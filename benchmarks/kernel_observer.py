"""The browser benchmark's observer cells in a Jupyter kernel with no browser attached.

    python benchmarks/kernel_observer.py [--rounds 8] [--seconds 3] [--workload mlp|cnn|cnn1]

Starts an IPython kernel (``jupyter_client``), loads ``everyo_lab`` and runs, ``--rounds``
times in a rotating order, the same compute-bound loop as ``dashboard_browser.py``'s observer
cells: without the magic ("plain"), under ``%%everyo_profile --no-live`` and under
``%%everyo_profile`` with its live refresher (the widget's messages go to a kernel nobody
listens to). Prints, for ``--no-live`` and live, the median and pooled ratio of steps to the
plain cells of the same round, and for the live cells each refresh's start (s from the loop's
start), CPU time and duration (the refresher shares the GIL with the loop, so a refresh lasts
longer than its CPU time).

What it separates: the kernel-side cost of the magic (profiler and refresher) from what the
page adds in ``dashboard_browser.py``. The machine's noise hits it alike (a pair of 3-s cells
varies by about 15 % on a shared 2-core VM): compare many rounds. Tests never assert these.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "browser"))

import harness  # noqa: E402  (the cells the browser benchmark runs)

# In the kernel: log each live refresh (start, CPU seconds, wall seconds) without changing it.
LOG_REFRESHES = """
import time as _time
from everyo_lab.live import LiveRefresher as _LR
_refreshes = []
_poll = _LR.poll
def _logged_poll(self):
    c, w = _time.thread_time(), _time.perf_counter()
    done = self.refreshes
    wait = _poll(self)
    if self.refreshes > done:
        _refreshes.append((w, _time.thread_time() - c, _time.perf_counter() - w))
    return wait
_LR.poll = _logged_poll
"""

PRINT_REFRESHES = "import json; print(json.dumps([(w - _t0, c, d) for w, c, d in _refreshes]))"

MODES = {"plain": None, "nolive": "--no-live", "live": ""}
STEPS = re.compile(r"STEPS (\w+) (\d+)")


class Kernel:
    def __init__(self):
        from jupyter_client.manager import start_new_kernel

        self.manager, self.client = start_new_kernel(kernel_name="python3")

    def run(self, code: str, timeout: float = 180) -> str:
        """Execute ``code``; its stdout (and any traceback, which raises)."""
        self.client.execute(code)
        out = []
        while True:
            msg = self.client.get_iopub_msg(timeout=timeout)
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind == "error":
                raise RuntimeError("\n".join(content["traceback"]))
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(out)

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel()


def measure(rounds: int, seconds: float, workload: str = "mlp") -> tuple[dict, list]:
    kernel = Kernel()
    try:
        kernel.run('get_ipython().run_line_magic("load_ext", "everyo_lab")')
        kernel.run(harness.warmup_cell())
        kernel.run(harness.WORKLOADS[workload])  # the loop's model, optimizer and batch
        kernel.run(LOG_REFRESHES)
        steps: dict[str, list[int]] = {m: [] for m in MODES}
        refreshes = []
        names = list(MODES)
        for r in range(rounds):
            for name in names[r % 3 :] + names[: r % 3]:
                magic = MODES[name]
                options = None if magic is None else f"--label k{r}{name} {magic}".strip()
                kernel.run("_refreshes.clear(); _t0 = time.perf_counter()")
                cell = harness.training_cell(seconds, magic=options, sleep=None, report=name)
                found = STEPS.search(kernel.run(cell))
                if found is None:
                    raise RuntimeError(f"the {name} cell printed no step count")
                steps[name].append(int(found.group(2)))
                if name == "live":
                    refreshes.append(json.loads(kernel.run(PRINT_REFRESHES)))
        return steps, refreshes
    finally:
        kernel.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument(
        "--workload",
        choices=sorted(harness.WORKLOADS),
        default="mlp",
        help="the loop (harness.WORKLOADS): the stress MLP, the CNN, the CNN on one BLAS thread",
    )
    args = parser.parse_args()
    if args.rounds < 1 or args.seconds <= 0:
        parser.error("--rounds must be at least 1 and --seconds positive")
    steps, refreshes = measure(args.rounds, args.seconds, args.workload)
    print(f"{args.rounds} rounds of {args.seconds:g}-s cells of {args.workload}, no browser")
    print("| cells | steps ÷ plain, median (pooled) | each round |")
    print("| --- | ---: | --- |")
    for name in ("nolive", "live"):
        ratios = [a / b for a, b in zip(steps[name], steps["plain"])]
        pooled = sum(steps[name]) / sum(steps["plain"])
        each = ", ".join(f"{x:.2f}" for x in ratios)
        print(f"| {name} | {statistics.median(ratios):.3f} ({pooled:.3f}) | {each} |")
    print("live refreshes per cell: start s (CPU ms / duration ms)")
    for cell in refreshes:
        print("  " + "  ".join(f"{t:.2f} ({1e3 * c:.0f}/{1e3 * d:.0f})" for t, c, d in cell))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
