"""Text of :class:`~everyo.profiler.sampling.sampled_lines.HotLines`: the hot lines, then the call
tree.

What ``print(hot_lines(...))`` and ``python -m everyo profile --sample`` show::

    hot lines of 'DataLoader.next': 40 calls, 812.4 ms; 790 samples at 1 ms (wall time)
       self   total  line
      61.5%   61.5%  data.py:14  __getitem__  total += math.sqrt(v) ...
"""

from __future__ import annotations

from everyo.profiler.sampling.places import place

TREE_MIN_SHARE = 0.01  # call-tree nodes below 1 % of the event are left out of the text
TREE_MAX_DEPTH = 16


def _where(row: dict) -> str:
    if not row["file"]:
        return row["function"]
    return f"{place(row['file'], row['line'])}  {row['function']}"


def plural(n: int, word: str) -> str:
    """``"1 call"``, ``"2 calls"`` (thousands separated)."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def uneven_text(hot) -> str:
    """What a reader must know when the samples weigh unevenly (a busy machine: some samples
    stood for long waits for a core), else ``""``: the shares are then as sure as from far
    fewer even samples."""
    if not 0 < hot.effective_samples < 0.8 * hot.samples:
        return ""
    return (
        f"uneven: a few samples stood for long waits, so the shares are only as sure as "
        f"{plural(round(hot.effective_samples), 'evenly spaced sample')} would make them"
    )


def head_text(hot) -> str:
    """The first line: what was sampled, how long, how many samples."""
    every = f" at {hot.interval_ms:g} ms" if hot.interval_ms else ""
    took = f"{hot.event_ns / 1e6:,.1f} ms"
    if hot.scope == "event":
        what = f"{hot.event!r}: {plural(hot.calls, 'call')}, {took}"
    else:
        what = f"{hot.event}: {took}"
    head = f"hot lines of {what}; {plural(hot.samples, 'sample')}{every} ({hot.mode} time)"
    uneven = uneven_text(hot)
    return f"{head}; {uneven}" if uneven else head


def _source(row: dict, width: int = 60) -> str:
    text = row.get("source") or ""
    return text if len(text) <= width else text[: width - 3] + "..."


def render(hot, lines: int = 10, tree: bool = True) -> str:
    """The text of ``hot`` (a :class:`HotLines`): up to ``lines`` lines, then the tree."""
    head = head_text(hot)
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


def tree_lines(tree: dict) -> list[str]:
    """The call tree's text lines: share, indented place, function, source."""
    out: list[str] = []
    _tree_lines(tree, 0, out)
    return out


def _tree_lines(node: dict, depth: int, out: list) -> None:
    out.append(f"  {node['share']:6.1%}  {'  ' * depth}{_where(node)}  {_source(node, 50)}")
    if depth >= TREE_MAX_DEPTH:
        return
    for child in node["children"]:
        if child["share"] >= TREE_MIN_SHARE:
            _tree_lines(child, depth + 1, out)


def outside_text(hot, lines: int = 10) -> str:
    """The text of :func:`~everyo.profiler.sampling.sampled_lines.outside_events`: a line saying
    what it is, the hot lines, and the call tree (the text form of its flame chart)."""
    if hot.scope == "run":
        lead = "no events recorded; where the time went, from the stack samples:"
    else:
        lead = "the time outside every event, from the stack samples:"
    return f"{lead}\n{render(hot, lines=lines)}"
