"""A run's stack samples in a Chrome trace: per thread, slices built from consecutive samples.

While consecutive samples of a thread share a frame, that frame is one slice; a frame that
appears opens a slice, one that disappears closes it, so the slices nest like the call stack
and Perfetto or chrome://tracing draw them as a flame chart under the thread's events. They are
nestable async events (``"ph": "b"``/``"e"``, category ``everyo.sample``, one id per thread),
on a track of their own: recorded events and sampled frames need not nest with each other.
everyo's own frames are folded as in :func:`everyo.profiler.hot_lines`. Readers of everyo's
traces (``load``) skip these events; the raw JSON export keeps the samples themselves. Above
``MAX_SAMPLES`` samples, every k-th is drawn (a long run at 1 ms would otherwise make a trace of
gigabytes).
"""

from __future__ import annotations

import json

import numpy as np

CATEGORY = "everyo.sample"
GAP_INTERVALS = 2  # a thread not sampled for this many intervals closes its open slices
MAX_SAMPLES = 20_000  # drawn into a trace at most (a deep stack can make dozens of events each)


def sample_events(run, pid_of_thread: dict, default_pid: int, chunk: int = 100_000):
    """The trace events of ``run``'s samples, in lists of at most ``chunk`` (none without
    samples). Above ``MAX_SAMPLES`` samples every k-th sample of each thread is drawn, so the
    trace stays one a viewer opens (the raw JSON export keeps every sample)."""
    samples = getattr(run, "samples", None)
    if samples is None or not len(samples):
        return
    from everyo.profiler.sampling.sampled_lines import Folding, place

    folding = Folding(samples.frames, "everyo")
    names = [json.dumps(f"{fn} ({place(file, line)})") for file, line, fn in samples.frames]
    cols = samples.read()
    every = -(-len(cols["t_ns"]) // MAX_SAMPLES)  # (ceiling division)
    interval_ns = int((run.options.get("sample_ms") or 1.0) * 1e6) * every
    out: list[str] = []
    for tid in np.unique(cols["tid"]).tolist():
        mine = np.flatnonzero(cols["tid"] == tid)
        mine = mine[np.argsort(cols["t_ns"][mine], kind="stable")][::every]
        head = f'"cat":"{CATEGORY}","id":"{tid:#x}","pid":{pid_of_thread.get(tid, default_pid)}'
        head += f',"tid":{tid}'
        for ph, fid, t in _stream(
            samples, cols["t_ns"][mine], cols["stack"][mine], folding, interval_ns
        ):
            out.append(f'{{"ph":"{ph}",{head},"name":{names[fid]},"ts":{_us(t)}}}')
            if len(out) >= chunk:
                yield out
                out = []
    if out:
        yield out


def _us(ns: int) -> str:
    ns = max(int(ns), 0)
    return f"{ns // 1000}.{ns % 1000:03d}"


def _stream(samples, t_ns: np.ndarray, stacks: np.ndarray, folding, interval_ns: int):
    """``(phase, frame id, time)`` of one thread's slices in time order: at each change of
    stack, the frames that left close innermost first, then the new ones open outermost
    first (so equal times still nest)."""
    cache: dict[int, list[int]] = {}
    opened: list[int] = []  # frame ids of the open slices, outermost first
    out: list[tuple[str, int, int]] = []
    last = None
    for t, sid in zip(t_ns.tolist(), stacks.tolist()):
        frames = cache.get(sid)
        if frames is None:
            frames = cache[sid] = folding.visible(samples.frames_of(sid))
        if last is not None and t - last > GAP_INTERVALS * interval_ns:
            _close(opened, 0, last + interval_ns, out)  # not sampled for a while: end there
        keep = 0
        while keep < len(opened) and keep < len(frames) and opened[keep] == frames[keep]:
            keep += 1
        _close(opened, keep, t, out)
        for fid in frames[keep:]:
            opened.append(fid)
            out.append(("b", fid, t))
        last = t
    if last is not None:
        _close(opened, 0, last + interval_ns, out)
    return out


def _close(opened: list, keep: int, at: int, out: list) -> None:
    while len(opened) > keep:
        out.append(("e", opened.pop(), at))
