"""Instructions the profiler adds to one training step, counted by valgrind's callgrind.

    python benchmarks/step_instructions.py [--steps 2000]

The step is the browser benchmark's (``training_observer.build``: a 32-64-8 MLP, SGD, 11
events a step). Each mode runs in its own process under ``valgrind --tool=callgrind``,
collecting only inside the measured loop (it runs inside ``sorted(..., key=...)``, and
``--toggle-collect=builtin_sorted`` counts just that call); flushes go by count, as in a real
run, not by time (valgrind is ~50x slower, so the 50-ms flush would fire every few steps).
Prints instructions per step without the profiler, with it, and the difference. Needs
valgrind (``apt-get install valgrind``); instruction counts do not move with the machine's load.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = """
import sys
sys.path.insert(0, {here!r})
import everyo.profiler.recording.recorder as recorder
recorder.FLUSH_NS = 10**13
from training_observer import build
from everyo.profiler import RunRegistry, profile
import contextlib
step = build()
for _ in range(300):
    step()
mode, n = sys.argv[1], int(sys.argv[2])
ctx = contextlib.nullcontext() if mode == "off" else profile(
    registry=RunRegistry(), record_shapes=(mode == "shapes")
)
def one(i):
    step()
    return i
with ctx:
    for _ in range(300):
        step()
    sorted(range(n), key=one)
"""


def instructions(mode: str, steps: int, folder: Path) -> int:
    script = folder / "child.py"
    script.write_text(CHILD.format(here=str(HERE)))
    out = folder / f"callgrind.{mode}"
    run = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--collect-atstart=no",
            "--toggle-collect=builtin_sorted",
            f"--callgrind-out-file={out}",
            sys.executable,
            str(script),
            mode,
            str(steps),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", run.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count:\n{run.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("cannot run: valgrind is not installed (apt-get install valgrind)")
        return 2
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    with tempfile.TemporaryDirectory(prefix="everyo-callgrind-") as tmp:
        per = {
            m: instructions(m, args.steps, Path(tmp)) / args.steps
            for m in ("off", "shapes", "no shapes")
        }
    print(f"| instructions per step ({args.steps} steps) | count | added by the profiler |")
    print("| --- | ---: | ---: |")
    for mode, count in per.items():
        added = "–" if mode == "off" else f"{count - per['off']:,.0f}"
        print(f"| {mode} | {count:,.0f} | {added} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
