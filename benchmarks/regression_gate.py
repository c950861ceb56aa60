"""The regression gate across worker processes (issue 46): does `python -m everyo bench` read a
planted change right, and leave an unchanged function alone, on a quiet and on a busy machine?

    python benchmarks/regression_gate.py [--trials 20] [--quick] [--only NAME,...]
                                         [--threads N] [--processes N] [--verbose]

Every trial is what a user does: a fresh baseline (``--save-baseline``), then a fresh
comparison (``--baseline``), each a `python -m everyo bench gate_workload:work` command with the
default worker processes; the workload (``gate_workload.py``) is five 200x200 matrix products,
about 1 ms, and ``GATE_WORK`` plants exactly 2x or +20 % work in the compared version. Scenarios
(``--only`` takes these names):

- ``double``   planted 2x: the gate reads +100 % inside its interval (target >= 19 of 20)
- ``plus20``   planted +20 %: a regression, exit 1 (target >= 18 of 20)
- ``aa``       A/A, quiet: "ok", exit 0 (target >= 19 of 20)
- ``aa-cpu``   A/A beside a CPU burner (one busy loop per core): "ok" or inconclusive (exit 0 or
               4; target >= 19 of 20)
- ``aa-blas``  A/A beside a 2-thread BLAS burner: the same
- ``interleaved``  ``interleaved(work, work)`` A/A quiet, beside the CPU and the BLAS burner:
               never "faster"/"slower" (issue 43's target: >= 19 of 20 each)
- ``wall``     wall time of one `bench` of the 1-ms workload with the default processes
               (target < 10 s)
- ``threads``  one BLAS thread set in the environment before NumPy loads, against the same
               limit set at run time (threadpoolctl) after a first BLAS call, and before one
               (OpenBLAS starts its thread pool when it loads, so a run-time limit always comes
               after it: the idle pool threads stay, as the threads column shows): per-process
               medians of (A @ A).sum(), fresh processes in turn
- ``statistics`` what the gate should read of each process: ``--trials`` saved runs each of
               the unchanged, the +20 % and (half as many) the 2x workload, taken in turns,
               then every pair of runs judged by the gate's own code with each process's
               median and with its fastest call (A/A: every pair of unchanged runs)

The quiet rows need a quiet machine: the load average is printed at the start and the end of
each scenario. ``--quick`` runs 2 trials of each (a smoke run: its figures are not results).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from contention import THREAD_VARIABLES, Burner  # noqa: E402

SPEC = "gate_workload:work"
SCENARIOS = (
    "double",
    "plus20",
    "aa",
    "aa-cpu",
    "aa-blas",
    "interleaved",
    "wall",
    "threads",
    "statistics",
)
CHANGE = re.compile(r"Regression: ([+-][\d.]+)% \(95% CI ([+-][\d.]+)% to ([+-][\d.]+)%")
ALONE = re.compile(r"\(without it: ([+-][\d.]+)% to ([+-][\d.]+)%\)")


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


GATE_OPTIONS: list[str] = []
"""Options every gate command gets (``--threads``, ``--processes`` of this script)."""


def bench(*args: str, work: str = "1") -> tuple[int, str, float]:
    """One `python -m everyo bench` command: exit code, output, wall seconds."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    env.update(GATE_WORK=work, PYTHONPATH=os.pathsep.join([str(HERE.parent), str(HERE)]))
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "everyo", "bench", SPEC, *GATE_OPTIONS, *args],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, done.stdout + done.stderr, time.perf_counter() - start


def gate_trial(work: str) -> tuple[int, str, str]:
    """A fresh baseline of the unchanged workload, then the gate on ``work``: (exit code,
    verdict, change line)."""
    with tempfile.TemporaryDirectory() as folder:
        baseline = str(Path(folder) / "b.json")
        code, out, _ = bench("--save-baseline", baseline)
        if code != 0:
            return code, "baseline failed", out.strip().splitlines()[-1]
        code, out, _ = bench("--baseline", baseline, work=work)
    verdict = next((line[9:] for line in out.splitlines() if line.startswith("Verdict: ")), "?")
    change = next((line for line in out.splitlines() if line.startswith("Regression: ")), "?")
    speed = next((line for line in out.splitlines() if line.startswith("Machine speed: ")), "")
    return code, verdict, change + (f" | {speed}" if speed else "")


def alone(change: str) -> str:
    """The change line with the interval before the machine's speed widened it (``without
    it`` on the check's speed line): what the gate says without the reference, same trial."""
    match, wide = ALONE.search(change), CHANGE.search(change)
    if not match or not wide:
        return change
    return f"Regression: {wide[1]}% (95% CI {match[1]}% to {match[2]}%"


def alone_verdict(change: str) -> str:
    from everyo.bench.regression import gate_verdict

    m = CHANGE.search(alone(change))
    if not m:
        return "?"
    est, lo, hi = (1 + float(x) / 100 for x in m.groups())
    return gate_verdict(est, lo, hi)


def truth_inside(change: str, truth_pct: float) -> bool:
    match = CHANGE.search(change)
    return bool(match) and float(match[2]) <= truth_pct <= float(match[3])


def run_gate(name: str, trials: int, rows: list, log) -> None:
    work = {"double": "2", "plus20": "1.2"}.get(name, "1")
    burner = {"aa-cpu": "cpu", "aa-blas": "blas"}.get(name, "none")
    start = loadavg()
    results = []
    with Burner(burner):
        for i in range(trials):
            code, verdict, change = gate_trial(work)
            results.append((code, verdict, change))
            log(f"  {name} {i + 1}/{trials}: exit {code}, {verdict}; {change}")
    verdicts = [v.split(" (")[0] for _, v, _ in results]
    from everyo.bench.regression import MACHINE_BUSY

    busy = [v == MACHINE_BUSY.upper() for v in verdicts]
    before = ["busy" if b else alone_verdict(c) for b, (_, _, c) in zip(busy, results)]
    if name == "double":
        hits = sum(truth_inside(c, 100.0) for _, _, c in results)
        hits_alone = sum(truth_inside(alone(c), 100.0) for _, _, c in results)
        target, what = 0.95, "+100 % inside the interval"
    elif name == "plus20":
        hits = sum(code == 1 for code, _, _ in results)
        hits_alone = sum(v == "regression" for v in before)
        target, what = 0.90, "regression (exit 1)"
    elif name == "aa":
        hits = sum(code == 0 and v == "OK" for (code, _, _), v in zip(results, verdicts))
        hits_alone = sum(v == "ok" for v in before)
        target, what = 0.95, "ok (exit 0)"
    else:
        hits = sum(v not in ("REGRESSION", "IMPROVEMENT") for v in verdicts)
        hits_alone = sum(v not in ("regression", "improvement") for v in before)
        target, what = 0.95, "ok or inconclusive"
    counts = ", ".join(f"{v.lower()} {verdicts.count(v)}" for v in sorted(set(verdicts)))
    counts += f"; without the machine's speed: {hits_alone}/{trials}"
    rows.append(
        [
            name,
            f"{start} → {loadavg()}",
            f"{what}: {hits}/{trials}",
            counts,
            _verdict(hits, trials, target),
        ]
    )


def run_interleaved(trials: int, rows: list, log) -> None:
    import gate_workload

    from everyo_lab.labs import interleaved

    for burner in ("none", "cpu", "blas"):
        start = loadavg()
        verdicts = []
        with Burner(burner):
            for _ in range(trials):
                result = interleaved(gate_workload.work, gate_workload.work, warmup=5, repeat=50)
                verdicts.append(result.verdict)
        log(f"  interleaved beside {burner}: {verdicts}")
        hits = sum(v not in ("faster", "slower") for v in verdicts)
        counts = ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)))
        rows.append(
            [
                f"interleaved A/A, burner {burner}",
                f"{start} → {loadavg()}",
                f"not faster/slower: {hits}/{trials}",
                counts,
                _verdict(hits, trials, 0.95),
            ]
        )


def run_wall(trials: int, rows: list, log) -> None:
    from everyo.bench.workers import DEFAULT_PROCESSES

    processes = (
        GATE_OPTIONS[GATE_OPTIONS.index("--processes") + 1]
        if "--processes" in GATE_OPTIONS
        else DEFAULT_PROCESSES
    )
    start = loadavg()
    walls = []
    for _ in range(trials):
        code, out, wall = bench()
        walls.append(wall)
        log(f"  wall: {wall:.2f} s (exit {code})")
    worst = max(walls)
    rows.append(
        [
            f"wall time, {processes} processes",
            f"{start} → {loadavg()}",
            f"median {statistics.median(walls):.2f} s, max {worst:.2f} s",
            "",
            "met" if worst < 10 else "**missed**",
        ]
    )


THREADS_CHILD = """
import sys, time
import numpy as np
A = np.random.default_rng(0).random((200, 200))
mode = sys.argv[1]
if mode != "environment":
    from threadpoolctl import threadpool_limits
    if mode == "runtime":
        (A @ A).sum()  # BLAS's pool starts with its default threads first
    threadpool_limits(1)
for _ in range(20):
    (A @ A).sum()
times = []
for _ in range(300):
    t = time.perf_counter(); (A @ A).sum(); times.append(time.perf_counter() - t)
times.sort()
import os
tasks = "/proc/self/task"
print(times[len(times) // 2], len(os.listdir(tasks)) if os.path.isdir(tasks) else 0)
"""


def run_threads(trials: int, rows: list, log) -> None:
    modes = ("environment", "runtime", "runtime-before-first-call")
    medians: dict[str, list[float]] = {m: [] for m in modes}
    tasks: dict[str, set[int]] = {m: set() for m in modes}
    start = loadavg()
    for _ in range(max(trials, 3)):
        for mode in modes:  # in turns, so drift hits every mode alike
            env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
            if mode == "environment":
                env.update({k: "1" for k in THREAD_VARIABLES})
            done = subprocess.run(
                [sys.executable, "-c", THREADS_CHILD, mode],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=True,
            )
            median, threads = done.stdout.split()
            medians[mode].append(float(median) * 1e3)
            tasks[mode].add(int(threads))
    for mode in modes:
        values = medians[mode]
        log(f"  threads {mode}: {[round(v, 4) for v in values]}")
        rows.append(
            [
                f"1 BLAS thread: {mode}",
                f"{start} → {loadavg()}",
                f"median of {len(values)} processes {statistics.median(values):.4f} ms",
                f"processes {min(values):.4f}–{max(values):.4f} ms; threads in each process: "
                + "/".join(map(str, sorted(tasks[mode]))),
                "",
            ]
        )


def run_statistics(trials: int, rows: list, log) -> None:
    import json

    import numpy as np

    from everyo.bench.regression import gate_verdict
    from everyo.bench.stats import process_ratio_interval

    start = loadavg()
    runs: dict[str, list] = {"1": [], "1.2": [], "2": []}
    with tempfile.TemporaryDirectory() as folder:
        for i in range(trials):
            for work in ("1", "1.2", "2") if i % 2 == 0 else ("1", "1.2"):
                path = Path(folder) / f"{work}-{i}.json"
                code, out, _ = bench("--save-baseline", str(path), work=work)
                if code != 0:
                    raise SystemExit(f"bench failed: {out.strip().splitlines()[-1]}")
                times = json.loads(path.read_text())["process_times_s"]
                runs[work].append([np.asarray(p, np.float64) for p in times])
                log(f"  statistics: run {i + 1}/{trials} of work {work}")
    base = runs["1"]

    def judged(new, old, statistic):
        est, lo, hi = process_ratio_interval(new, old, statistic=statistic)
        return est, lo, hi, gate_verdict(est, lo, hi, 0.10, 0.05)

    for statistic in ("median", "min"):
        aa = [judged(b, a, statistic)[3] for i, a in enumerate(base) for b in base[i + 1 :]]
        plus = [judged(b, a, statistic) for a in base for b in runs["1.2"]]
        double = [judged(b, a, statistic) for a in base for b in runs["2"]]
        logs = np.log([p[0] for p in plus])
        wrong = sum(v in ("regression", "improvement") for v in aa)
        rows.append(
            [
                f"every pair of runs, each process's {statistic}",
                f"{start} → {loadavg()}",
                f"A/A ok {aa.count('ok')}/{len(aa)}; +20 % regression "
                f"{sum(p[3] == 'regression' for p in plus)}/{len(plus)}; 2x inside "
                f"{sum(p[1] <= 2 <= p[2] for p in double)}/{len(double)}",
                f"A/A regression or improvement {wrong}; +20 % estimate: geometric mean "
                f"{np.exp(logs.mean()):.3f}, log sd {logs.std():.3f}",
                "",
            ]
        )


def _verdict(hits: int, trials: int, target: float) -> str:
    return "met" if hits >= target * trials else "**missed**"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20, help="trials per scenario (default 20)")
    parser.add_argument("--quick", action="store_true", help="2 trials each: a smoke run")
    parser.add_argument("--only", default=",".join(SCENARIOS), help="scenarios, comma-separated")
    parser.add_argument("--verbose", action="store_true", help="print every trial")
    parser.add_argument("--threads", help="the gate's --threads (default: its own, 1)")
    parser.add_argument("--processes", type=int, help="the gate's --processes (default: its own)")
    args = parser.parse_args(argv)
    GATE_OPTIONS[:] = [
        *(["--threads", args.threads] if args.threads else []),
        *(["--processes", str(args.processes)] if args.processes else []),
    ]
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(only) - set(SCENARIOS))
    if unknown or args.trials < 1:
        parser.error(
            f"unknown scenario {unknown} (known: {', '.join(SCENARIOS)})"
            if unknown
            else "--trials must be at least 1"
        )
    trials = 2 if args.quick else args.trials

    def log(text):
        if args.verbose:
            print(text, flush=True)

    rows: list[list[str]] = []
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for name in only:
        if name == "interleaved":
            run_interleaved(trials, rows, log)
        elif name == "wall":
            run_wall(min(trials, 5), rows, log)
        elif name == "threads":
            run_threads(trials, rows, log)
        elif name == "statistics":
            run_statistics(trials, rows, log)
        else:
            run_gate(name, trials, rows, log)
    kind = "QUICK smoke run: not results" if args.quick else f"{trials} trials per scenario"
    kind += f"; gate options {' '.join(GATE_OPTIONS)}" if GATE_OPTIONS else "; gate defaults"
    print(
        f"### The regression gate across worker processes (`regression_gate.py`, {started}; "
        f"{kind}; {os.cpu_count()} cores)\n"
    )
    print("| scenario | load average (start → end) | result | verdicts | target |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
