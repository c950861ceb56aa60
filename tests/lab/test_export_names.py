"""File names from run labels: safe, bounded and distinct (the dashboard's Export button), and
run labels that are not strings (issue 12 §3)."""

from __future__ import annotations

import doctest
import re

import pytest

import everyo.file_names
from everyo.file_names import file_name_from_label
from everyo.profiler import Profiler, record_function, runs

LABELS = [
    "train", "my run/1", "my run_1", "a b", "a/b", "a_b", "训练", "学习", "Überlauf", "🔥", "🚀",
    "..", "../etc", "-rf", "CON", "x" * 100_000, "x" * 100_001, "é" * 100_000, "e\u0301",
    "tab\there", "new\nline", "C:\\temp\\x", "<>:\"|?*",
]  # fmt: skip


def test_docstring_examples():
    result = doctest.testmod(everyo.file_names)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("label", LABELS)
def test_names_are_safe_and_bounded(label):
    name = file_name_from_label(label)
    stem = name.removesuffix(".trace.json")
    assert name.endswith(".trace.json") and stem
    assert len(name.encode("utf-8")) <= 100  # file systems allow 255 bytes
    assert re.fullmatch(r"[\w.-]+", stem) and not stem.startswith((".", "-", "_"))
    assert "/" not in name and "\\" not in name and ".." not in stem


def test_names_are_distinct_per_label_and_stable():
    names = [file_name_from_label(label) for label in LABELS]
    assert len(set(names)) == len(LABELS)
    assert names == [file_name_from_label(label) for label in LABELS]
    assert file_name_from_label("train") == "train.trace.json"  # safe labels stay readable
    assert file_name_from_label("训练") == "训练.trace.json"
    assert file_name_from_label(None) == file_name_from_label("") == "run.trace.json"
    assert file_name_from_label(123) == "123.trace.json"
    assert file_name_from_label("r", ".html") == "r.html"


pytest.importorskip("anywidget")

from everyo_lab import Dashboard  # noqa: E402


class Recording(Dashboard):
    """A dashboard that keeps what it would send to the browser."""

    def send(self, content, buffers=None):
        self.__dict__.setdefault("sent", []).append((content, buffers or []))


@pytest.fixture(autouse=True)
def _fresh_runs():
    runs.clear()
    yield
    runs.clear()


def profiled(label):
    with Profiler(label=label) as p:
        for _ in range(5):
            with record_function("step"):
                pass
    return p.run


def _export(run, folder):
    board = Recording(run, export_dir=folder)
    board._on_message(board, {"type": "export"}, [])
    assert board.export_status.startswith("wrote"), board.export_status
    ((content, buffers),) = [c for c in board.sent if c[0]["type"] == "download"]
    return folder / content["filename"], bytes(buffers[0])


def test_export_of_a_100000_character_label_writes_a_file(tmp_path):
    path, data = _export(profiled("x" * 100_000), tmp_path)
    assert path.exists() and path.read_bytes() == data
    assert len(path.name) < 255


def test_non_ascii_labels_export_to_different_files(tmp_path):
    paths = [_export(profiled(label), tmp_path)[0] for label in ("训练", "学习", "🔥", "🚀")]
    assert len(set(paths)) == 4 and all(p.exists() for p in paths)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)


def test_a_label_that_is_not_a_string_becomes_one(tmp_path):
    run = profiled(123)
    assert run.label == "123" and runs["123"] is run
    board = Recording(run)
    assert board.widget_bundle()["text/plain"] == "everyo dashboard: 123"
    assert board.report["label"] == "123"
    assert "123" in board.static_bundle()["text/html"]
    assert _export(run, tmp_path)[0].name == "123.trace.json"
