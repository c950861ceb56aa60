"""The summary vocabulary is declared once: analysis, views, CLI and the front end agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from everyo.errors import EveryOProfilerError
from everyo.profiler.analysis import run_analysis as analysis
from everyo.profiler.analysis import schema

ROOT = Path(__file__).resolve().parents[2]


def test_the_front_end_constants_are_generated_from_the_schema():
    js = (ROOT / "js" / "src" / "schema.js").read_text()
    assert js == schema.js_module(), (
        "run: python -m everyo.profiler.analysis.schema > js/src/schema.js"
    )


def test_no_other_module_declares_its_own_group_by_list():
    sources = [*ROOT.joinpath("everyo").rglob("*.py"), *ROOT.joinpath("everyo_lab").rglob("*.py")]
    sources += list(ROOT.joinpath("js", "src").glob("*.js"))
    literal = ('"name", "path", "shape"', 'name: "name", path:')
    copies = [
        p.relative_to(ROOT).as_posix()
        for p in sources
        if p.name not in ("schema.py", "schema.js") and any(s in p.read_text() for s in literal)
    ]
    assert copies == []


def test_every_sort_key_and_group_is_a_column_with_a_meaning():
    keys = {c.key for c in schema.COLUMNS}
    assert set(schema.SORT_KEYS) <= keys
    assert all(c.meaning and c.header for c in schema.COLUMNS)
    assert len(keys) == len(schema.COLUMNS)
    assert analysis.GROUP_BY is schema.GROUP_BY and analysis.SORT_KEYS is schema.SORT_KEYS


@pytest.mark.parametrize("what", ["group_by", "--group-by"])
def test_a_bad_group_by_is_one_error_type_and_a_value_error(what):
    with pytest.raises(EveryOProfilerError, match=f"{what} 'colour': use one of name"):
        schema.check_group_by("colour", what)
    with pytest.raises(ValueError):
        schema.check_sort_by("nope")
