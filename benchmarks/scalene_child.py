"""Run by ``peer_tools.scalene_loop`` under ``python -m scalene run --off``: rounds of one
workload of ``peers.py`` with scalene off, then on (its start and stop timed, as for the other
peers); prints ``{"off": [...], "on": [...]}``, CPU seconds per round.

    python -m scalene run --cpu-only --off -o out.json scalene_child.py --- WORKLOAD ROUNDS STEPS
"""

from __future__ import annotations

import json
import sys
import time

from peers import WORKLOADS
from scalene import scalene_profiler
from suite import one_thread


def main(argv: list[str]) -> None:
    name, rounds, steps = argv[0], int(argv[1]), int(argv[2])
    step, _ = WORKLOADS[name]()
    offs, ons = [], []
    with one_thread():
        step()
        for _ in range(rounds):
            t0 = time.process_time()
            for _ in range(steps):
                step()
            offs.append(time.process_time() - t0)
            t0 = time.process_time()
            scalene_profiler.start()
            for _ in range(steps):
                step()
            scalene_profiler.stop()
            ons.append(time.process_time() - t0)
    print(json.dumps({"off": offs, "on": ons}))


if __name__ == "__main__":
    main(sys.argv[1:])
