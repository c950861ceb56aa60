"""The op table (issue 13 §2): every dispatched op declares its cost under the name constant its
dispatch uses, the profiler counts exact FLOPs from it, and summary rows hold plain numbers."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import numpy as np
import pytest

import everyo as eo
import everyo.core.ops as ops_pkg
import everyo.nn.functional as F
from everyo.profiler import profile
from everyo.profiler.recording import flops, hooks


def _op_modules():
    for info in pkgutil.iter_modules(ops_pkg.__path__):
        yield importlib.import_module(f"everyo.core.ops.{info.name}")


def _params(fn: ast.FunctionDef) -> list[str]:
    a = fn.args
    return [p.arg for p in a.posonlyargs + a.args] + [p.arg for p in a.kwonlyargs]


def _enclosing(tree) -> dict:
    """Each node -> the innermost function around it (None at module level)."""
    owner = {}

    def visit(node, func):
        for child in ast.iter_child_nodes(node):
            owner[child] = func
            visit(child, child if isinstance(child, ast.FunctionDef) else func)

    visit(tree, None)
    return owner


def _resolve(module, tree, func: ast.FunctionDef, name: str, depth: int = 0) -> set:
    """The op names a parameter ``name`` of ``func`` takes at its call sites in ``module``
    (following one factory into another, as ``zeros_like -> _like -> _filled``)."""
    assert depth < 4, f"{module.__name__}.{func.name}: op name passed through too many calls"
    pos = _params(func).index(name)
    owner = _enclosing(tree)
    found = set()
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and getattr(call.func, "id", None) == func.name):
            continue
        arg = next((k.value for k in call.keywords if k.arg == name), None)
        if arg is None and pos < len(call.args):
            arg = call.args[pos]
        assert isinstance(arg, ast.Name), (
            f"{module.__name__}: {func.name}() gets its op name as {ast.dump(arg)}; pass the "
            f"declared constant"
        )
        outer = owner[call]
        if outer is not None and arg.id in _params(outer):
            found |= _resolve(module, tree, outer, arg.id, depth + 1)
        else:
            found.add(getattr(module, arg.id))
    return found


def dispatched_names() -> dict[str, set]:
    """Every op name that reaches ``dispatch`` (or a fast entry), by module, read from the
    source: the first argument of each ``dispatch``/``binary``/``unary``/``reflected``/
    ``reduction`` call, resolved to the constant it is."""
    entry_points = {"dispatch", "binary", "unary", "reflected", "reduction"}
    out = {}
    for module in _op_modules():
        tree = ast.parse(Path(module.__file__).read_text())
        owners = _enclosing(tree)
        names = set()
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) in entry_points):
                continue
            if module.__name__.endswith("_dispatch"):
                continue
            first = node.args[0]
            assert isinstance(first, ast.Name), (
                f"{module.__name__}:{node.lineno}: dispatch an op by its declared constant, "
                f"not {ast.dump(first)}"
            )
            value = getattr(module, first.id, None)
            if isinstance(value, str):
                names.add(value)
                continue
            # a parameter of the function around the call: resolve what its callers pass
            names |= _resolve(module, tree, owners[node], first.id)
        out[module.__name__] = names
    return out


def test_every_dispatched_op_is_classified():
    by_module = dispatched_names()
    names = set().union(*by_module.values())
    assert {"add", "multiply", "subtract", "divide", "negative", "power", "matmul", "relu",
            "sum", "reshape", "linear", "conv2d", "cross_entropy", "equal"} <= names  # fmt: skip
    missing = sorted(n for n in names if n not in flops.COSTS)
    assert not missing, f"ops dispatched without a declared cost: {missing}"
    for name in names:  # every cost is a formula (NO_FLOPS is an explicit zero)
        assert callable(flops.COSTS[name])


def test_declaring_one_name_with_two_costs_is_an_error():
    assert flops.declare("add", flops.ELEMENTWISE) == "add"
    with pytest.raises(ValueError, match="already declared"):
        flops.declare("add", flops.REDUCTION)


class Recorder:
    """A profiler stand-in that records each op's name and its estimate."""

    record_ops = True

    def __init__(self):
        self.ops = []

    def op_call(self, name, fn, args, kwargs):
        out = fn(*args, **kwargs)
        self.ops.append((name, *flops.estimate(name, args, kwargs, out)))
        return out

    def scope(self):
        return None


def counted(fn):
    rec = Recorder()
    hooks.set_active(rec)
    try:
        fn()
    finally:
        hooks.set_active(None)
    return rec.ops


A = eo.ones(8, 8)
B = eo.full((8, 8), 2.0)


@pytest.mark.parametrize(
    "call, name, expected",
    [
        (lambda: A + B, "add", 64),
        (lambda: A - B, "subtract", 64),
        (lambda: A * B, "multiply", 64),
        (lambda: A / B, "divide", 64),
        (lambda: -A, "negative", 64),
        (lambda: A**B, "power", 64),
        (lambda: 2.0 * A, "multiply", 64),
        (lambda: A @ eo.ones(8, 4), "matmul", 2 * 8 * 8 * 4),
        (lambda: F.linear(A, eo.ones(3, 8), eo.zeros(3)), "linear", 2 * 8 * 8 * 3 + 8 * 3),
        (lambda: F.linear(A, eo.ones(3, 8)), "linear", 2 * 8 * 8 * 3),
        (lambda: A.sum(), "sum", 64),
        (lambda: A.mean(axis=0), "mean", 64),
        (lambda: F.relu(A), "relu", 64),
        (lambda: F.softmax(A, dim=-1), "softmax", 5 * 64),
        (lambda: A.reshape(4, 16), "reshape", 0),
        (lambda: A == B, "equal", 64),
        (
            lambda: F.conv2d(eo.ones(2, 3, 6, 6), eo.ones(4, 3, 3, 3)),
            "conv2d",
            2 * (2 * 4 * 4 * 4) * (3 * 3 * 3),
        ),
        (lambda: F.cross_entropy(eo.ones(4, 10), eo.tensor([0, 1, 2, 3])), "cross_entropy", 240),
    ],
)
def test_exact_flops(call, name, expected):
    ops = counted(call)
    assert (name, expected) in [(n, f) for n, f, _ in ops], ops


def test_bytes_moved_are_inputs_plus_output():
    [(name, _, moved)] = counted(lambda: A + B)
    assert name == "add" and moved == 3 * 64 * 4


def test_an_op_outside_the_table_is_unknown_not_zero():
    assert flops.count_flops("mystery_op", (np.ones(3),), {}, np.ones(3)) == -1


def test_profiler_counts_the_renamed_ops_and_rows_hold_plain_numbers():
    x = eo.ones(4, 8)
    with profile(record_ops=True) as p:
        ((x * 2 - 1) / 3) ** 2 + (-x)
    rows = {r["name"]: r for r in p.summary()}
    for name in ("multiply", "subtract", "divide", "power", "negative", "add"):
        assert rows[name]["flops"] == 32, name
        assert type(rows[name]["flops"]) is int and type(rows[name]["gflops"]) is float
        assert type(rows[name]["bytes"]) is int
