"""Observer effect of several variants of the magic, side by side in one Chromium page.

Each variant is ``SETUP|OPTIONS``: Python run in the kernel just before the variant's cell (a
setting to try, ``pass`` for none) and the ``%%everyo_profile`` options of that cell. Every
variant cell has a plain neighbour (the same compute-bound loop without the magic); pairs
alternate which runs first and variants take turns, so drift hits them alike. Prints, per
variant, the median and each ratio of steps with the magic to steps without, and per kind of
cell the CPU seconds the kernel, Chromium (all its processes) and the Jupyter server used.

    python benchmarks/observer_variants.py \\
        "everyo_lab.live.FIRST_PAINT_S = 0.2|--label a" \\
        "everyo_lab.live.FIRST_PAINT_S = 0.8|--label b" \\
        "pass|--label c --no-live" [--repeats 4] [--seconds 3] [--workload cnn]

``--workload`` picks the loop (``harness.WORKLOADS``): ``mlp``, the stress loop of about 150,000
events a second (the default); ``cnn``, the issue's small CNN at about 11 ms a step, whose
OpenBLAS runs two threads on the two cores; ``cnn1``, that CNN with OpenBLAS held to one thread.

The kernel has ``everyo_lab`` loaded and ``everyo_lab.live`` imported. See
``dashboard_browser.py`` for the page set-up; tests never assert these figures.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "browser"))

import harness  # noqa: E402

SETUP = (
    'get_ipython().run_line_magic("load_ext", "everyo_lab")\n'
    "import everyo_lab.live\n"
    "import numpy as np\n"
    'np.seterr(all="ignore")'
)


def plan(variants: list[tuple[str, str]], repeats: int, seconds: float, workload: str = "mlp"):
    """The notebook's cells, and per cell the variant it measures (None: a setup cell)."""
    cells = [SETUP, harness.warmup_cell(), harness.WORKLOADS[workload]]
    measured = [None, None, None]
    for r in range(repeats):
        for i, (setup, options) in enumerate(variants):
            pair = [("plain", None), (f"v{i}", options)]
            for name, opts in pair if r % 2 == 0 else pair[::-1]:
                if name != "plain":
                    cells.append(setup)
                    measured.append(None)
                cells.append(harness.training_cell(seconds, magic=opts, sleep=None, report=name))
                measured.append(name)
    return cells, measured


def run(
    variants: list[tuple[str, str]], repeats: int, seconds: float, workload: str = "mlp"
) -> tuple[dict[str, list[float]], dict[str, list[dict]]]:
    """Per variant name (``v0``...): the ratios of its pairs; per cell name (``plain`` too): the
    CPU seconds each of its cells took per process group, from the click to its prompt (the
    final view's drawing included; ``dashboard_browser.cpu_seconds``)."""
    from dashboard_browser import GROUPS, cpu_seconds

    cells, measured = plan(variants, repeats, seconds, workload)
    sequence = []
    used: dict[str, list[dict]] = {}
    with harness.notebook_page(cells, "variants.ipynb", "everyo-variants-") as s:
        for index, name in enumerate(measured):
            if name is not None:  # the previous cell's final view is drawn
                s.bytes.wait_quiet(s.page)
                s.page.wait_for_timeout(800)
            before = cpu_seconds()
            s.run_cell(index)
            s.wait_prompt(index, timeout_ms=120000)
            if name is not None:
                after = cpu_seconds()
                used.setdefault(name, []).append({g: after[g] - before[g] for g in GROUPS})
                text = s.cell(index).locator(".jp-OutputArea").inner_text()
                found = re.search(r"STEPS (\w+) (\d+)", text)
                if found is None:
                    raise RuntimeError(f"cell {index} printed no step count:\n{text}")
                sequence.append((found.group(1), int(found.group(2))))
    ratios: dict[str, list[float]] = {}
    for (a, na), (b, nb) in zip(sequence[::2], sequence[1::2]):
        name, ratio = (a, na / nb) if a != "plain" else (b, nb / na)
        ratios.setdefault(name, []).append(ratio)
    return ratios, used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+", help="SETUP|OPTIONS, e.g. 'pass|--label a'")
    parser.add_argument("--repeats", type=int, default=4, help="pairs per variant")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each loop")
    parser.add_argument(
        "--workload", choices=sorted(harness.WORKLOADS), default="mlp", help="the loop (see above)"
    )
    args = parser.parse_args()
    variants = []
    for text in args.variants:
        if "|" not in text:
            parser.error(f"a variant is SETUP|OPTIONS, got {text!r}")
        setup, options = text.split("|", 1)
        variants.append((setup.strip() or "pass", options.strip()))
    if args.repeats < 1 or args.seconds <= 0:
        parser.error("--repeats must be at least 1 and --seconds positive")
    reason = harness.missing()
    if reason:
        print(f"cannot run: {reason}")
        return 1
    ratios, used = run(variants, args.repeats, args.seconds, args.workload)
    print(f"workload {args.workload}, {args.repeats} pairs of {args.seconds:g}-s cells per variant")
    print("| variant | steps with ÷ without (median) | each pair |")
    print("| --- | ---: | --- |")
    for i, (setup, options) in enumerate(variants):
        r = ratios[f"v{i}"]
        each = ", ".join(f"{x:.3f}" for x in r)
        print(f"| `{setup}` · `{options}` | {statistics.median(r):.3f} | {each} |")
    print()
    print("| cells | CPU s per cell (median): kernel, Chromium, server, other |")
    print("| --- | --- |")
    names = ["plain"] + [f"v{i}" for i in range(len(variants))]
    for name, label in zip(names, ["plain"] + [f"`{o}`" for _, o in variants]):
        groups = used[name][0].keys()
        med = ", ".join(f"{g} {statistics.median(u[g] for u in used[name]):.2f}" for g in groups)
        print(f"| {label} | {med} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
