"""Checks the PyTorch adapter's tests share: event trees against ``named_modules()``."""

from __future__ import annotations


def module_events(events) -> list:
    return [e for e in events if e.kind == "module"]


def check_module_tree(events, model, root_name: str | None = None) -> set[str]:
    """Every module event under ``model``'s root event has the class name and path
    ``named_modules()`` gives, and its parent event is its parent module's (or a module of the
    same path prefix: torch modules may call modules they do not own); a module made inside a
    forward is named under its caller's path. Returns the paths of ``named_modules()`` seen."""
    named = dict(model.named_modules())
    by_row = {e.row: e for e in events}
    root = root_name or type(model).__name__
    roots = [e for e in module_events(events) if e.path == "" and e.name == root]
    assert roots, f"no root event {root!r}"
    seen = set()
    for e in module_events(events):
        top = e
        while top.parent != -1 and by_row[top.parent].kind == "module":
            top = by_row[top.parent]
        if top.name != root or top.path != "":
            continue  # another model's (a loss module called outside the model)
        if e.path not in named:  # made inside a forward (a loss): under its caller's path
            caller = by_row[e.parent].path
            assert e.path == (f"{caller}.{e.name}" if caller else e.name), e.path
            continue
        assert e.name == type(named[e.path]).__name__, (e.name, e.path)
        seen.add(e.path)
        if e.path:
            parent = by_row[e.parent]
            assert parent.kind == "module"
            prefix = parent.path + "." if parent.path else ""
            assert e.path.startswith(prefix), (e.path, parent.path)
    return seen


def parameterised_paths(model) -> set[str]:
    """Paths of the modules that own trainable parameters themselves (each gets a backward
    event); a parameter shared with an earlier module stays with that one."""
    paths, seen = set(), set()
    for path, m in model.named_modules():
        own = [p for p in m.parameters(recurse=False) if p.requires_grad]
        if own and id(own[0]) not in seen:
            paths.add(path)
        seen.update(id(p) for p in own)
    return paths


def backward_groups(events) -> list:
    """The per-module backward events, each checked to lie inside a whole pass's event."""
    by_row = {e.row: e for e in events}
    groups = [e for e in events if e.kind == "backward" and e.name != "backward"]
    for g in groups:
        parent = by_row[g.parent]
        assert (parent.kind, parent.name) == ("backward", "backward")
        assert parent.start_ns <= g.start_ns and g.end_ns <= parent.end_ns
    return groups
