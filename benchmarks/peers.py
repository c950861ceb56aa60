"""Profiler cost against the peers on the same workloads: everyo, torch.profiler (the equivalent
PyTorch model, with and without ``record_shapes``), viztracer, pyinstrument, cProfile and scalene.

    python benchmarks/peers.py [--quick]      (the same as: run.py --only peers)
    python benchmarks/peers.py --workload 784 --tool everyo --tool pyinstrument [--rounds N]
                                              (a subset: workloads and tools whose names hold
                                              one of the strings; no sessions, no off costs)

Workloads: a deep stack of small module calls (50 ``Linear(4, 4)`` in a ``Sequential``, batch
2), two MLP training loops (32-64-64-8 at batch 16, a step of about 75 us, and 784-256-256-10 at
batch 64, about 1 ms; Adam), the 32x64-64-10 MLP step and a CNN forward (batch 8, 3x32x32).
everyo, viztracer, pyinstrument, cProfile and scalene profile the everyo model; torch.profiler
profiles the same model in PyTorch (same shapes and weights), whose events are ATen ops rather
than modules. The tools are in ``peer_tools.py`` (``pip install -e ".[bench]"`` installs them).

For each tool and workload: rounds of the loop unprofiled and profiled, interleaved (CPU time of
the process, one BLAS and torch thread, each tool's start and stop inside the profiled time, the
events counted after it); the slowdown is the median of the paired ratios. Then the events or
samples it recorded per step, and the extra time per event. Then one session of the deep stack
sized to about the same number of events for every tool: resident memory added per event while
recording, the export's time and file size. "Cost when off": what an instrumentation point costs
with no profiler running. A peer that is not installed is skipped with a note.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time

import numpy as np
from peer_tools import PyinstrumentTool, scalene_loop, tools
from suite import Section, median, one_thread, optional, paired_ratio, rss_bytes, script_main

import everyo as eo
from everyo.profiler import record_function

DEPTH = 50


# ---- workloads: (everyo step, torch step) ----------------------------------------------------
def deep_stack():
    e = eo.Sequential(*[eo.Linear(4, 4, seed=i) for i in range(DEPTH)])
    x = np.ones((2, 4), np.float32)
    ex = eo.tensor(x)
    torch = optional("torch")
    t_step = None
    if torch is not None:
        t = _torch_copy(
            torch, e, torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(DEPTH)])
        )
        tx = torch.from_numpy(x)

        def t_step():
            with torch.no_grad():
                return t(tx)

    def e_step():
        with eo.no_grad():
            return e(ex)

    return e_step, t_step


def mlp_step(batch=None, sizes=None):
    from engine_step import MLPS, build

    if sizes is None:
        batch, sizes = MLPS["32×64-64-10"]
    impls = build("mlp", sizes, batch, "adam")  # checks the three agree first
    (e, ea), t = impls["everyo"], impls.get("torch")
    return (lambda: e.step(*ea)), (None if t is None else (lambda: t[0].step(*t[1])))


def cnn_forward():
    from engine_step import everyo_model, torch_model

    e = everyo_model("cnn", None)
    x = np.random.default_rng(0).standard_normal((8, 3, 32, 32)).astype(np.float32)
    ex = eo.tensor(x)
    torch = optional("torch")
    t_step = None
    if torch is not None:
        t = _torch_copy(torch, e, torch_model(torch, "cnn", None))
        tx = torch.from_numpy(x)
        with torch.no_grad():
            np.testing.assert_allclose(t(tx).numpy(), e(ex).numpy(), rtol=1e-4, atol=1e-5)

        def t_step():
            with torch.no_grad():
                return t(tx)

    def e_step():
        with eo.no_grad():
            return e(ex)

    return e_step, t_step


def _torch_copy(torch, e_model, t_model):
    with torch.no_grad():
        for p, q in zip(t_model.parameters(), e_model.parameters()):
            p.copy_(torch.from_numpy(q.numpy()))
    return t_model


LOOPS = {  # issue 35's loops: every tool's slowdown side by side (the notes' summary)
    "MLP 32-64-64-8, batch 16 (Adam step)": lambda: mlp_step(16, [32, 64, 64, 8]),
    "MLP 784-256-256-10, batch 64 (Adam step)": lambda: mlp_step(64, [784, 256, 256, 10]),
}
WORKLOADS = {
    "deep stack (50 modules)": deep_stack,
    **LOOPS,
    "MLP step 32×64-64-10": mlp_step,
    "CNN forward": cnn_forward,
}


def loop(fn, steps: int) -> float:
    """CPU seconds of the process (all its threads: a tool's own threads count) for ``steps``."""
    t0 = time.process_time()
    for _ in range(steps):
        fn()
    return time.process_time() - t0


def profiled(tool, fn, steps: int) -> tuple[float, int, str]:
    """CPU seconds of ``steps`` steps under ``tool``, its start and stop included, and what it
    recorded (counted after the timing: no peer materialises its events inside it)."""
    t0 = time.process_time()
    tool.start()
    try:
        for _ in range(steps):
            fn()
    finally:
        tool.stop()
    t = time.process_time() - t0
    return (t, *tool.recorded())


def _steps_for(fn, seconds: float) -> int:
    """Steps that take about ``seconds`` (at least 10)."""
    probe = loop(fn, 10) / 10
    return max(10, int(seconds / max(probe, 1e-9)))


def section(
    quick: bool = False, workloads=None, tool_names=None, rounds: int | None = None
) -> Section:
    s = Section(
        "peers",
        "Profiler cost against torch.profiler, viztracer, pyinstrument, cProfile and scalene",
        "Same workloads for every tool (see `peers.py`); torch.profiler measures the PyTorch "
        "twin of the everyo model. Times are CPU time of the process (every thread, so a tool's "
        "own threads count), one BLAS and torch thread; each profiled round includes the tool's "
        "start and stop. Slowdown: median of paired ratios profiled / unprofiled over "
        "interleaved rounds. Recorded: what the tool keeps per step, in its own unit (everyo a "
        "module call, torch.profiler an ATen op or module, viztracer a function entry, cProfile "
        "a call, pyinstrument and scalene a sample); per event: the slowdown as time per step "
        "divided by that count.",
        ["workload", "tool", "step off ms", "step on ms", "slowdown", "recorded / step",
         "ns per event"],
    )  # fmt: skip
    subset = bool(workloads or tool_names)
    rounds, seconds = (1, 0.002) if quick else (rounds or 5, 0.3)
    all_tools = [
        t
        for t in tools(s.notes, loops=True)
        if not tool_names or any(n in t.name for n in tool_names)
    ]
    slowdowns: dict[str, dict[str, float]] = {}
    with one_thread():
        for wname, make in WORKLOADS.items():
            if quick and wname not in ("deep stack (50 modules)", next(iter(LOOPS))):
                continue
            if workloads and not any(w in wname for w in workloads):
                continue
            for tool in all_tools:
                # a fresh model and optimizer per tool: one trained on by every tool in turn
                # drifts (after about 11,000 Adam steps the large MLP's step took 3.7x as long,
                # with no profiler anywhere), and later tools measured a different step
                e_step, t_step = make()
                fn = t_step if tool.model == "torch" else e_step
                if fn is None:
                    continue
                steps = _steps_for(fn, seconds)
                offs, ons, evs, unit = [], [], [], ""
                for _ in range(rounds):
                    offs.append(loop(fn, steps))
                    on, ev, unit = profiled(tool, fn, steps)
                    ons.append(on)
                    evs.append(ev / steps)
                _row(s, wname, tool.name, offs, ons, steps, median(evs), unit)
                slowdowns.setdefault(wname, {})[tool.name] = paired_ratio(ons, offs)
            if wname in LOOPS and (not tool_names or any("scalene" in n for n in tool_names)):
                _scalene_row(s, wname, rounds, _steps_for(e_step, seconds), slowdowns)
    s.notes += [_side_by_side(name, slowdowns.get(name, {})) for name in LOOPS]
    if subset:
        s.notes.append(f"A subset: {rounds} rounds; workloads {workloads}, tools {tool_names}.")
        return s
    s.notes.append(
        "Per-event figures are the difference of two step times divided by the events: where "
        "that difference is below the machine's noise they come out negative or outsized (e.g. "
        "a CNN forward with 9 events a step); the profiler table's tight-loop cost per event is "
        "the reliable per-event figure for everyo."
    )
    s.notes += sessions(tools([]), 1_000 if quick else 50_000, 0.3 if quick else 3.0)
    s.notes += off_costs(1_000 if quick else 100_000)
    return s


def _row(s, wname, tool, offs, ons, steps, per_step, unit) -> None:
    slow = paired_ratio(ons, offs) - 1
    extra = slow * median(offs) / steps  # the paired slowdown, in seconds a step
    per_event = f"{extra / per_step * 1e9:.0f}" if per_step else "–"
    s.row(wname, tool, f"{median(offs) / steps * 1e3:.3f}", f"{median(ons) / steps * 1e3:.3f}",
          f"×{1 + slow:.2f}", f"{per_step:.3g} {unit}", per_event)  # fmt: skip


def _scalene_row(s, wname, rounds, steps, slowdowns) -> None:
    r = scalene_loop(wname, rounds, steps, s.notes)
    if r is None:
        return
    samples = r.get("samples")
    per_step = samples / (rounds * steps) if samples is not None else 0.0
    name = "scalene (CPU only, 10 ms sampling; child process)"
    _row(s, wname, name, r["off"], r["on"], steps, per_step, "samples")
    slowdowns[wname][name] = paired_ratio(r["on"], r["off"])


def _side_by_side(wname: str, ratios: dict[str, float]) -> str:
    """One loop's slowdowns in a line, and the target: everyo below every peer."""
    if not ratios:
        return f"{wname}: not measured"
    ours = {k: v for k, v in ratios.items() if k.startswith("everyo (record_shapes")}
    peers = {k: v for k, v in ratios.items() if not k.startswith("everyo")}
    cells = "; ".join(f"{k} ×{v:.2f}" for k, v in ratios.items())
    if not peers or not ours:
        return f"{wname}: {cells} ({'no peer' if not peers else 'no everyo row'} measured)"
    worst, best_peer = max(ours.values()), min(peers, key=peers.get)
    met = "met" if worst < peers[best_peer] else "**missed**"
    line = (f"{wname}: {cells}. Target everyo (with and without shapes) below every peer: "
            f"{met} (everyo ×{worst:.2f} at most, the least costly peer {best_peer} "
            f"×{peers[best_peer]:.2f})")  # fmt: skip
    sampled, pyi = ratios.get("everyo (sampling 1 ms)"), ratios.get("pyinstrument (1 ms sampling)")
    if sampled is not None and pyi is not None:
        verdict = "met" if sampled < pyi else "**missed**"
        line += f"; with 1-ms sampling below pyinstrument at 1 ms: {verdict}"
    return line


def sessions(all_tools, target_events: int, max_seconds: float) -> list[str]:
    """One deep-stack session of about ``target_events`` events per tool (or ``max_seconds`` of
    it, for the sampler): memory per event while recording, export time and size."""
    e_step, t_step = deep_stack()
    lines = []
    with tempfile.TemporaryDirectory() as d, one_thread():
        for tool in all_tools:
            fn = t_step if tool.model == "torch" else e_step
            if fn is None:
                continue
            probe, ev, _ = profiled(tool, fn, 2)
            steps = max(1, int(target_events / max(ev / 2, 1)))
            if isinstance(tool, PyinstrumentTool):  # a sampler: its events are time, not calls
                steps = min(steps, max(1, int(max_seconds / max(probe / 2, 1e-9))))
            before = rss_bytes()
            tool.start()
            loop(fn, steps)
            during = rss_bytes()
            tool.stop()
            events = tool.recorded()[0]
            t0 = time.perf_counter()
            path = tool.export(os.path.join(d, "trace"))
            t_export = time.perf_counter() - t0
            size = os.path.getsize(path)
            lines.append(
                f"{tool.name}: {events:,} events in {steps:,} deep-stack steps; "
                f"{max(during - before, 0) / max(events, 1):.0f} B of resident memory per event "
                f"while recording; export {t_export:.3f} s, {size / 1e6:.1f} MB "
                f"({size / max(events, 1):.0f} B per event, `{os.path.basename(path)}`)"
            )
            with contextlib.suppress(OSError):
                os.remove(path)
    return lines


def off_costs(n: int) -> list[str]:
    """Instrumentation points with no profiler running."""

    def best(fn):
        return min(loop(fn, n) for _ in range(5)) / n * 1e9

    def rf():
        with record_function("x"):
            pass

    def nothing():
        pass

    base = best(nothing)
    lines = [f"cost when off: everyo `record_function` enter+exit {best(rf) - base:.0f} ns"]
    lin = eo.Linear(4, 4, seed=0)
    x = eo.ones(2, 4)
    lines[0] += (
        f", everyo module dispatch `m(x) - m.forward(x)` "
        f"{best(lambda: lin(x)) - best(lambda: lin.forward(x)):.0f} ns"
    )
    torch = optional("torch")
    if torch is not None:

        def trf():
            with torch.profiler.record_function("x"):
                pass

        tl = torch.nn.Linear(4, 4)
        tx = torch.ones(2, 4)
        lines[0] += (
            f"; torch `record_function` {best(trf) - base:.0f} ns, torch module dispatch "
            f"{best(lambda: tl(tx)) - best(lambda: tl.forward(tx)):.0f} ns"
        )
    lines[0] += "; viztracer, pyinstrument and cProfile add nothing until started"
    return lines


def main(argv=None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workload", action="append", help="only workloads whose name holds this")
    ap.add_argument("--tool", action="append", help="only tools whose name holds this")
    ap.add_argument("--rounds", type=int, help="interleaved rounds per tool (default 5)")
    a = ap.parse_args(argv)
    if not (a.workload or a.tool or a.rounds):
        script_main(section, __doc__, argv)
        return
    sec = section(a.quick, a.workload, a.tool, a.rounds)
    print(sec.markdown("printed, not saved"))


if __name__ == "__main__":
    main()
