"""The one spelling of a row's label, and reading it back: a name shown is a name accepted.

Views show a module as its class name qualified by its path, ``"Conv2d [features.3]"``, and its
backward work as ``"Conv2d [features.3] (backward)"``; a region is its name. Whatever a view
shows, :func:`matches` accepts back where the API or a lab asks for a module or a region: the
label, the bare class or region name, or the path.

>>> label("Conv2d", "features.3"), label("Sequential", "")
('Conv2d [features.3]', 'Sequential')
>>> matches("RowScale [1]", {"name": "RowScale", "path": "1"}), matches("ReLU", "RowScale")
(True, False)
"""

from __future__ import annotations

import re

from everyo.errors import EveryOProfilerError

__all__ = ["label", "event_label", "parse", "matches", "find"]

BACKWARD = " (backward)"
_QUALIFIED = re.compile(r"^(?P<name>.+?)\s*[\[(](?P<path>[^\[\]()]*)[\])]$")


def label(name, path) -> str:
    """A name with its module path as a qualifier: ``"Conv2d [features.3]"``; just the name
    when the path is empty (an outermost module, a region) or is the name itself."""
    name, path = str(name), str(path or "")
    return name if not path or path == name else f"{name} [{path}]"


def event_label(kind: str, name, path) -> str:
    """:func:`label`, with a module's backward work (``"Conv2d.backward"``) read as
    ``"Conv2d [features.3] (backward)"``: the class first, as for its forward call."""
    name = str(name)
    if kind == "backward" and name.endswith(".backward"):
        return label(name[: -len(".backward")], path) + BACKWARD
    return label(name, path)


def parse(text: str) -> tuple[str, str | None]:
    """``(name, path)`` of a label as shown; path None when the text has no qualifier.

    ``"Conv2d [features.3] (backward)"`` is ``("Conv2d.backward", "features.3")``; the older
    round-bracket spelling ``"RowScale (1)"`` reads as ``"RowScale [1]"``.
    """
    text = str(text).strip()
    suffix = ""
    if text.endswith(BACKWARD):
        text, suffix = text[: -len(BACKWARD)].rstrip(), ".backward"
    found = _QUALIFIED.match(text)
    if found is None:
        return text + suffix, None
    return found["name"] + suffix, found["path"].strip()


def matches(text, row) -> bool:
    """Whether ``text`` names ``row``: a row dict (``name``, optional ``path``, ``module``,
    ``label``), or a plain name. The label, the bare name and the path are all accepted."""
    if not isinstance(text, str):
        return False
    if isinstance(row, dict):  # grouped by path, ``name`` is the path and ``module`` the class
        path = str(row.get("path") or "")
        name = {str(row.get("name", "")), str(row.get("module") or row.get("name", ""))}
        shown = str(row.get("label") or "")
    else:
        name, path, shown = {str(row)}, "", ""
    text = text.strip()
    if not text:
        return False
    if text == shown or text in name or text == path:
        return True
    given, given_path = parse(text)
    return given in name and given_path in (None, path, "")


def find(rows, text) -> dict:
    """The row ``text`` names (see :func:`matches`); the first one, as the rows are sorted.

    Raises :class:`EveryOProfilerError` listing the labels there are when none matches."""
    for row in rows:
        if matches(text, row):
            return row
    shown = [
        row.get("label")
        or event_label(row.get("kind", ""), row.get("module") or row.get("name"), row.get("path"))
        for row in rows
    ]
    listed = ", ".join(repr(s) for s in shown[:12]) + (", ..." if len(shown) > 12 else "")
    raise EveryOProfilerError(
        f"no row is named {text!r}; the rows are {listed or 'none'}: use one of these labels, "
        "a class or region name, or a module path"
    )
