"""Text of :class:`~everyo.profiler.sampled_lines.HotLines`: the hot lines, then the call tree.

What ``print(hot_lines(...))`` and ``python -m everyo profile --sample`` show::

    hot lines of 'DataLoader.next': 40 calls, 812.4 ms; 790 samples at 1 ms (wall time)
       self   total  line
      61.5%   61.5%  data.py:14  __getitem__  total += math.sqrt(v) ...
"""

from __future__ import annotations

import os

TREE_MIN_SHARE = 0.01  # call-tree nodes below 1 % of the event are left out of the text
TREE_MAX_DEPTH = 16


def _where(row: dict) -> str:
    if not row["file"]:
        return row["function"]
    return f"{os.path.basename(row['file'])}:{row['line']}  {row['function']}"


def _source(row: dict, width: int = 60) -> str:
    text = row.get("source") or ""
    return text if len(text) <= width else text[: width - 3] + "..."


def render(hot, lines: int = 10, tree: bool = True) -> str:
    """The text of ``hot`` (a :class:`HotLines`): up to ``lines`` lines, then the tree."""
    every = f" at {hot.interval_ms:g} ms" if hot.interval_ms else ""
    head = (
        f"hot lines of {hot.event!r}: {hot.calls:,} calls, {hot.event_ns / 1e6:,.1f} ms; "
        f"{hot.samples:,} samples{every} ({hot.mode} time)"
    )
    if 0 < hot.effective_samples < 0.8 * hot.samples:  # a busy machine: say how far to trust
        head += f", worth {hot.effective_samples:,.0f} equal ones (some stood for long waits)"
    if not hot.lines:
        return (
            f"{head}\n  no samples inside it: it ran for less than the sampling interval; "
            "sample more often (sample=0.2) or profile a longer run"
        )
    out = [head, "     self    total  line"]
    for row in hot.lines[:lines]:
        out.append(
            f"  {row['self_share']:6.1%}  {row['total_share']:6.1%}  {_where(row)}  {_source(row)}"
        )
    if tree and hot.tree is not None:
        folded = {"everyo": "everyo's frames folded", "libraries": "library frames folded"}
        note = folded.get(hot.hide, "every frame shown")
        out.append(f"  call tree ({note}; hide=None shows every frame):")
        _tree_lines(hot.tree, 0, out)
    return "\n".join(out)


def _tree_lines(node: dict, depth: int, out: list) -> None:
    out.append(f"  {node['share']:6.1%}  {'  ' * depth}{_where(node)}  {_source(node, 50)}")
    if depth >= TREE_MAX_DEPTH:
        return
    for child in node["children"]:
        if child["share"] >= TREE_MIN_SHARE:
            _tree_lines(child, depth + 1, out)


def top_rows_text(run, rows: int = 3, lines: int = 5) -> str:
    """The hot lines of the summary's first ``rows`` rows (by total time) that hold samples:
    what ``python -m everyo profile --sample`` prints after the table and the magic shows
    under its dashboard; a line saying so when no sample fell inside an event."""
    from everyo.profiler.analysis import summarize
    from everyo.profiler.sampled_lines import hot_lines

    parts = []
    for row in summarize(run, top=rows):
        hot = hot_lines(run, row["name"], top=lines)
        if hot.samples:
            parts.append(render(hot, lines=lines, tree=False))
    return "\n\n".join(parts) or "no stack samples fell inside the recorded events"
