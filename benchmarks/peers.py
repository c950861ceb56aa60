"""Profiler cost against the peers on the same workloads: everyo, torch.profiler (the equivalent
PyTorch model, with and without ``record_shapes``), viztracer, pyinstrument and cProfile.

    python benchmarks/peers.py [--quick]      (the same as: run.py --only peers)

Workloads: a deep stack of small module calls (50 ``Linear(4, 4)`` in a ``Sequential``, batch
2), an MLP training step (32x64-64-10, Adam) and a CNN forward (batch 8, 3x32x32). everyo,
viztracer, pyinstrument and cProfile profile the everyo model; torch.profiler profiles the same
model in PyTorch (same shapes and weights), whose events are ATen ops rather than modules.

For each tool and workload: the step unprofiled and profiled (rounds interleaved; the slowdown is
the median of paired ratios), events recorded per step, and the extra time per event. Then one
session of the deep stack sized to about the same number of events for every tool: resident
memory added per event while recording, the export's time and file size. "Cost when off": what
an instrumentation point costs with no profiler running. A peer that is not installed is skipped
with a note; nothing is estimated in its place.
"""

from __future__ import annotations

import contextlib
import cProfile
import os
import pstats
import tempfile
import time

import numpy as np
from suite import Section, median, one_thread, optional, paired_ratio, rss_bytes, script_main

import everyo as eo
from everyo.profiler import Profiler, RunRegistry, record_function

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


def mlp_step():
    from engine_step import MLPS, build

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


WORKLOADS = {
    "deep stack (50 modules)": deep_stack,
    "MLP step": mlp_step,
    "CNN forward": cnn_forward,
}


# ---- tools: start(), stop() -> events, export(path) -------------------------------------------
class EveryoTool:
    model = "everyo"

    def __init__(self, shapes: bool):
        self.name = f"everyo (record_shapes={shapes})"
        self.shapes = shapes

    def start(self):
        self.p = Profiler(record_shapes=self.shapes, registry=RunRegistry())
        self.p.start()

    def stop(self) -> int:
        self.p.stop()
        return self.p.run.num_events

    def export(self, path):
        self.p.export_chrome_trace(path + ".json")
        return path + ".json"


class TorchTool:
    model = "torch"

    def __init__(self, torch, shapes: bool):
        self.torch, self.shapes = torch, shapes
        self.name = f"torch.profiler (record_shapes={shapes})"

    def start(self):
        tp = self.torch.profiler
        self.p = tp.profile(activities=[tp.ProfilerActivity.CPU], record_shapes=self.shapes)
        self.p.__enter__()

    def stop(self) -> int:
        self.p.__exit__(None, None, None)
        return len(self.p.events())

    def export(self, path):
        self.p.export_chrome_trace(path + ".json")
        return path + ".json"


class VizTool:
    model = "everyo"
    name = "viztracer"

    def __init__(self, viztracer):
        self.mod = viztracer

    def start(self):
        self.p = self.mod.VizTracer(verbose=0, tracer_entries=2_000_000, register_global=False)
        self.p.start()

    def stop(self) -> int:
        self.p.stop()
        return int(self.p.parse())

    def export(self, path):
        self.p.save(path + ".json", verbose=0)
        return path + ".json"


class PyinstrumentTool:
    model = "everyo"
    name = "pyinstrument (1 ms sampling)"

    def __init__(self, pyinstrument):
        self.mod = pyinstrument

    def start(self):
        self.p = self.mod.Profiler(interval=0.001)
        self.p.start()

    def stop(self) -> int:
        self.p.stop()
        return int(self.p.last_session.sample_count)

    def export(self, path):
        self.p.last_session.save(path + ".pyisession")
        return path + ".pyisession"


class CProfileTool:
    model = "everyo"
    name = "cProfile"

    def start(self):
        self.p = cProfile.Profile()
        self.p.enable()

    def stop(self) -> int:
        self.p.disable()
        return int(pstats.Stats(self.p).total_calls)

    def export(self, path):
        self.p.dump_stats(path + ".prof")
        return path + ".prof"


def tools(notes: list) -> list:
    out = [EveryoTool(True), EveryoTool(False)]
    torch = optional("torch")
    if torch is not None:
        out += [TorchTool(torch, False), TorchTool(torch, True)]
    else:
        notes.append("torch is not installed: torch.profiler skipped")
    for name, cls in (("viztracer", VizTool), ("pyinstrument", PyinstrumentTool)):
        mod = optional(name)
        if mod is not None:
            out.append(cls(mod))
        else:
            notes.append(f"{name} is not installed: skipped")
    out.append(CProfileTool())
    return out


def loop(fn, steps: int) -> float:
    """CPU seconds of the process (all its threads: a tool's own threads count) for ``steps``."""
    t0 = time.process_time()
    for _ in range(steps):
        fn()
    return time.process_time() - t0


def profiled(tool, fn, steps: int) -> tuple[float, int]:
    """Seconds of ``steps`` steps under ``tool`` (start and stop not counted), and its events."""
    tool.start()
    try:
        t = loop(fn, steps)
    finally:
        events = tool.stop()
    return t, events


def section(quick: bool = False) -> Section:
    s = Section(
        "peers",
        "Profiler cost against torch.profiler, viztracer, pyinstrument and cProfile",
        "Same workloads for every tool (see `peers.py`); torch.profiler measures the PyTorch "
        "twin of the everyo model. Times are CPU time of the process (every thread, so a tool's "
        "own threads count). Slowdown: median of paired ratios profiled / unprofiled over "
        "interleaved rounds. Per event: that slowdown, as time per step, divided by the events "
        "the tool recorded per step (its own unit: everyo a module call, torch.profiler an ATen "
        "op or module, viztracer and cProfile a Python or C function call, pyinstrument a "
        "sample).",
        [
            "workload",
            "tool",
            "step off ms",
            "step on ms",
            "slowdown",
            "events / step",
            "ns per event",
        ],  # fmt: skip
    )
    rounds, steps = (1, 2) if quick else (7, 10)
    all_tools = tools(s.notes)
    with one_thread():
        for wname, make in WORKLOADS.items():
            if quick and wname != "deep stack (50 modules)":
                continue
            e_step, t_step = make()
            for tool in all_tools:
                fn = t_step if tool.model == "torch" else e_step
                if fn is None:
                    continue
                fn()
                offs, ons, evs = [], [], []
                for _ in range(rounds):
                    offs.append(loop(fn, steps))
                    on, ev = profiled(tool, fn, steps)
                    ons.append(on)
                    evs.append(ev / steps)
                slow = paired_ratio(ons, offs) - 1
                per_step = median(evs)
                extra = slow * median(offs) / steps  # the paired slowdown, in seconds a step
                per_event = f"{extra / per_step * 1e9:.0f}" if per_step else "–"
                s.row(wname, tool.name, f"{median(offs) / steps * 1e3:.3f}",
                      f"{median(ons) / steps * 1e3:.3f}", f"{slow * 100:+.0f} %",
                      f"{per_step:.0f}", per_event)  # fmt: skip
    s.notes.append(
        "Per-event figures are the difference of two step times divided by the events: where "
        "that difference is below the machine's noise they come out negative or outsized (e.g. "
        "a CNN forward with 9 events a step); the profiler table's tight-loop cost per event is "
        "the reliable per-event figure for everyo."
    )
    s.notes += sessions(all_tools, 1_000 if quick else 50_000, 0.3 if quick else 3.0)
    s.notes += off_costs(1_000 if quick else 100_000)
    return s


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
            probe, ev = profiled(tool, fn, 2)
            steps = max(1, int(target_events / max(ev / 2, 1)))
            if isinstance(tool, PyinstrumentTool):  # a sampler: its events are time, not calls
                steps = min(steps, max(1, int(max_seconds / max(probe / 2, 1e-9))))
            before = rss_bytes()
            tool.start()
            loop(fn, steps)
            during = rss_bytes()
            events = tool.stop()
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
    script_main(section, __doc__, argv)


if __name__ == "__main__":
    main()
