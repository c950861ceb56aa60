"""Sampled Python stacks (issue 34): what sampling costs a training loop, beside pyinstrument at
the same intervals, and how well the samples recover planted shares and a planted hot line.

    python benchmarks/sampling.py [--quick]

Cost: the guide's MLP (32-64-16, batch 128) trained with SGD, one BLAS thread, in rounds; each
round runs every variant back to back for the same number of steps (interleaved, so machine
drift hits all alike) and measures the process's CPU time per step (``time.process_time``:
the C timer thread's, the sampling thread's and the signal handler's time included), over the
steps while the profiler runs; what starting and stopping a profiler costs is measured apart
(its own row, and the ratios over whole blocks, start and stop included). Slowdowns are
medians of the per-round ratios: everyo with sampling against everyo without (what
``sample=`` adds), and each sampler against the unprofiled loop (everyo's module events
included on its side). Rounds of their own time a step of plain Python and NumPy code (no events)
with ``%%everyo_profile``'s default sampling (10 ms) against no profiler at all. The compiled
sampler is everyo's default; the Python fallback (a timer
signal and a Python handler, ``EVERYO_SAMPLER=signal``) is measured beside it.

Accuracy: a region calling three functions that spin for 3, 1.5 and 0.5 ms (60/30/10 % of its
time), sampled at 1 ms for 2 s; each function's share from the samples against its measured
share (wall mode: the recorder times each call too; CPU mode: the CPU time each call measured
itself), the planted share beside it (on a busy machine preemption moves the measured shares
away from the planted ones). Then a ``Dataset``
whose ``__getitem__`` has a planted hot line: is it the top line of ``DataLoader.next``?
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
from suite import Section, median, one_thread, optional, script_main, spread, verdict

import everyo as eo
import everyo.profiler as ep

INTERVALS_MS = (1.0, 10.0)
PLANTED = {"planted_a": 0.6, "planted_b": 0.3, "planted_c": 0.1}


# ---- cost ---------------------------------------------------------------------------------
def guide_training_step():
    model = eo.Sequential(eo.Linear(32, 64, seed=0), eo.ReLU(), eo.Linear(64, 16, seed=1))
    rng = np.random.default_rng(0)
    x = eo.tensor(rng.standard_normal((128, 32)).astype(np.float32))
    y = eo.tensor(rng.integers(0, 16, 128))
    loss_fn = eo.CrossEntropyLoss()
    opt = eo.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return step


def _variants(pyinstrument) -> dict:
    """name -> (enter, exit) around a block of steps."""

    def everyo(sample, path=None):
        def enter():
            before = os.environ.get("EVERYO_SAMPLER")
            if path is not None:
                os.environ["EVERYO_SAMPLER"] = path
            try:
                p = ep.Profiler(sample=sample, registry=ep.RunRegistry())
                p.start()
            finally:
                if path is not None:
                    os.environ.pop("EVERYO_SAMPLER")
                    if before is not None:
                        os.environ["EVERYO_SAMPLER"] = before
            if sample is not None:
                PATHS_USED.add((sample, p._sampler.main_path))
            return p

        return enter, lambda p: p.stop()

    out = {"unprofiled": (lambda: None, lambda _: None), "everyo": everyo(None)}
    for ms in INTERVALS_MS:
        out[f"everyo sample={ms:g} ms"] = everyo(ms)
    for ms in INTERVALS_MS:
        out[f"everyo sample={ms:g} ms, Python fallback"] = everyo(ms, "signal")
    floor = _timer_floor(everyo(None))
    if floor is not None:
        out["timer floor 1 ms"] = floor
    if pyinstrument is not None:
        for ms in INTERVALS_MS:

            def enter(ms=ms):
                p = pyinstrument.Profiler(interval=ms / 1000)
                p.start()
                return p

            out[f"pyinstrument {ms:g} ms"] = (enter, lambda p: p.stop())
    return out


def _timer_floor(plain):
    """everyo without sampling beside the compiled sampler's timer thread at 1 ms, waking and
    queueing nothing: what the wake-ups cost by themselves on this machine (an ablation)."""
    from everyo.profiler.sampling import sampler

    c = sampler.compiled()
    if c is None:
        return None
    enter, leave = plain

    def start():
        timer = c.MainSampler(1_000_000, 0, None, lambda frame: 0, None, 1, idle=True)
        timer.start()
        return enter(), timer

    def stop(handle):
        handle[1].stop()
        leave(handle[0])

    return start, stop


PATHS_USED: set = set()  # (interval, how the main thread was sampled) of the everyo variants


def plain_python_step():
    """Plain Python and NumPy code that records no events (what ``%%everyo_profile`` samples
    by default): a pure-Python loop and a loop of small NumPy calls."""
    a = np.random.default_rng(0).random((200, 50))

    def step():
        s = 0
        for v in range(2000):
            s += v * v
        for i in range(0, 200, 10):
            np.linalg.norm(a[i : i + 10])

    return step


def plain_variants() -> dict:
    """The magic's default on plain code: sampling at its interval, against no profiler."""
    from everyo_lab.magic import AUTO_SAMPLE_MS

    def enter():
        p = ep.Profiler(sample=AUTO_SAMPLE_MS, registry=ep.RunRegistry())
        return p.start()

    return {
        "unprofiled": (lambda: None, lambda _: None),
        "magic default": (enter, lambda p: p.stop()),
    }


def cost(rounds: int, steps: int, step=None, variants=None) -> tuple[dict, dict]:
    """CPU seconds per step of each variant, one entry per round: over the steps while the
    profiler runs, and over the whole block (start and stop included)."""
    step = step or guide_training_step()
    variants = variants or _variants(optional("pyinstrument"))
    for _ in range(steps):
        step()
    inner: dict[str, list[float]] = {k: [] for k in variants}
    whole: dict[str, list[float]] = {k: [] for k in variants}
    for r in range(rounds):
        names = list(variants)
        names = names[r % len(names) :] + names[: r % len(names)]  # rotate the order too
        for name in names:
            enter, leave = variants[name]
            t0 = time.process_time()
            handle = enter()
            t1 = time.process_time()
            for _ in range(steps):
                step()
            t2 = time.process_time()
            leave(handle)
            inner[name].append((t2 - t1) / steps)
            whole[name].append((time.process_time() - t0) / steps)
    return inner, whole


def ratios(a: list[float], b: list[float]) -> list[float]:
    return [x / y for x, y in zip(a, b)]


# ---- accuracy -----------------------------------------------------------------------------
def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


CPU_NS: dict[str, int] = {}


def planted(name: str, seconds: float) -> None:
    t0 = time.thread_time_ns()
    with ep.record_function(name):
        spin(seconds)
    CPU_NS[name] = CPU_NS.get(name, 0) + time.thread_time_ns() - t0


def planted_a():
    planted("a", 0.003)


def planted_b():
    planted("b", 0.0015)


def planted_c():
    planted("c", 0.0005)


def planted_shares(seconds: float, mode: str) -> dict:
    """Each planted function's share from the samples, against its truth: the recorded (wall)
    share in wall mode, the CPU time it measured itself in CPU mode (on a busy machine the
    process is preempted, and the two differ)."""
    CPU_NS.clear()
    with ep.profile(sample=1, sample_mode=mode, registry=ep.RunRegistry()) as p:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            with ep.record_function("region"):
                planted_a()
                planted_b()
                planted_c()
    hot = ep.hot_lines(p.run, "region", top=None)
    totals = {r["name"]: r["total_ms"] for r in p.run.summary()}
    cpu_total = sum(CPU_NS.values())
    out = {"samples": hot.samples}
    for fn in PLANTED:
        share = sum(r["total_share"] for r in hot.lines if r["function"] == fn)
        if mode == "wall":
            truth = totals[fn[-1]] / totals["region"]
        else:
            truth = CPU_NS[fn[-1]] / cpu_total
        out[fn] = (share, truth)
    return out


class SlowDataset(eo.Dataset):
    """Feature rows normalised one value at a time: the planted hot line."""

    def __init__(self, n: int):
        self.x = np.random.default_rng(0).standard_normal((n, 64)).astype(np.float32)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        row = self.x[i].tolist()
        out = [(v - 0.5) / 2.0 for v in row for _ in range(8)]  # planted hot line
        return np.asarray(out[:64], np.float32), np.int64(i % 10)


def dataloader_top_line(epochs: int) -> tuple[dict, float]:
    loader = eo.DataLoader(SlowDataset(512), batch_size=32)
    with ep.profile(sample=1, registry=ep.RunRegistry()) as p:
        for _ in range(epochs):
            for _batch in loader:
                pass
    hot = ep.hot_lines(p.run, "DataLoader.next")
    return hot.top_line, hot.top_line["self_share"]


# ---- the section --------------------------------------------------------------------------
def _machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"load average {load:.2f} on {os.cpu_count()} cores when the run began"


def section(quick: bool = False) -> Section:
    rounds, steps = (5, 200) if quick else (31, 1000)
    seconds = 0.5 if quick else 2.0
    machine = _machine()
    with one_thread():
        per_step, whole = cost(rounds, steps)
        plain, _ = cost(rounds, steps, plain_python_step(), plain_variants())
        shares = {mode: planted_shares(seconds, mode) for mode in ("wall", "cpu")}
        top, top_share = dataloader_top_line(1 if quick else 3)
    sec = Section(
        "sampling",
        "Sampled Python stacks: cost and accuracy",
        __doc__.split("\n\n", 2)[2].strip(),
        ["figure", "value", "spread (IQR of round ratios)", "target", "verdict"],
    )
    base, off = per_step["unprofiled"], per_step["everyo"]
    sec.row("guide MLP step, unprofiled (CPU µs)", f"{median(base) * 1e6:.1f}", "", "", "")
    sec.row(
        "everyo, no sampling / unprofiled",
        f"{median(ratios(off, base)):.3f}",
        spread(off, base),
        "",
        "",
    )
    floor = per_step.get("timer floor 1 ms")
    if floor is not None:
        sec.row(
            "timer floor: the compiled sampler's timer thread at 1 ms, queueing nothing "
            "/ everyo without sampling",
            f"{median(ratios(floor, off)):.3f}",
            spread(floor, off),
            "",
            "",
        )
    for ms, limit in zip(INTERVALS_MS, (1.05, 1.01)):
        on = per_step[f"everyo sample={ms:g} ms"]
        r = median(ratios(on, off))
        sec.row(
            f"everyo sample={ms:g} ms / everyo without sampling",
            f"{r:.3f}",
            spread(on, off),
            f"≤ {limit:.2f}",
            verdict(r, limit),
        )
        sec.row(
            f"everyo sample={ms:g} ms / unprofiled",
            f"{median(ratios(on, base)):.3f}",
            spread(on, base),
            "below pyinstrument",
            "",
        )
        pyi = per_step.get(f"pyinstrument {ms:g} ms")
        if pyi is not None:
            sec.row(
                f"pyinstrument {ms:g} ms / unprofiled",
                f"{median(ratios(pyi, base)):.3f}",
                spread(pyi, base),
                "",
                "",
            )
        fb = per_step[f"everyo sample={ms:g} ms, Python fallback"]
        sec.row(
            f"everyo sample={ms:g} ms, Python fallback / everyo without sampling",
            f"{median(ratios(fb, off)):.3f}",
            spread(fb, off),
            "",
            "",
        )
    for ms in INTERVALS_MS:
        on, woff = whole[f"everyo sample={ms:g} ms"], whole["everyo"]
        sec.row(
            f"whole blocks of {steps} steps, start and stop included: everyo sample={ms:g} ms "
            "/ everyo without sampling",
            f"{median(ratios(on, woff)):.3f}",
            spread(on, woff),
            "",
            "",
        )
    sec.row(
        "plain Python/NumPy step, unprofiled (CPU µs)",
        f"{median(plain['unprofiled']) * 1e6:.1f}",
        "",
        "",
        "",
    )
    on, base_plain = plain["magic default"], plain["unprofiled"]
    sec.row(
        "plain Python/NumPy step: %%everyo_profile's default sampling (10 ms, no events) "
        "/ unprofiled",
        f"{median(ratios(on, base_plain)):.3f}",
        spread(on, base_plain),
        "",
        "",
    )
    for name in ("everyo", "everyo sample=1 ms"):
        extra = [(w - i) * steps * 1e6 for w, i in zip(whole[name], per_step[name])]
        sec.row(f"{name}: start + stop (CPU µs)", f"{median(extra):.0f}", "", "", "")
    for mode, got in shares.items():
        for fn, planted in PLANTED.items():
            share, truth = got[fn]
            measured = "recorded" if mode == "wall" else "its CPU time"
            sec.row(
                f"{fn} share ({mode} time, 1 ms, {seconds:g} s, {got['samples']} samples)",
                f"{share:.1%} ({measured} {truth:.1%}, planted {planted:.0%})",
                "",
                "within 5 points of the measured share",
                verdict(abs(share - truth), 0.05),
            )
    where = f"{os.path.basename(top['file'])}:{top['line']} {top['function']}"
    planted_line = "planted hot line" in top["source"]
    sec.row(
        "top line of DataLoader.next (a Dataset.__getitem__ with a planted hot line)",
        f"{where} ({top_share:.0%} self)",
        "",
        "the planted line",
        "met" if planted_line else "**missed**",
    )
    used = ", ".join(f"{ms:g} ms: {path}" for ms, path in sorted(PATHS_USED))
    sec.notes.append(f"how everyo's variants sampled the main thread: {used}.")
    sec.notes.append(
        f"{rounds} rounds × {steps} steps per variant; CPU time of the whole process; "
        f"1 BLAS thread; Python {sys.version.split()[0]}; {machine} (a shared 2-core machine: "
        "other engineers' jobs ran meanwhile)."
    )
    pyi = optional("pyinstrument")
    if pyi is None:
        sec.notes.append("pyinstrument is not installed: its rows are left out.")
    else:
        sec.notes.append(f"pyinstrument {pyi.__version__}.")
    return sec


if __name__ == "__main__":
    script_main(section, __doc__)
