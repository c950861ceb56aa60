"""Temporary files of atomic writes that a killed writer left (issue 36): the next write to the
folder removes them once their process is gone, and interpreter exit removes this process's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from everyo.fileio import write_text


def _dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(proc.stdout)


def _leftover(folder, pid: int, age_s: float, name="trace.json"):
    path = folder / f".{name}.{pid}-{os.urandom(4).hex()}.tmp"
    path.write_bytes(b"x" * 1000)
    then = time.time() - age_s
    os.utime(path, (then, then))
    return path


@pytest.mark.skipif(os.name == "nt", reason="process ids are checked with os.kill(pid, 0)")
def test_the_next_write_removes_what_a_killed_writer_left(tmp_path):
    old = 3600.0  # an hour: far older than any writer leaves its file unchanged
    dead = _dead_pid()
    stale = _leftover(tmp_path, dead, old)
    stale_other_name = _leftover(tmp_path, dead, old, name="report.html")
    # maybe a writer on another machine, still changing (of another target: see below)
    fresh = _leftover(tmp_path, dead, 0, name="report.html")
    alive = _leftover(tmp_path, os.getppid(), old)  # its process still runs
    unrelated = tmp_path / ".cache.tmp"
    unrelated.write_text("not ours")
    write_text(tmp_path / "trace.json", "{}")
    left = {p.name for p in tmp_path.iterdir()}
    assert stale.name not in left and stale_other_name.name not in left
    assert {fresh.name, alive.name, unrelated.name, "trace.json"} <= left


def test_interpreter_exit_removes_the_temporary_file_a_thread_was_writing(tmp_path):
    script = textwrap.dedent(
        """
        import sys, threading, time
        from everyo.fileio import atomic_open
        started = threading.Event()
        def write():
            with atomic_open(sys.argv[1]) as f:
                f.write("half")
                started.set()
                time.sleep(60)  # still writing when the program ends
        threading.Thread(target=write, daemon=True).start()
        started.wait()
        """
    )
    target = tmp_path / "trace.json"
    subprocess.run([sys.executable, "-c", script, str(target)], check=True, timeout=60)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.name == "nt", reason="process ids are checked with os.kill(pid, 0)")
def test_a_successful_write_removes_its_targets_temporaries_of_any_age(tmp_path):
    """Issue 44, case 9: an export killed mid-write, then exported again at once: the new file
    supersedes the killed writer's temporary, young as it is (it waited STALE_AFTER_S)."""
    dead = _dead_pid()
    killed = _leftover(tmp_path, dead, 0)
    other_target = _leftover(tmp_path, dead, 0, name="trace.json.gz")
    alive = _leftover(tmp_path, os.getppid(), 0)  # a writer still at it
    write_text(tmp_path / "trace.json", "{}")
    left = {p.name for p in tmp_path.iterdir()}
    assert killed.name not in left
    assert {other_target.name, alive.name, "trace.json"} <= left
