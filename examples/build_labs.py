"""Build the lab notebooks from their sources: ``python examples/build_labs.py [--check]``.

Each lab has one source, ``examples/src/NN_name.py``, in the "percent" cell format. A cell
starts with a line ``# %%``, optionally followed by a kind in brackets:

- ``# %% [markdown]``: text; each line's leading ``# `` is removed.
- ``# %%``: code.
- ``# %% [exercise]``: the code a student edits (it holds a ``TODO``).
- ``# %% [solution]``: the solved version of the exercise cell just before it.
- ``# %% [check]``: a self-check cell (``lab.check(...)``).

From one source come two notebooks with the same cells: ``examples/NN_name.ipynb`` with the
exercises as given and ``examples/solutions/NN_name.ipynb`` with them solved, both without
outputs. ``--check`` rebuilds in memory and exits with 1 if a committed notebook differs (the
test suite runs the same comparison).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"
KINDS = ("code", "markdown", "exercise", "solution", "check")
HEADER = re.compile(r"^# %%(?: \[(\w+)\])?\s*$")
METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def parse(text: str, name: str = "<source>") -> list[tuple[str, str]]:
    """``[(kind, source), ...]`` of a percent-format lab source."""
    cells: list[tuple[str, list[str]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        match = HEADER.match(line)
        if match:
            kind = match.group(1) or "code"
            if kind not in KINDS:
                raise ValueError(f"{name}:{number}: unknown cell kind {kind!r}; use one of {KINDS}")
            cells.append((kind, []))
        elif cells:
            cells[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"{name}:{number}: text before the first '# %%' line")
    out = []
    for kind, lines in cells:
        if kind == "markdown":
            lines = [line[2:] if line.startswith("# ") else line.lstrip("#") for line in lines]
        out.append((kind, "\n".join(lines).strip("\n")))
    return out


def notebooks(cells: list[tuple[str, str]], name: str = "<source>") -> tuple[dict, dict]:
    """The student notebook and the solution notebook of one lab, as nbformat 4 dicts."""
    student: list[dict] = []
    solution: list[dict] = []
    for kind, source in cells:
        if kind == "solution":
            if not student or "exercise" not in student[-1]["metadata"].get("tags", []):
                raise ValueError(f"{name}: a [solution] cell must follow an [exercise] cell")
            solution[-1] = _cell("code", source, ["exercise", "solution"], len(solution) - 1)
            continue
        if kind == "exercise" and "TODO" not in source:
            raise ValueError(f"{name}: an [exercise] cell must say what to do with a TODO")
        tags = [kind] if kind in ("exercise", "check") else []
        cell_type = "markdown" if kind == "markdown" else "code"
        student.append(_cell(cell_type, source, tags, len(student)))
        solution.append(_cell(cell_type, source, tags, len(solution)))
    return _notebook(student), _notebook(solution)


def _cell(cell_type: str, source: str, tags: list[str], index: int) -> dict:
    cell = {"cell_type": cell_type, "id": f"cell-{index:02d}", "metadata": {}, "source": source}
    if tags:
        cell["metadata"]["tags"] = tags
    if cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    return cell


def _notebook(cells: list[dict]) -> dict:
    return {"cells": cells, "metadata": METADATA, "nbformat": 4, "nbformat_minor": 5}


def dumps(nb: dict) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def build(sources: Path = SOURCES) -> dict[Path, str]:
    """Every notebook's path (relative to ``examples/``) and text."""
    out: dict[Path, str] = {}
    for src in sorted(sources.glob("[0-9][0-9]_*.py")):
        student, solution = notebooks(parse(src.read_text(encoding="utf-8"), src.name), src.name)
        out[Path(src.stem + ".ipynb")] = dumps(student)
        out[Path("solutions") / (src.stem + ".ipynb")] = dumps(solution)
    return out


def stale(root: Path = HERE) -> list[str]:
    """Notebooks that are missing or differ from what their sources build."""
    return [
        str(path)
        for path, text in build().items()
        if not (root / path).exists() or (root / path).read_text(encoding="utf-8") != text
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a notebook is stale")
    args = parser.parse_args(argv)
    if args.check:
        bad = stale()
        for path in bad:
            print(f"stale: examples/{path} (run python examples/build_labs.py)")
        return 1 if bad else 0
    (HERE / "solutions").mkdir(exist_ok=True)
    for path, text in build().items():
        (HERE / path).write_text(text, encoding="utf-8")
        print(f"wrote examples/{path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
