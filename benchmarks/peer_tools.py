"""The profilers ``peers.py`` compares, behind one small interface: ``start()``, ``stop()``
(both timed: a user pays them), ``recorded()`` (events or samples, counted after the timing) and
``export(path)``. A peer that is not installed is left out with a note; nothing is estimated in
its place. scalene cannot start inside a running process (it must launch the program), so it
runs each workload in a child process of its own (``scalene_child.py``) and reports from there.

Install the peers with ``pip install -e ".[bench]"``; torch is not in that extra (CI installs
the ``dev`` extra, which includes ``bench``, and must not pull torch): install its CPU build
with ``pip install torch --index-url https://download.pytorch.org/whl/cpu``.
"""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile

from suite import optional

from everyo.profiler import Profiler, RunRegistry

HERE = os.path.dirname(os.path.abspath(__file__))


class EveryoTool:
    model = "everyo"

    def __init__(self, shapes: bool, sample_ms: float | None = None):
        self.shapes, self.sample_ms = shapes, sample_ms
        self.name = f"everyo (record_shapes={shapes})"
        if sample_ms:
            self.name = f"everyo (sampling {sample_ms:g} ms)"

    def start(self):
        self.p = Profiler(record_shapes=self.shapes, registry=RunRegistry(), sample=self.sample_ms)
        self.p.start()

    def stop(self):
        self.p.stop()

    def recorded(self) -> tuple[int, str]:
        run = self.p.run
        if self.sample_ms:
            return (len(run.samples) if run.samples is not None else 0), "samples"
        return run.num_events, "events"

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

    def stop(self):
        self.p.__exit__(None, None, None)

    def recorded(self) -> tuple[int, str]:
        return len(self.p.events()), "events"

    def export(self, path):
        self.p.export_chrome_trace(path + ".json")
        return path + ".json"


class VizTool:
    model = "everyo"
    name = "viztracer"

    def __init__(self, viztracer):
        self.mod = viztracer

    def start(self):
        self.p = self.mod.VizTracer(verbose=0, tracer_entries=4_000_000, register_global=False)
        self.p.start()

    def stop(self):
        self.p.stop()

    def recorded(self) -> tuple[int, str]:
        return int(self.p.parse()), "events"

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

    def stop(self):
        self.p.stop()

    def recorded(self) -> tuple[int, str]:
        return int(self.p.last_session.sample_count), "samples"

    def export(self, path):
        self.p.last_session.save(path + ".pyisession")
        return path + ".pyisession"


class CProfileTool:
    model = "everyo"
    name = "cProfile"

    def start(self):
        self.p = cProfile.Profile()
        self.p.enable()

    def stop(self):
        self.p.disable()

    def recorded(self) -> tuple[int, str]:
        return int(pstats.Stats(self.p).total_calls), "calls"

    def export(self, path):
        self.p.dump_stats(path + ".prof")
        return path + ".prof"


def tools(notes: list, loops: bool = False) -> list:
    """The in-process tools, everyo's first; ``loops`` adds everyo's 1-ms stack sampling."""
    out = [EveryoTool(True), EveryoTool(False)]
    if loops:
        out.append(EveryoTool(True, sample_ms=1.0))
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
            notes.append(f"{name} is not installed (`pip install -e .[bench]`): skipped")
    out.append(CProfileTool())
    return out


def scalene_loop(workload: str, rounds: int, steps: int, notes: list) -> dict | None:
    """scalene (CPU only, its default 10-ms sampling) on ``workload`` in a child process:
    ``{"off": [...], "on": [...], "samples": n}`` (CPU seconds per round), or None."""
    if optional("scalene") is None:
        notes.append("scalene is not installed (`pip install -e .[bench]`): skipped")
        return None
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "profile.json")
        child = os.path.join(HERE, "scalene_child.py")
        cmd = [sys.executable, "-m", "scalene", "run", "--cpu-only", "--off", "-o", out,
               child, "---", workload, str(rounds), str(steps)]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE, timeout=900)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode or not lines:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            notes.append(f"scalene failed on {workload} ({proc.returncode}): {tail[0]}")
            return None
        result = json.loads(lines[-1])
        try:
            with open(out) as f:
                stacks = json.load(f).get("stacks", [])
            result["samples"] = sum(int(s[1].get("count", 0)) for s in stacks)
        except (OSError, ValueError, IndexError, AttributeError):
            result["samples"] = None
    return result
