"""Every lab, student and solution notebook, on a quiet machine, beside a CPU burner and beside a
BLAS burner: no traceback, every check of a solution passes or says "inconclusive: ... rerun",
and every lesson is the one the quiet machine taught.

Run: ``python benchmarks/labs_under_load.py [--quick] [--labs 01,05] [--loads quiet,blas]
[--runs N] [--size small|full] [--json PATH]``. The full mode runs all nine labs, both
notebooks, at full size, three times under each load (the quiet runs alone took 17 minutes on
this 2-core machine, lab 09's PyTorch notebooks 75-116 s a run; the burners slow the rest);
``--quick`` runs the solutions of labs 01, 04, 05 and 06 at the small size, once under each
load. Prints a markdown table, one
row per (notebook, load, run), then the lessons that differed from the quiet machine's.

A lesson is what a student takes away, read from the figures the lab records
(``results/<lab>.json``): the bottleneck a lab names (module, stage, phase, culprit), the
recommended and chosen batch sizes (unless the lab said the sweep was inconclusive, and to
rerun), the float16 decision, the gate's exit codes, whether the
data dominates, and the direction of every speed-up (faster or slower). The burners are other
processes (:mod:`contention`'s): one pure-Python loop per core, or 512x512 float32 matmuls on
as many OpenBLAS threads as cores, as another student's kernel would run. The quiet runs need a
quiet machine; on a shared one they read whatever load there is, and say so.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from contention import Burner

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
LOADS = ("quiet", "cpu", "blas")
QUICK_LABS = ("01", "04", "05", "06")
NAMED = (
    "bottleneck",
    "slowest_stage",
    "dominant_phase",
    "culprit",
    "recommended",
    "chosen_batch",
    "use_float16",
    "gate_exit_codes",
)
"""Recorded figures that are a lesson as they are (a name, a batch size, a decision)."""
PASSED = re.compile(r"^\u2713 check \d+ passed: (.*)$", re.M)


def lessons(results: dict) -> dict:
    """The lessons of one run, from the figures its lab recorded."""
    out = {key: results[key] for key in NAMED if key in results}
    for key, value in results.items():
        if (key.endswith("speedup") or key.endswith("_gain")) and isinstance(value, (int, float)):
            out[key] = "faster" if value > 1 else "slower"
    if results.get("recommendation_conclusive") is False:  # the lab said: rerun
        out.update({k: "inconclusive" for k in ("recommended", "chosen_batch") if k in out})
    if isinstance(results.get("data_share"), (int, float)):
        out["data_share"] = "data dominates" if results["data_share"] > 0.5 else "model dominates"
    return out


def judge_checks(record: dict | None, solution: bool) -> tuple[int, int, list[str]]:
    """(checks passed, checks that asked for a rerun, problems): a solution's check that
    neither passed nor said "inconclusive ... rerun" is a problem; a student notebook's unmet
    checks are its exercises, not problems."""
    if record is None:
        return 0, 0, ["no results file: the record cell did not run"]
    passed = inconclusive = 0
    problems = []
    for check in record["checks"]:
        text = check["text"]
        if "rerun" in text and ("inconclusive" in text or "provisional" in text or check["met"]):
            inconclusive += 1  # (a pass with "rerun to confirm" too: the machine interfered)
        elif check["met"]:
            passed += 1
        elif solution:
            problems.append(f"check {check['check']} not met: {text}")
    return passed, inconclusive, problems


def execute(path: Path, size: str, solution: bool) -> dict:
    """Run one notebook in a fresh folder; what it printed, recorded and raised."""
    import nbclient
    import nbformat

    lab = path.stem
    env_before = dict(os.environ)
    os.environ["EVERYO_LAB_SIZE"] = size
    os.environ["EVERYO_LAB_CHECKS"] = "stop" if solution else "report"
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.pop(name, None)  # the labs' own thread policy does the work
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix=f"lab-{lab}-") as folder:
            nb = nbformat.read(path, as_version=4)
            client = nbclient.NotebookClient(
                nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": folder}}
            )
            error = None
            try:
                client.execute()
            except nbclient.exceptions.CellExecutionError as exc:
                error = str(exc).strip().splitlines()[-1][:300]
            results = Path(folder) / "results" / f"{lab}.json"
            record = json.loads(results.read_text()) if results.exists() else None
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    errors = [
        f"{o.ename}: {o.evalue}"[:300]
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    passed, inconclusive, problems = judge_checks(record, solution)
    return {
        "notebook": f"{'solutions/' if solution else ''}{lab}",
        "seconds": time.perf_counter() - started,
        "traceback": error or (errors[0] if errors else None),
        "passed": passed,
        "inconclusive": inconclusive,
        "problems": problems,
        "lessons": lessons(record["results"]) if record and solution else {},
    }


def notebooks(labs: list[str], quick: bool) -> list[tuple[Path, bool]]:
    out = []
    for path in sorted(EXAMPLES.glob("[0-9][0-9]_*.ipynb")):
        if labs and path.stem[:2] not in labs:
            continue
        if not quick:
            out.append((path, False))
        out.append((EXAMPLES / "solutions" / path.name, True))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="solutions of 4 labs, small, once")
    parser.add_argument("--labs", default="", help="lab numbers, e.g. 01,05 (default: all)")
    parser.add_argument("--loads", default=",".join(LOADS), help="quiet,cpu,blas")
    parser.add_argument("--runs", type=int, default=None, help="runs per load (default 3)")
    parser.add_argument("--size", choices=("small", "full"), default=None)
    parser.add_argument("--json", default=None, metavar="PATH", help="also write the rows here")
    args = parser.parse_args(argv)
    labs = [s.strip() for s in args.labs.split(",") if s.strip()] or (
        list(QUICK_LABS) if args.quick else []
    )
    loads = [s.strip() for s in args.loads.split(",") if s.strip()]
    if set(loads) - set(LOADS) or not loads:
        parser.error(f"--loads takes some of {', '.join(LOADS)}")
    runs = args.runs or (1 if args.quick else 3)
    size = args.size or ("small" if args.quick else "full")
    rows = []
    for load in loads:
        with Burner(load):
            for path, solution in notebooks(labs, args.quick):
                for run in range(1, runs + 1):
                    row = execute(path, size, solution)
                    row.update(load=load, run=run)
                    rows.append(row)
                    print(_line(row), file=sys.stderr, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
    ok = report(rows, size)
    return 0 if ok else 1


def _line(row: dict) -> str:
    return (
        f"{row['notebook']} {row['load']} #{row['run']}: {row['passed']} passed, "
        f"{row['inconclusive']} inconclusive, traceback {row['traceback'] or 'none'}, "
        f"problems {row['problems'] or 'none'}, {row['seconds']:.0f} s; lessons "
        + (", ".join(f"{k} {v}" for k, v in row["lessons"].items()) or "-")
    )


def report(rows: list[dict], size: str) -> bool:
    """Print the markdown table and the lessons that changed; True when all held."""
    print(f"size {size}, {len(rows)} notebook runs\n")
    print(
        "| notebook | load | run | traceback | checks passed | inconclusive: rerun | problems "
        "| lessons |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        taught = ", ".join(f"{k} {v}" for k, v in r["lessons"].items()) or "-"
        print(
            f"| {r['notebook']} | {r['load']} | {r['run']} | {r['traceback'] or 'none'} | "
            f"{r['passed']} | {r['inconclusive']} | {'; '.join(r['problems']) or 'none'} "
            f"| {taught} |"
        )
    quiet = {}
    for r in rows:
        if r["load"] == "quiet" and r["lessons"]:
            quiet.setdefault(r["notebook"], r["lessons"])
    changed = []
    for r in rows:
        base = quiet.get(r["notebook"])
        if base is None or r["load"] == "quiet":
            continue
        for key, value in r["lessons"].items():
            if key in base and "inconclusive" not in (base[key], value) and base[key] != value:
                changed.append(
                    f"{r['notebook']} {r['load']} #{r['run']}: {key} {value!r}, quiet {base[key]!r}"
                )
    print("\nLessons that differ from the quiet machine's: " + ("none" if not changed else ""))
    for line in changed:
        print(f"- {line}")
    failed = [r for r in rows if r["traceback"] or r["problems"]]
    return not failed and not changed


if __name__ == "__main__":
    raise SystemExit(main())
