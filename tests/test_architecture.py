"""The dependency rules of ARCHITECTURE.md, checked on the source: every ``import`` statement of
``everyo`` and ``everyo_lab``, lazy ones inside functions included (a lazy import is still a
dependency), parsed with ``ast``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ARCHITECTURE = ROOT / "ARCHITECTURE.md"
_NAME = re.compile(r"`([\w.]+)`")


def read_rules(text: str) -> list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]:
    """(who, what it must not import, the exceptions) of each row of ARCHITECTURE.md's table of
    dependency rules: the names in backticks of its three columns (prose around them, such as
    "(the flag)", is for the reader)."""
    section = text.split("## Dependency rules")[1].split("\n## ")[0]
    rules = []
    for line in section.splitlines():
        cells = line.strip().strip("|").split("|")
        if len(cells) != 3 or set(cells[0].strip()) <= {"-"}:
            continue
        who, banned, allowed = (tuple(_NAME.findall(cell)) for cell in cells)
        if who and banned:  # the header row has no backticks
            rules.append((who, banned, allowed))
    return rules


RULES = read_rules(ARCHITECTURE.read_text())


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, as absolute dotted names (``from a import b`` gives
    ``a.b``: ``b`` may be a submodule, and a name of ``a`` is ``a``'s dependency anyway)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            # ``from a import b`` depends on ``a.b`` (a submodule or a name of ``a``)
            found.update(base if a.name == "*" else f"{base}.{a.name}" for a in node.names)
    return found


def _within(name: str, prefixes) -> bool:
    prefixes = (prefixes,) if isinstance(prefixes, str) else prefixes
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _graph() -> dict[str, set[str]]:
    files = [*ROOT.joinpath("everyo").rglob("*.py"), *ROOT.joinpath("everyo_lab").rglob("*.py")]
    return {_module_name(p): _imports(p) for p in files}


GRAPH = _graph()


def violations(graph: dict[str, set[str]], rules=RULES) -> list[str]:
    out = []
    for who, banned, allowed in rules:
        for module, targets in graph.items():
            if not _within(module, who):
                continue
            for target in sorted(targets):
                if _within(target, banned) and not _within(target, allowed):
                    if _within(target, module) or target == "__future__":
                        continue
                    out.append(f"{module} imports {target} (rule: {who} must not import {banned})")
    return out


def test_the_source_keeps_the_dependency_rules():
    assert violations(GRAPH) == []


def test_the_rules_are_read_from_architecture_md():
    """The table is the rules: one row per package, with its exceptions (no hand copy here)."""
    by_who = {who: (banned, allowed) for who, banned, allowed in RULES}
    assert len(RULES) == 10
    engine = ("everyo.core", "everyo.nn", "everyo.optim", "everyo.data", "everyo.training")
    assert by_who[engine] == (
        ("everyo.profiler",),
        ("everyo.profiler.recording.hooks", "everyo.profiler.recording.flops"),
    )
    assert "plotly" in by_who[("everyo",)][0] and by_who[("everyo_lab.views",)][1] == (
        "everyo_lab.views",
    )
    table = "## Dependency rules\n| a | b | c |\n| --- | --- | --- |\n| `x.y` | `z` | |\n"
    assert read_rules(table) == [(("x.y",), ("z",), ())]


def test_a_broken_rule_is_reported():
    graph = {
        "everyo.nn.linear": {
            "everyo.profiler.recording.hooks",
            "everyo.profiler.analysis.run_analysis",
        },
        "everyo_lab.views.table.table_rows": {
            "everyo.profiler.analysis.schema",
            "everyo_lab.widgets.dashboard",
        },
        "everyo.profiler.storage.run": {"everyo.bench.environment"},
    }
    found = violations(graph)
    assert len(found) == 3
    assert found[0].startswith("everyo.nn.linear imports everyo.profiler.analysis.run_analysis")
    assert any("views.table.table_rows imports everyo_lab.widgets" in v for v in found)
    assert any("profiler.storage.run imports everyo.bench" in v for v in found)


def test_relative_imports_resolve_to_absolute_names(tmp_path, monkeypatch):
    pkg = tmp_path / "everyo" / "profiler"
    pkg.mkdir(parents=True)
    (pkg / "x.py").write_text("from .hooks import active\nfrom .. import bench\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert _imports(pkg / "x.py") == {"everyo.profiler.hooks.active", "everyo.bench"}


@pytest.mark.parametrize(
    "module", ["everyo.profiler.storage.run", "everyo_lab.views.flame.flame_figure"]
)
def test_the_graph_covers_the_modules_the_rules_name(module):
    assert module in GRAPH and GRAPH[module]


def test_every_module_architecture_md_names_exists():
    """The rules, the compiled-code table and the file paths of ARCHITECTURE.md name modules
    and files that exist."""
    text = ARCHITECTURE.read_text()
    named = {m for m in re.findall(r"`(everyo(?:_lab)?(?:\.\w+)*)`", text)}
    assert "everyo.profiler.analysis.schema" in named
    compiled = {_module_name(p) for p in ROOT.joinpath("everyo").rglob("*.c")}  # C extensions
    assert sorted(m for m in named if m not in GRAPH and m not in compiled) == []
    paths = set(re.findall(r"`((?:everyo|everyo_lab|js)/[\w/.]+\.(?:py|c|js))`", text))
    assert paths and sorted(p for p in paths if not (ROOT / p).exists()) == []


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The modules that import each other, directly or round a longer circle: the strongly
    connected components of more than one module (lazy imports count: a circle held apart by
    an import inside a function is still one)."""
    modules = set(graph)

    def module_of(name: str) -> str:
        while name and name not in modules:  # ``from a import b``: a name of ``a``, or ``a.b``
            name = name.rpartition(".")[0]
        return name

    edges = {m: sorted({module_of(t) for t in ts} - {"", m}) for m, ts in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for root in sorted(edges):  # Tarjan's algorithm, iteratively (no recursion limit)
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(edges[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        part.append(member)
                        if member == node:
                            break
                    if len(part) > 1:
                        circles.append(sorted(part))
    return sorted(circles)


def test_no_module_imports_one_that_imports_it_back():
    """ARCHITECTURE.md: no import circles, lazy imports included (a new one fails here)."""
    assert import_circles(GRAPH) == []


def test_an_import_circle_is_found_however_long():
    graph = {
        "a": {"b.thing"},  # ``from b import thing``: b's name
        "b": {"c"},
        "c": {"a", "d"},
        "d": set(),
        "e": {"e.f"},
        "e.f": {"e"},  # a package and its module
    }
    assert import_circles(graph) == [["a", "b", "c"], ["e", "e.f"]]
    assert import_circles({"a": {"b"}, "b": set()}) == []


def shared_names(modules) -> dict[str, list[str]]:
    """Module file names (``memory``) used by more than one module, and those modules (package
    ``__init__`` files and private ``_``-prefixed helpers excepted)."""
    seen: dict[str, list[str]] = {}
    for name in modules:
        last = name.rpartition(".")[2]
        if last.startswith("_") or name in ("everyo", "everyo_lab"):
            continue
        seen.setdefault(last, []).append(name)
    return {k: sorted(v) for k, v in seen.items() if len(v) > 1 and not _packages(v)}


def _packages(names: list[str]) -> bool:
    """Whether the names are packages (``everyo.profiler.torch`` beside ``everyo.torch``...)."""
    return all(ROOT.joinpath(*n.split("."), "__init__.py").exists() for n in names)


# names that two modules share because they hold one subject on two layers (ARCHITECTURE.md)
ONE_SUBJECT = {
    "attention": "the op (core/ops) and the layer (nn) of one computation",
    "conv": "the op and the layer",
    "norm": "the op and the layer",
    "losses": "the op and the layer",
    "ops": "the engine's ops, and the torch adapter recording torch's",
    "regions": "the profiler's regions, and the torch adapter recording torch's as them",
    "profiler": "the package and its Profiler",
    "bench": "the package and its command (cli/bench.py)",
    "profile": "the command `everyo profile` and Dask's `profile_tasks`: profiling entry points",
    "export": "the file formats, and the dashboard button that writes one",
    "checks": "a package's argument checks (bench, data)",
    "sweep": "the sweep (bench/sweep.py) and the folder of its views (everyo_lab/views/sweep/)",
}


def test_no_two_modules_share_a_name():
    """ARCHITECTURE.md: one job, one module name (a second ``memory.py`` fails here); the names
    two modules share for one subject on two layers are listed, each with why."""
    shared = shared_names(GRAPH)
    assert {k: v for k, v in shared.items() if k not in ONE_SUBJECT} == {}
    assert set(ONE_SUBJECT) <= set(shared)  # (a pair that went leaves the list too)


def test_a_shared_name_is_found():
    found = shared_names({"everyo.bench.memory": set(), "everyo_lab.views.memory": set()})
    assert found == {"memory": ["everyo.bench.memory", "everyo_lab.views.memory"]}
