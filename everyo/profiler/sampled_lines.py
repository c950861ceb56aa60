"""``hot_lines(run, event)``: why an event is slow, from the stack samples taken inside it.

The answer is the call tree of the event's samples, line by line, and the lines that spent the
most time themselves, each with its share of the event's sampled time. everyo's own frames
(the engine, the profiler, the notebook layer) are folded by default, so a sample inside the
engine counts for the user's line that called it; ``hide=None`` shows every frame.

>>> import everyo.profiler as ep
>>> with ep.profile(sample=1) as p:
...     with ep.record_function("work"):
...         total = sum(i * i for i in range(200_000))
>>> hot = ep.hot_lines(p.run, "work")
>>> hot.event, hot.calls
('work', 1)
"""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass, field
from importlib.util import find_spec

import numpy as np

from everyo.errors import EveryOProfilerError
from everyo.profiler.attribution import inside, outermost_time, owners, require_samples
from everyo.profiler.attribution import select_rows as _select

HIDE = ("everyo", "libraries", None)


@dataclass
class HotLines:
    """The hot lines of one event (or every event of one name).

    ``effective_samples``: how many equal-weight samples the weighted ones are worth,
    ``(sum w)^2 / sum w^2`` (Kish): a share ``p`` has a standard error of about
    ``sqrt(p (1 - p) / effective_samples)``; on a busy machine a few samples taken after long
    waits for a core weigh much more than the rest, and this falls well below ``samples``.
    ``lines`` rows: ``file, line, function, source, self_ns, total_ns, self_share,
    total_share`` (shares of the event's sampled time), by ``self_ns`` descending;
    ``tree``: nested ``{"file", "line", "function", "total_ns", "self_ns", "share",
    "children"}``: a root for the event (``file`` empty, ``function`` the event's name) whose
    children start at the deepest frame every sample shares.
    """

    event: str
    calls: int
    event_ns: int
    samples: int
    sampled_ns: int
    mode: str
    interval_ms: float | None
    hide: str | None
    effective_samples: float = 0.0
    lines: list = field(default_factory=list)
    tree: dict | None = None

    @property
    def top_line(self) -> dict | None:
        """The line that spent the most time itself (``None`` without samples)."""
        return self.lines[0] if self.lines else None

    def __str__(self) -> str:
        from everyo.profiler.sampled_lines_text import render

        return render(self)


def frame_filter(frames: list, hide: str | None) -> np.ndarray:
    """Which frames are folded: everyo's own (``"everyo"``), also the standard library's and
    installed packages' (``"libraries"``), or none (``None``)."""
    _check_hide(hide)
    if hide is None:
        return np.zeros(len(frames), bool)
    roots = [_package_dir("everyo"), _package_dir("everyo_lab")]
    if hide == "libraries":
        import sysconfig

        paths = sysconfig.get_paths()
        roots += [paths["stdlib"], paths["purelib"], paths["platlib"]]
    roots = tuple(os.path.join(r, "") for r in roots if r)
    hidden = [f[0].startswith(roots) for f in frames]
    if hide == "libraries":
        hidden = [h or f[0].startswith("<frozen") for h, f in zip(hidden, frames)]
    return np.array(hidden, bool)


def _check_hide(hide) -> None:
    if hide not in HIDE:
        raise EveryOProfilerError(f"hide={hide!r}: use 'everyo' (default), 'libraries' or None")


def _package_dir(name: str) -> str | None:
    spec = find_spec(name)  # (finds the package without importing it)
    return os.path.dirname(spec.origin) if spec is not None and spec.origin else None


def hot_lines(
    run,
    event,
    *,
    mode: str | None = None,
    hide: str | None = "everyo",
    self_only: bool = False,
    top: int | None = 10,
    step: int | None = None,
) -> HotLines:
    """The hot lines and call tree of ``event``'s stack samples.

    Parameters
    ----------
    run : Run
        A run profiled with ``sample=`` (a profiler's ``p.run``, ``runs[...]``, ``load(...)``).
    event : str, int, list of int or None
        An event name (every event of that name: a summary row), row numbers, or ``None``
        for the whole run (every sample, in an event or not: code that records no events).
    mode : str, optional
        ``"wall"`` or ``"cpu"``: weigh samples by wall or CPU time (default: the run's
        ``sample_mode``).
    hide : str or None
        ``"everyo"`` (default) folds everyo's own frames, ``"libraries"`` also the standard
        library's and installed packages', ``None`` shows every frame.
    self_only : bool
        Only samples whose innermost event is ``event`` (not one of its children).
    top : int or None
        Lines kept in ``lines`` (``None``: all).
    step : int, optional
        Only the samples of training step ``step`` (0-based, between the run's step marks:
        ``profiler.step()``); with ``event=None``, the whole step.
    """
    samples = require_samples(run)
    _check_hide(hide)
    mode = mode or run.options.get("sample_mode") or "wall"
    if mode not in ("wall", "cpu"):
        raise EveryOProfilerError(f"mode={mode!r}: use 'wall' or 'cpu'")
    cols = samples.read()
    if event is None:  # the whole run: every sample, inside an event or not
        hit = np.ones(len(cols["t_ns"]), bool)
        label, calls, event_ns = "the run", 1, run.wall_ns
        if step is not None:
            lo, hi = step_window(run, step)
            label, event_ns = f"step {step}", hi - lo
    else:
        batch = run.snapshot()
        selected = _select(batch, event)
        hit = inside(batch, owners(batch, cols["t_ns"], cols["tid"]), selected, self_only)
        calls, event_ns = outermost_time(batch, selected)
        label = event if isinstance(event, str) else str(batch.name[selected][0])
    if step is not None:
        lo, hi = step_window(run, step)
        hit &= (cols["t_ns"] >= lo) & (cols["t_ns"] < hi)
    weight = _weights(cols, hit, mode)
    out = HotLines(
        label,
        calls,
        event_ns,
        int(hit.sum()),
        int(weight.sum()),
        mode,
        run.options.get("sample_ms"),
        hide,
    )
    if out.sampled_ns > 0:
        w = weight.astype(np.float64)
        out.effective_samples = float(w.sum() ** 2 / (w * w).sum())
        # one entry per distinct stack, its samples' weights summed: the tree and the lines
        # then cost the number of distinct stacks, not of samples (an hour at 1 ms: 3.6 M)
        ids, inverse = np.unique(cols["stack"][hit], return_inverse=True)
        weight = np.bincount(inverse, weights=weight).astype(np.int64)
        out.tree, out.lines = summarize_stacks(
            samples, ids, weight, hide=hide, label=label, top=top
        )
    return out


def summarize_stacks(
    samples, stack_ids, weights, *, hide: str | None = "everyo", label: str = "", top=10
) -> tuple[dict | None, list]:
    """The call tree and the hot lines (as in :class:`HotLines`) of distinct stacks
    ``stack_ids`` of ``samples`` weighing ``weights`` ns each (zero weights left out):
    what :func:`hot_lines` computes once it has picked and summed an event's samples, for
    readers that keep those sums themselves (the live dashboard)."""
    _check_hide(hide)
    ids, weight = np.asarray(stack_ids), np.asarray(weights, np.int64)
    keep = weight > 0
    ids, weight = ids[keep], weight[keep]
    total = int(weight.sum())
    if total <= 0:
        return None, []
    stacks = _visible_stacks(samples, ids, frame_filter(samples.frames, hide))
    # the frames above the deepest one every sample shares are the caller's context (the
    # script runner, the notebook's machinery): the same for every sample, so left out
    root_at = max(_common_depth(stacks), 0)
    stacks = [s[root_at:] for s in stacks]
    tree = _tree(samples.frames, stacks, weight, total, label)
    return tree, _lines(samples.frames, stacks, weight, total)[:top]


def step_window(run, step) -> tuple[int, int]:
    """``[start, end)`` of training step ``step`` in ns from the run's start: from the previous
    step mark (or the start) to its own."""
    marks = list(run.step_ns)
    ok = isinstance(step, (int, np.integer)) and not isinstance(step, bool)
    if not ok or not 0 <= step < len(marks):
        raise EveryOProfilerError(
            f"step={step!r}: this run has {len(marks)} step(s) marked by profiler.step(); "
            + (f"give a number from 0 to {len(marks) - 1}" if marks else "mark them first")
        )
    return (marks[step - 1] if step else 0), marks[step]


def _weights(cols: dict, hit: np.ndarray, mode: str) -> np.ndarray:
    """Each sample's weight: the wall (or CPU) time since its thread's previous sample."""
    return cols["wall_ns" if mode == "wall" else "cpu_ns"][hit]


def _visible_stacks(samples, stack_ids: np.ndarray, hidden: np.ndarray) -> list[tuple]:
    cache: dict[int, tuple] = {}
    out = []
    for sid in stack_ids.tolist():
        vis = cache.get(sid)
        if vis is None:
            vis = cache[sid] = tuple(f for f in samples.frames_of(sid) if not hidden[f])
        out.append(vis)
    return out


def _frame_dict(frames: list, fid: int, name: str = "(everyo)") -> dict:
    """A frame's fields; frame -1 is a sample with every frame folded, or the tree's root."""
    file, line, function = frames[fid] if fid >= 0 else ("", 0, name)
    source = linecache.getline(file, line).strip() if fid >= 0 else ""
    return {"file": file, "line": line, "function": function, "source": source}


def _common_depth(stacks: list[tuple]) -> int:
    """Index of the deepest frame every stack shares (the tree's root), -1 if none."""
    first, shortest = stacks[0], min(len(s) for s in stacks)
    depth = 0
    while depth < shortest and all(s[depth] == first[depth] for s in stacks):
        depth += 1
    return depth - 1


def _tree(frames: list, stacks: list[tuple], weight: np.ndarray, total: int, name: str) -> dict:
    root = {"fid": -1, "w": 0, "self": 0, "kids": {}}  # the event itself
    for stack, w in zip(stacks, weight.tolist()):
        node = root
        node["w"] += w
        for fid in stack:
            node = node["kids"].setdefault(fid, {"fid": fid, "w": 0, "self": 0, "kids": {}})
            node["w"] += w
        node["self"] += w

    def finish(node) -> dict:
        kids = sorted(node["kids"].values(), key=lambda k: -k["w"])
        return {
            **_frame_dict(frames, node["fid"], name),
            "total_ns": node["w"],
            "self_ns": node["self"],
            "share": node["w"] / total,
            "children": [finish(k) for k in kids],
        }

    return finish(root)


def _lines(frames: list, stacks: list[tuple], weight: np.ndarray, total: int) -> list[dict]:
    self_w: dict[int, int] = {}
    total_w: dict[int, int] = {}
    for stack, w in zip(stacks, weight.tolist()):
        leaf = stack[-1] if stack else -1
        self_w[leaf] = self_w.get(leaf, 0) + w
        for fid in set(stack) or {-1}:
            total_w[fid] = total_w.get(fid, 0) + w
    rows = []
    for fid, tw in total_w.items():
        sw = self_w.get(fid, 0)
        row = _frame_dict(frames, fid)
        row.update(self_ns=sw, total_ns=tw, self_share=sw / total, total_share=tw / total)
        rows.append(row)
    rows.sort(key=lambda r: (-r["self_ns"], -r["total_ns"]))
    return rows
