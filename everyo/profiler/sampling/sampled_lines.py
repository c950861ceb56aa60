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

import functools
import linecache
import os
from dataclasses import dataclass, field
from importlib.util import find_spec

import numpy as np

from everyo.errors import EveryOProfilerError
from everyo.profiler.sampling.attribution import (
    covered_ns,
    inside,
    outermost_time,
    owners,
    require_samples,
)
from everyo.profiler.sampling.attribution import select_rows as _select
from everyo.profiler.sampling.places import add_file_namer, place  # noqa: F401 - re-exported

HIDE = ("everyo", "libraries", None)
RUN_LABEL = "the run"
OUTSIDE_LABEL = "time outside every event"


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
    children start at the deepest frame every sample shares. ``scope``: ``"event"`` (one
    event or a name's), ``"run"`` (every sample) or ``"outside"`` (the samples no event holds).
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
    scope: str = "event"

    @property
    def top_line(self) -> dict | None:
        """The line that spent the most time itself (``None`` without samples)."""
        return self.lines[0] if self.lines else None

    def __str__(self) -> str:
        from everyo.profiler.sampling.sampled_lines_text import render

        return render(self)


FRAMEWORKS = ("torch",)
"""Installed frameworks whose frames fold with everyo's (``hide="everyo"``): like everyo's
engine, their own frames say how a model runs, not which line of the user's asked for it."""
RUNNERS = ("<frozen runpy>",)  # the script runner (python -m everyo profile): context only
RUNNER_PACKAGES = ("IPython", "ipykernel")
"""The notebook's runners: the frames between a cell and the kernel's loop, folded like the
script runner's (context only: a cell's call tree starts at the cell, not at
``InteractiveShell.run_code``)."""


def frame_filter(frames: list, hide: str | None) -> np.ndarray:
    """Which frames are folded: everyo's own, the frameworks' (:data:`FRAMEWORKS`) and the
    script runner's (``"everyo"``), also the standard library's and installed packages'
    (``"libraries"``), or none (``None``)."""
    _check_hide(hide)
    if hide is None:
        return np.zeros(len(frames), bool)
    roots = _roots("everyo") + (_roots("libraries") if hide == "libraries" else ())
    hidden = [f[0].startswith(roots) or f[0] in RUNNERS for f in frames]
    if hide == "libraries":
        hidden = [h or f[0].startswith("<frozen") for h, f in zip(hidden, frames)]
    return np.array(hidden, bool)


def library_frames(frames: list) -> np.ndarray:
    """Which frames are the standard library's or an installed package's (everyo's and the
    frameworks' excepted)."""
    ours, libs = _roots("everyo"), _roots("libraries")
    return np.array(
        [
            not f[0].startswith(ours) and (f[0].startswith(libs) or f[0].startswith("<frozen"))
            for f in frames
        ],
        bool,
    )


class Folding:
    """The frames of a stack that ``hide`` leaves visible.

    Where folding leaves a stack ending in library frames only (NumPy's ``_sum`` under a
    backward pass), the innermost folded frame above them (everyo's operation, e.g. a matmul's
    backward) stays visible: it says which operation spent that time.
    """

    def __init__(self, frames: list, hide: str | None):
        # a copy: while the run records the sampler appends frames, and both masks must be
        # of one length (they were not: "operands could not be broadcast together")
        frames = self.frames = list(frames)
        self.hidden = frame_filter(frames, hide)
        # (visible ones only: the script runner's frozen frames are folded, not a library's)
        self.library = library_frames(frames) & ~self.hidden if hide == "everyo" else None

    def _operation(self, fid: int) -> bool:
        """Whether a folded frame is an operation's (the engine's or a framework's), not the
        runner's, the profiler's, the command line's or the notebook layer's."""
        file = self.frames[fid][0]
        return file not in RUNNERS and not file.startswith(_roots("tools"))

    def visible(self, fids: list[int]) -> list[int]:
        """The visible frame ids of a stack's ``fids`` (outermost first)."""
        hidden, library = self.hidden, self.library
        out = [f for f in fids if not hidden[f]]
        if library is None or not out or not library[out[-1]]:
            return out
        tail = len(fids)  # where the stack's trailing library frames begin
        while tail and library[fids[tail - 1]]:
            tail -= 1
        above = fids[tail - 1] if tail else -1
        if above < 0 or not hidden[above] or not self._operation(above):
            return out
        return [f for f in fids[:tail] if not hidden[f]] + [above] + fids[tail:]


def _check_hide(hide) -> None:
    if hide not in HIDE:
        raise EveryOProfilerError(f"hide={hide!r}: use 'everyo' (default), 'libraries' or None")


def _package_dir(name: str) -> str | None:
    try:
        spec = find_spec(name)  # (finds the package without importing it)
    except (ImportError, ValueError):
        return None
    return os.path.dirname(spec.origin) if spec is not None and spec.origin else None


@functools.lru_cache(maxsize=4)
def _roots(which: str) -> tuple[str, ...]:
    """The folders whose files ``which`` (``"everyo"`` or ``"libraries"``) folds, or
    everyo's measuring ``"tools"``, each ending in a separator (found once: they do not move
    while the process runs)."""
    if which == "everyo":
        names = ("everyo", "everyo_lab", *FRAMEWORKS, *RUNNER_PACKAGES)
        dirs = [_package_dir(name) for name in names]
    elif which == "tools":  # everyo's folders that measure and show, and the runners'
        ours = _package_dir("everyo")
        dirs = [_package_dir(name) for name in ("everyo_lab", *RUNNER_PACKAGES)]
        dirs += [os.path.join(ours, sub) for sub in ("cli", "profiler", "bench")] if ours else []
    else:
        import sysconfig

        paths = sysconfig.get_paths()
        dirs = [paths["stdlib"], paths["purelib"], paths["platlib"]]
    return tuple(os.path.join(d, "") for d in dirs if d)


def hot_lines(
    run,
    event,
    *,
    mode: str | None = None,
    hide: str | None = "everyo",
    self_only: bool = False,
    top: int | None = 10,
    step: int | None = None,
    outside: bool = False,
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
    outside : bool
        With ``event=None``: only the samples no recorded event holds (the time outside
        every event: plain Python and NumPy code, imports, set-up). In a run without events
        that is every sample.
    """
    samples = require_samples(run)
    _check_hide(hide)
    mode = mode or run.options.get("sample_mode") or "wall"
    if mode not in ("wall", "cpu"):
        raise EveryOProfilerError(f"mode={mode!r}: use 'wall' or 'cpu'")
    if outside and event is not None:
        raise EveryOProfilerError(
            f"outside=True takes the samples no event holds: give event=None, not {event!r}"
        )
    cols = samples.read()
    scope = "event"
    if event is None:  # the whole run (every sample, inside an event or not) or outside them
        batch = run.snapshot()
        # within the run's wall time: the magic starts the clock at the cell's first line, so
        # samples of its own set-up come before 0
        hit = (cols["t_ns"] > 0) & (cols["t_ns"] <= run.wall_ns)
        if outside and len(batch):
            hit &= owners(batch, cols["t_ns"], cols["tid"]) < 0
            label, scope = OUTSIDE_LABEL, "outside"
            event_ns = run.wall_ns - covered_ns(batch)
        else:
            label, scope, event_ns = RUN_LABEL, "run", run.wall_ns
        calls = 1
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
        scope=scope,
    )
    if out.sampled_ns > 0:
        w = weight.astype(np.float64)
        out.effective_samples = float(w.sum() ** 2 / (w * w).sum())
        # one entry per distinct stack, its samples' weights summed: the tree and the lines
        # then cost the number of distinct stacks, not of samples (an hour at 1 ms: 3.6 M)
        ids, inverse = np.unique(cols["stack"][hit], return_inverse=True)
        weight = np.bincount(inverse, weights=weight).astype(np.int64)
        out.tree, out.lines = summarize_stacks(
            samples,
            ids,
            weight,
            hide=hide,
            label=label,
            top=top,
            from_module=scope != "event" and step is None,
        )
    return out


OUTSIDE_MIN_SHARE = 0.1
"""A run with events shows the sampled time outside them once it is this share of the
sampled time or more (a run without events shows all of it)."""


MODULE_REACH = 3  # (a test runner's <module>, far above, is not the user's top level)


def outside_events(run, *, hide: str | None = "everyo", top: int | None = 10):
    """:func:`hot_lines` of the time outside every event (a run without events: the whole run)
    when the run has samples there worth reading (:data:`OUTSIDE_MIN_SHARE`), else ``None``:
    where the time went that no event names, as the summary, the CLI and the dashboard show it.
    """
    samples = getattr(run, "samples", None)
    if samples is None or not len(samples) or getattr(run, "status", "") == "running":
        return None
    hot = hot_lines(run, None, hide=hide, top=top, outside=True)
    if not hot.sampled_ns or hot.tree is None:
        return None
    if hot.scope == "outside" and outside_share(run, hot) < OUTSIDE_MIN_SHARE:
        return None
    return hot


def outside_share(run, hot) -> float:
    """The share of ``run``'s sampled time that ``hot`` (:func:`hot_lines` with
    ``outside=True``) holds: what :func:`outside_events` compares with
    :data:`OUTSIDE_MIN_SHARE`, and the dashboard's link to that panel says."""
    mode = "wall_ns" if hot.mode == "wall" else "cpu_ns"
    whole = int(run.samples.read()[mode].sum())
    return hot.sampled_ns / whole if whole > 0 else 0.0


def summarize_stacks(
    samples,
    stack_ids,
    weights,
    *,
    hide: str | None = "everyo",
    label: str = "",
    top=10,
    from_module: bool = False,
) -> tuple[dict | None, list]:
    """The call tree and the hot lines (as in :class:`HotLines`) of distinct stacks
    ``stack_ids`` of ``samples`` weighing ``weights`` ns each (zero weights left out):
    what :func:`hot_lines` computes once it has picked and summed an event's samples, for
    readers that keep those sums themselves (the live dashboard). ``from_module``: a tree
    whose shared frames end a few calls (:data:`MODULE_REACH`) below a ``<module>`` frame
    starts there, at the script's or the cell's top level (as pyinstrument's does)."""
    _check_hide(hide)
    ids, weight = np.asarray(stack_ids), np.asarray(weights, np.int64)
    keep = weight > 0
    ids, weight = ids[keep], weight[keep]
    total = int(weight.sum())
    if total <= 0:
        return None, []
    stacks = _visible_stacks(samples, ids, Folding(samples.frames, hide))
    # the frames above the deepest one every sample shares are the caller's context (the
    # script runner, the notebook's machinery): the same for every sample, so left out
    root_at = max(_common_depth(stacks), 0)
    if from_module:  # the script's or the cell's top level is where its reader starts
        # (every frame of a sample spent inside everyo is folded: its stack can be empty)
        first = max(stacks, key=len)[: root_at + 1]
        near = range(min(root_at, len(first) - 1), max(root_at - MODULE_REACH, -1), -1)
        root_at = next((i for i in near if samples.frames[first[i]][2] == "<module>"), root_at)
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


def _visible_stacks(samples, stack_ids: np.ndarray, folding: Folding) -> list[tuple]:
    cache: dict[int, tuple] = {}
    out = []
    for sid in stack_ids.tolist():
        vis = cache.get(sid)
        if vis is None:
            vis = cache[sid] = tuple(folding.visible(samples.frames_of(sid)))
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
