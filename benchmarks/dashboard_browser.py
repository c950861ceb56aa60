"""What the live dashboard costs the user, measured in Debian's Chromium driving JupyterLab.

One JupyterLab page, one kernel, cells run one by one:

- ``%load_ext everyo_lab`` in the fresh kernel, timed from the kernel itself;
- a warm-up profiled cell (the page's first dashboard loads plotly.js);
- a 4-s profiled training loop: first chart after the cell starts (s), chart refreshes per
  second while it runs (``data-redraws`` sampled every 50 ms), the longest main-thread task
  (``longtask`` entries) during the cell, and the websocket bytes of the cell (until quiet);
- the same refresh rates for a 4-s compute-bound loop (no sleep: about 150,000 events a second,
  so each live refresh folds in tens of thousands), and for a 4-s loop of the CNN below, whose
  two BLAS threads keep both cores busy (the live refresher's slower busy-core pace);
- the observer effect, for each loop of ``--observer`` (default both): a fixed-time 3-s loop
  counting steps without the magic and under ``%%everyo_profile`` with the dashboard
  rendering, ten adjacent pairs (``--pairs``) alternating which runs first (their median and
  each, and the pooled ratio: all steps with over all without, which a steady drift of the
  machine's speed moves least), the same per main-thread CPU second (what the kernel pays per
  step, whatever else loads the machine), and two ``--no-live`` pairs (the profiler's own cost
  without live redraws). The loops: ``cnn``, the issue's training loop (a small CNN, about
  11 ms and 21 events a step, OpenBLAS on its default two threads), and ``mlp``, a stress loop
  (a 32-64-8 MLP on 64 rows, about 70 us and 11 events a step: some 150,000 events a second,
  where the recorder alone costs about 8 % of a step);
- 1,000,000 ``record_function`` events under ``--no-live``: bytes of the final view;
- plotly.js transfers over the whole page load (websocket frames over 4 MB);

then, without a browser, the widget state of a notebook with two profiled cells executed by
nbclient.

    python benchmarks/dashboard_browser.py [--write] [--results FILE] [--pairs 10]
        [--observer cnn,mlp]

``--write`` puts the figures into ``benchmarks/RESULTS.md`` (or ``--results FILE``; section
"Live dashboard (Chromium, 2-core)", replaced if present). The browser and the kernel share the
machine: run it on a quiet machine (the load average is printed and written with the figures).
Tests never assert these times; see ``tests/browser``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "browser"))

import harness  # noqa: E402

SECTION = "## Live dashboard (Chromium, 2-core)"
LOAD_EXT = (
    "import time\n"
    "_t = time.perf_counter()\n"
    'get_ipython().run_line_magic("load_ext", "everyo_lab")\n'
    'print(f"LOADEXT {time.perf_counter() - _t:.4f}")'
)
MILLION = """%%everyo_profile --label million --no-live
from everyo.profiler import record_function
for _ in range(1_000_000):
    with record_function("tick"):
        pass
"""
OBSERVER_S = 3.0
# On this shared VM one pair of 3-s cells alone swung from 0.67 to 1.25 within a run (the
# machine's speed drifting by 30 % from minute to minute): ten pairs by default (--pairs), and
# the pooled ratio beside their median.
PAIRS_DEFAULT = 10
# the observer loops (harness.WORKLOADS), in running order: what each is
OBSERVER_LOOPS = {
    "cnn": "the issue's training loop: CNN conv-relu-pool ×2 + linear on 32×3×32×32, two BLAS"
    " threads",
    "mlp": "stress loop: MLP 32-64-8 on 64 rows, about 150,000 events a second",
}
# the target each loop's observer ratio is held to: the issue's figure is for its training loop;
# the stress loop records about 80 times as many events a second as the CNN, so its
# ratio is mostly the recorder's own cost per event (its `--no-live` row), which the profiler's
# figures in RESULTS.md hold to their own targets
OBSERVER_TARGETS = {"cnn": "≥ 0.9", "mlp": "– (stress check: see the `--no-live` row)"}


def observer_plan(pairs: int = PAIRS_DEFAULT) -> tuple[dict, list, list]:
    """The observer-effect cells in running order, name -> magic options: no magic ("plain"),
    the magic with the live dashboard ("magic"), the magic with --no-live ("nolive": the
    profiler's own cost, no live redraws). Each magic cell has a plain neighbour; pairs
    alternate which runs first (plain magic, magic plain, ...), so a steady drift of the
    machine's speed favours neither. Returns (cells, magic pairs, no-live pairs)."""
    if pairs < 2 or pairs % 2:
        raise ValueError(f"--pairs must be an even number of at least 2, got {pairs}")
    order = {
        "plain1": None,
        "magic1": "",
        "nolive1": "--no-live",
        "nolive2": "--no-live",
        "magic2": "",
        "plain2": None,
    }
    for i in range(3, pairs + 1, 2):
        order[f"plain{i}"] = None
        order[f"magic{i}"] = ""
        order[f"magic{i + 1}"] = ""
        order[f"plain{i + 1}"] = None
    magic = [(f"magic{i}", f"plain{i}") for i in range(1, pairs + 1)]
    return order, magic, [("nolive1", "plain1"), ("nolive2", "plain2")]


# cells before: load_ext, warm-up, the 4-s live cell, the busy cell, the CNN's set-up and its
# live cell (the loop on every core, at the slower busy-core pace)
FIRST_OBSERVER = 6


def parse_loops(text: str) -> list[str]:
    loops = [w.strip() for w in text.split(",") if w.strip()]
    unknown = [w for w in loops if w not in OBSERVER_LOOPS]
    if not loops or unknown:
        raise ValueError(
            f"--observer takes a comma-separated list of {', '.join(OBSERVER_LOOPS)}; got {text!r}"
        )
    return list(dict.fromkeys(loops))


def cells(observer: dict, loops: list[str]) -> tuple[list[str], dict]:
    """The notebook's cells, and the index of each observer cell: "loop/name" -> index (each
    loop's cells follow a cell that builds its model, optimizer and input)."""
    loop = dict(sleep=None)  # compute-bound: the kernel and the browser share 2 cores
    out = [
        LOAD_EXT,  # 0
        harness.warmup_cell(),  # 1
        harness.training_cell(4.0, magic="--label live"),  # 2
        harness.training_cell(4.0, magic="--label busy", **loop),  # 3: ~150,000 events/s
        harness.WORKLOADS["cnn"],  # 4
        harness.training_cell(4.0, magic="--label cores", **loop),  # 5: every core busy
    ]
    where = {}
    for workload in loops:
        out.append(harness.WORKLOADS[workload])
        for name, options in observer.items():
            key = f"{workload}/{name}"
            where[key] = len(out)
            opts = None if options is None else f"{options} --label {workload}-{name}".strip()
            out.append(
                harness.training_cell(OBSERVER_S, magic=opts, report=key.replace("/", "_"), **loop)
            )
    out.append(MILLION)  # the last cell
    return out, where


def output_text(session, index: int) -> str:
    return session.cell(index).locator(".jp-OutputArea").inner_text()


def number(pattern: str, text: str) -> float:
    m = re.search(pattern, text)
    if m is None:
        raise RuntimeError(f"{pattern!r} not found in the cell output: {text[-500:]!r}")
    return float(m.group(1))


GROUPS = ("kernel", "chromium", "server", "other")


def cpu_seconds() -> dict:
    """CPU seconds used so far by the kernel, Chromium (every process), the Jupyter server and
    everything else on the machine (system busy time minus the three)."""
    import psutil

    used = dict.fromkeys(GROUPS, 0.0)
    for proc in psutil.process_iter(["name", "cmdline", "cpu_times"]):
        times, cmd = proc.info["cpu_times"], " ".join(proc.info["cmdline"] or [])
        if times is None:
            continue
        name = proc.info["name"] or ""
        group = (
            "kernel"
            if "ipykernel" in cmd
            else "chromium"
            if "chrom" in name or "chrom" in cmd.split(" ")[0]
            else "server"
            if "jupyter" in cmd or "jupyterlab" in cmd
            else None
        )
        if group is not None:
            used[group] += times.user + times.system
    total = psutil.cpu_times()
    busy = sum(total) - total.idle - getattr(total, "iowait", 0.0)
    used["other"] = busy - used["kernel"] - used["chromium"] - used["server"]
    return used


def run_cell_bytes(session, index: int, timeout_ms: int = 180000):
    """Run a cell while sampling it; bytes received from the request until the socket is
    quiet again (the final view included)."""
    mark = session.bytes.mark()
    watch = session.run_and_watch(index, timeout_ms=timeout_ms, every_ms=50)
    session.bytes.wait_quiet(session.page)
    return watch, session.bytes.between(mark)


def watch_liveness(session, index: int, m: dict, name: str) -> None:
    """Run cell ``index`` once the page is quiet and note in ``m`` how live its dashboard was:
    new reports (the header's wall time and events: in bars mode the number of bars held often
    stays the same from one refresh to the next) a second over the cell and once the first
    chart shows, and redraws a second over the cell."""
    session.bytes.wait_quiet(session.page)
    session.page.wait_for_timeout(1000)
    watch = session.run_and_watch(index, timeout_ms=60000, every_ms=50)
    m[f"{name}_updates_per_s"] = watch.changes_per_second("header")
    m[f"{name}_updates_shown_per_s"] = watch.changes_per_second("header", after_first_chart=True)
    m[f"{name}_redraws_per_s"] = watch.changes_per_second("redraws")


def measure_browser(folder: Path, pairs: int = PAIRS_DEFAULT, loops=tuple(OBSERVER_LOOPS)) -> dict:
    observer, magic_pairs, nolive_pairs = observer_plan(pairs)
    notebook, where = cells(observer, list(loops))
    million_cell = len(notebook) - 1
    harness.write_notebook(folder / "bench.ipynb", notebook)
    m: dict = {"order": list(where), "loops": list(loops)}
    with harness.BrowserSession(folder, app="lab") as s:
        session_start = s.bytes.mark()
        s.open("bench.ipynb")
        s.run_cell(0)
        s.wait_prompt(0)
        m["load_ext_s"] = number(r"LOADEXT ([\d.]+)", output_text(s, 0))
        s.run_cell(1)
        s.wait_prompt(1)
        s.wait_plotly_chart(1)
        s.bytes.wait_quiet(s.page)

        watch, m["live_bytes"] = run_cell_bytes(s, 2)
        run = watch.running()
        t0, t1 = watch.span_ms()
        if run:
            first = next((x for x in run if x.get("bars", 0) > 0), None)
            if first is None:  # the chart only came with the final view
                first = next((x for x in watch.samples if x and x.get("bars", 0) > 0), None)
            m["first_chart_s"] = None if first is None else (first["t"] - t0) / 1000
            m["refreshes_per_s"] = watch.changes_per_second("redraws")
            m["event_updates_per_s"] = watch.changes_per_second("events")
            m["event_updates_shown_per_s"] = watch.changes_per_second(
                "events", after_first_chart=True
            )
        m["running_s"] = (t1 - t0) / 1000
        tasks = s.longtasks(t0, t1)
        m["longtasks"] = [
            (round((x["start"] - t0) / 1000, 2), round(x["duration"]))
            for x in s.page.evaluate("() => window.__longtasks")
            if t0 - 1000 <= x["start"] <= t1 + 3000
        ]
        m["longest_task_ms"] = max(tasks, default=0.0)
        m["longtasks_over_200ms"] = sum(1 for d in tasks if d > 200)

        # liveness under a compute-bound loop: each live refresh then folds in ~75,000 events
        watch_liveness(s, 3, m, "busy")
        # liveness of a loop on every core (two refreshes a second, everyo_lab.live.BUSY_HZ)
        s.run_cell(4)
        s.wait_prompt(4, timeout_ms=60000)
        watch_liveness(s, 5, m, "cores")

        steps, cpu, used, sched = {}, {}, {}, {}
        index = FIRST_OBSERVER
        while index < million_cell:
            s.bytes.wait_quiet(s.page)  # the previous cell's final view is drawn
            s.page.wait_for_timeout(1000)
            key = next((k for k, i in where.items() if i == index), None)
            before = cpu_seconds()
            s.run_cell(index)
            s.wait_prompt(index, timeout_ms=60000)
            after = cpu_seconds()
            index += 1
            if key is None:  # a loop's set-up cell
                continue
            text = output_text(s, where[key])
            n, seconds, delay, switches = re.search(
                r"STEPS \w+ (\d+) ([\d.]+) SCHED (\S+) (\S+)", text
            ).groups()
            steps[key], cpu[key] = int(n), float(seconds)
            if delay != "-":
                sched[key] = (int(delay), int(switches))
            used[key] = {g: after[g] - before[g] for g in GROUPS}
        m["steps"], m["cpu"], m["used"], m["sched"] = steps, cpu, used, sched
        m["observer"] = {
            w: observer_figures(
                w, list(observer), steps, cpu, used, sched, magic_pairs, nolive_pairs
            )
            for w in loops
        }

        s.bytes.wait_quiet(s.page)
        watch, m["million_bytes"] = run_cell_bytes(s, million_cell, timeout_ms=300000)
        m["million_board"] = s.board(million_cell)
        header = output_text(s, million_cell)
        m["million_events"] = number(r"([\d,]+) events", header.replace(",", ""))
        m["plotly_transfers"] = len(s.bytes.big_frames(session_start))
        m["page_bytes"] = s.bytes.total()
        s.screenshot(s.cell(million_cell).locator(".everyo-dashboard").first, "bench-million")
    return m


def pooled_interval(
    pairs: list[tuple[int, int]], level: float = 0.9, draws: int = 4000, seed: int = 0
):
    """A bootstrap interval of the pooled ratio (all steps with over all steps without) over the
    pairs ``(with, without)``: pairs drawn with replacement, ``draws`` times, seeded. How far
    the machine's noise leaves the pooled figure from the one a quiet machine would give."""
    import random

    rng = random.Random(seed)
    n = len(pairs)
    values = []
    for _ in range(draws):
        pick = [pairs[rng.randrange(n)] for _ in range(n)]
        values.append(sum(a for a, _ in pick) / max(1, sum(b for _, b in pick)))
    values.sort()
    tail = (1 - level) / 2
    return values[int(tail * (draws - 1))], values[int((1 - tail) * (draws - 1))]


def observer_figures(workload, names, steps, cpu, used, sched, magic_pairs, nolive_pairs) -> dict:
    """One loop's observer figures from its cells' steps, CPU seconds and counters."""
    k = lambda name: f"{workload}/{name}"  # noqa: E731
    out: dict = {}
    for kind in ("plain", "magic", "nolive"):
        cells_of = [k(n) for n in names if n.startswith(kind)]
        out[f"used_{kind}"] = {g: statistics.median(used[c][g] for c in cells_of) for g in GROUPS}
        counted = [sched[c] for c in cells_of if c in sched]
        out[f"sched_{kind}"] = (
            tuple(statistics.median(c[i] for c in counted) for i in (0, 1)) if counted else None
        )

    def ratios(pairs, per_cpu=False):
        rate = (lambda c: steps[c] / cpu[c]) if per_cpu else (lambda c: steps[c])
        return [rate(k(a)) / rate(k(b)) for a, b in pairs]

    out["wall"] = ratios(magic_pairs)
    out["pooled"] = sum(steps[k(a)] for a, _ in magic_pairs) / sum(
        steps[k(b)] for _, b in magic_pairs
    )
    out["pooled_interval"] = pooled_interval([(steps[k(a)], steps[k(b)]) for a, b in magic_pairs])
    out["cpu"] = ratios(magic_pairs, per_cpu=True)
    out["nolive_wall"] = ratios(nolive_pairs)
    out["nolive_cpu"] = ratios(nolive_pairs, per_cpu=True)
    return out


def measure_state(folder: Path) -> dict:
    nb, path = harness.execute_notebook(
        [
            "%load_ext everyo_lab",
            harness.warmup_cell("first", steps=20),
            harness.training_cell(1.0, magic="--label second"),
        ],
        folder,
    )
    state = harness.widget_state(nb)
    text = json.dumps(state)
    return {
        "state_bytes": len(text),
        "notebook_bytes": path.stat().st_size,
        "state_has_plotly": "plotly.js v" in text,
        "longest_state_string": max((len(x) for x in harness.json_strings(state)), default=0),
    }


def cpu_use(o: dict) -> str:
    """A loop's CPU seconds per cell, per kind of cell (``o``: its observer figures)."""
    return "; ".join(
        f"{kind} " + ", ".join(f"{g} {o[f'used_{kind}'][g]:.2f}" for g in GROUPS)
        for kind in ("plain", "magic", "nolive")
    )


def sched_use(o: dict) -> str:
    """Median ms waiting for a core and voluntary switches of the loop thread, per kind."""
    parts = []
    for kind in ("plain", "magic", "nolive"):
        c = o.get(f"sched_{kind}")
        parts.append(f"{kind} " + ("n/a" if c is None else f"{c[0]:.0f} ms, {c[1]:.0f}"))
    return "; ".join(parts)


def fmt(value, spec: str, unit: str = "") -> str:
    return "n/a" if value is None else f"{value:{spec}}{unit}"


def ratio_list(values: list[float]) -> str:
    each = ", ".join(f"{v:.2f}" for v in values)
    return f"{statistics.median(values):.2f} ({each})"


def observer_rows(workload: str, o: dict) -> list[tuple[str, str, str]]:
    what = f"{workload} ({OBSERVER_LOOPS[workload]})"
    return [
        (
            f"observer effect, {what}: steps with / without, adjacent pairs (median; each)",
            ratio_list(o["wall"]),
            OBSERVER_TARGETS[workload],
        ),
        (
            f"{workload}: the same, pooled: all steps with / all steps without (90 % bootstrap"
            " interval over the pairs)",
            f"{o['pooled']:.3f} ({o['pooled_interval'][0]:.3f}–{o['pooled_interval'][1]:.3f})",
            "–",
        ),
        (
            f"{workload}: the same per CPU second of the training thread (what recording costs it)",
            ratio_list(o["cpu"]),
            "–",
        ),
        (
            f"{workload}: the same under `--no-live` (the profiler alone), wall; per CPU second",
            f"{ratio_list(o['nolive_wall'])}; {ratio_list(o['nolive_cpu'])}",
            "–",
        ),
        (
            f"{workload}: CPU seconds per 3-s observer cell (median): kernel, Chromium, server,"
            " rest",
            cpu_use(o).replace("; ", "<br>"),
            "–",
        ),
        (
            f"{workload}: the loop thread per 3-s cell (median): ms waiting for a core, voluntary"
            " switches (mostly GIL waits)",
            sched_use(o),
            "–",
        ),
    ]


def liveness(m: dict, updates: str, redraws: str) -> str:
    """ "2.4 (2.1; 2.1)": changes a second once the first chart is shown (from the cell's
    start; every redraw from the start)."""
    return (
        f"{fmt(m.get(updates + '_shown_per_s'), '.1f')} ({fmt(m.get(updates + '_per_s'), '.1f')};"
        f" {fmt(m.get(redraws + '_per_s'), '.1f')})"
    )


def table(m: dict) -> list[str]:
    rows = [
        ("first chart after the cell starts", fmt(m.get("first_chart_s"), ".2f", " s"), "≤ 1.5 s"),
        (
            "chart refreshes per second while the cell runs, with new events: once the first"
            " chart is shown (from the cell's start; all redraws from the start)",
            liveness(m, "event_updates", "refreshes"),
            "≥ 2",
        ),
        (
            "the same, compute-bound loop (about 150,000 events a second): new reports",
            liveness(m, "busy_updates", "busy_redraws"),
            "≥ 2",
        ),
        (
            "the same, a loop keeping every core busy (the CNN on two BLAS threads, paced at two"
            " refreshes a second): new reports",
            liveness(m, "cores_updates", "cores_redraws"),
            "≥ 2",
        ),
        (
            "longest main-thread task during the live cell",
            fmt(m["longest_task_ms"], ".0f", " ms") + f" ({m['longtasks_over_200ms']} over 200 ms)",
            "≤ 200 ms",
        ),
        ("bytes received for the 4-s profiled cell", f"{m['live_bytes']:,} B", "≤ 2 MB"),
        ("plotly.js transfers in the page load", str(m["plotly_transfers"]), "≤ 1"),
        *[row for w in m["loops"] for row in observer_rows(w, m["observer"][w])],
        ("`%load_ext everyo_lab` in a fresh kernel", f"{m['load_ext_s']:.2f} s", "≤ 1.5 s"),
        (
            "widget state, executed notebook with two profiled cells",
            f"{m['state_bytes']:,} B (file {m['notebook_bytes']:,} B)",
            "≤ 1 MB, no plotly.js",
        ),
        ("bytes of a 1,000,000-event run's final view", f"{m['million_bytes']:,} B", "≤ 5 MB"),
    ]
    lines = ["| what | measured | target |", "| --- | ---: | --- |"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return lines


def machine() -> str:
    return f"{os.cpu_count()} logical cores (nproc), {harness.chromium_version()}"


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"


def write_results(m: dict, path: Path) -> None:
    text = path.read_text()
    steps = m["steps"]
    board = m.get("million_board") or {}
    intro = (
        f"`dashboard_browser.py`, {datetime.date.today().isoformat()}: JupyterLab in headless "
        f"Chromium on the same machine as the kernel ({machine()}). One page, one kernel; "
        "times are wall-clock as the page saw them (samples every 50 ms), so they move with "
        f"the machine's load ({m['load_before']} before, {m['load_after']} after). Tests in "
        "`tests/browser` assert only loose bounds."
    )
    notes = (
        f"Observer effect: {OBSERVER_S:.0f}-s compute-bound loops, steps "
        + ", ".join(f"{k} {steps[k]} ({m['cpu'][k]:.2f} s CPU)" for k in m["order"])
        + " in that order (each loop after a cell that builds its model). The live cell showed "
        f"`[*]` for {m['running_s']:.1f} s; long "
        f"tasks (s from its start, ms) {m['longtasks']}. The {m['million_events']:,.0f}-event "
        f"run's final view drew {board.get('bars', 'n/a')} bars from "
        f"{board.get('events', 'n/a')} level-of-detail rows held by the page."
    )
    intro, notes = textwrap.fill(intro, 100), textwrap.fill(notes, 100)
    body = [SECTION, "", intro, "", *table(m), "", notes, "", ""]
    start = text.find(SECTION)
    if start >= 0:  # up to the next heading: hand-written ### notes after the figures stay
        ends = [text.find(h, start + len(SECTION)) for h in ("\n## ", "\n### ")]
        end = min((e for e in ends if e >= 0), default=-1)
        text = text[:start] + "\n".join(body) + ("" if end < 0 else text[end + 1 :])
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(body)
    path.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the figures into RESULTS.md")
    parser.add_argument(
        "--results", type=Path, default=HERE / "RESULTS.md", help="the file --write updates"
    )
    parser.add_argument(
        "--pairs",
        type=int,
        default=PAIRS_DEFAULT,
        help=f"observer-effect pairs, an even number (default {PAIRS_DEFAULT}; 3-s cells each)",
    )
    parser.add_argument(
        "--observer",
        default=",".join(OBSERVER_LOOPS),
        help="the observer-effect loops, comma-separated, in running order (default "
        + ",".join(OBSERVER_LOOPS)
        + "): "
        + "; ".join(f"{k}, {v}" for k, v in OBSERVER_LOOPS.items()),
    )
    args = parser.parse_args()
    try:  # a bad --pairs or --observer fails before the browser starts
        observer_plan(args.pairs)
        loops = parse_loops(args.observer)
    except ValueError as e:
        parser.error(str(e))
    reason = harness.missing()
    if reason:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    print(f"machine: {machine()}; {load()}")
    started = time.monotonic()
    before = load()
    with tempfile.TemporaryDirectory(prefix="everyo-bench-") as tmp:
        m = measure_browser(Path(tmp), args.pairs, loops)
    with tempfile.TemporaryDirectory(prefix="everyo-bench-") as tmp:
        m.update(measure_state(Path(tmp)))
    m["load_before"], m["load_after"] = before, load()
    print("\n".join(table(m)))
    print(f"steps: {m['steps']}; main-thread CPU s: {m['cpu']}")
    for w in loops:
        print(f"{w}: CPU s per observer cell (median): {cpu_use(m['observer'][w])}")
        print(f"{w}: loop thread per observer cell (median): {sched_use(m['observer'][w])}")
    print(f"live cell [*] for {m['running_s']:.1f} s")
    print(f"long tasks around the live cell (s from its start, ms): {m['longtasks']}")
    print(f"1M-event run: {m['million_events']:,.0f} events in its header")
    print(f"1M-event board: {m.get('million_board')}")
    print(f"page bytes in all: {m['page_bytes']:,}; took {time.monotonic() - started:.0f} s")
    print(f"{m['load_before']} before, {m['load_after']} after")
    if m["state_has_plotly"]:
        print("WARNING: plotly.js is in the saved widget state")
    if args.write:
        write_results(m, args.results)
        print(f"written to {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
