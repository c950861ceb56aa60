"""``python -m everyo profile`` and other processes (issue 36, fault 8): a child the script
forks ends without the CLI's ending, and SIGTERM leaves the summary and trace as Ctrl-C does.
Each test runs the CLI in a process of its own, as a user would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork and signals")

FORKS = textwrap.dedent(
    """
    import os, time
    from everyo.profiler import record_function
    for _ in range(30):
        with record_function("parent-before"):
            pass
    if os.fork() == 0:
        for _ in range(5):
            with record_function("child"):
                pass
        time.sleep(1.0)  # the child ends after the parent: its ending would come last
    else:
        for _ in range(20):
            with record_function("parent-after"):
                pass
    """
)

TERMINATED = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from everyo.profiler import record_function
    for i in range(100_000):
        with record_function("work"):
            time.sleep(0.001)
        if i == 20:
            Path(sys.argv[1]).write_text("ready")
    """
)


def _cli(tmp_path, script: str, *args: str) -> list[str]:
    path = tmp_path / "script.py"
    path.write_text(script)
    return [sys.executable, "-m", "everyo", "profile", str(path), *args]


def _names(trace) -> list[str]:
    events = json.loads(trace.read_text())["traceEvents"]
    return [e["name"] for e in events if e.get("ph") == "X"]


def test_a_forked_child_that_ends_normally_runs_no_second_ending(tmp_path):
    trace = tmp_path / "t.json"
    out = subprocess.run(
        _cli(tmp_path, FORKS, "--chrome-trace", str(trace)),
        capture_output=True,
        text=True,
        timeout=120,
    )  # returns once both processes closed stdout: the child's ending, if any, is in it
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("everyo profile ") == 1, out.stdout
    assert out.stdout.count("wrote ") == 1
    names = _names(trace)
    assert names.count("parent-before") == 30 and names.count("parent-after") == 20
    assert "child" not in names


def test_sigterm_leaves_the_summary_and_the_trace_like_ctrl_c(tmp_path):
    trace, ready = tmp_path / "t.json", tmp_path / "ready"
    proc = subprocess.Popen(
        _cli(tmp_path, TERMINATED, str(ready), "--chrome-trace", str(trace)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "SIGTERM" in stderr
    assert "everyo profile " in stdout and "failed: Terminated" in stdout
    assert _names(trace).count("work") >= 20


# The CLI in a process whose trace export gets SIGTERM(s) at the n-th write of the trace.
TERMINATED_IN_EXPORT = textwrap.dedent(
    """
    import contextlib, os, signal, sys
    import everyo.profiler.export.chrome as chrome
    from everyo.__main__ import main
    real, kills, writes = chrome.atomic_open, int(sys.argv[1]), [0]

    class Killing:
        def __init__(self, stream):
            self.stream = stream
        def write(self, text):
            writes[0] += 1
            if writes[0] in (3, 4)[:kills]:
                os.kill(os.getpid(), signal.SIGTERM)
            return self.stream.write(text)
        def __getattr__(self, name):
            return getattr(self.stream, name)

    @contextlib.contextmanager
    def killing(*args, **kwargs):
        with real(*args, **kwargs) as stream:
            yield Killing(stream)

    chrome.atomic_open = killing
    sys.exit(main(sys.argv[2:]))
    """
)

WORK = textwrap.dedent(
    """
    from everyo.profiler import record_function
    for i in range(3000):
        with record_function("work"):
            pass
    """
)


@pytest.mark.parametrize("kills", [1, 2])
def test_sigterm_during_the_export_ends_like_ctrl_c(tmp_path, kills):
    """Issue 44, case 9: SIGTERM while the CLI writes the trace killed it (exit -15, no trace,
    a temporary file left). Once: the trace is finished and the exit is 143; twice: the ending
    stops at once, still 143, and no temporary file is left."""
    trace, script = tmp_path / "t.json", tmp_path / "work.py"
    script.write_text(WORK)
    driver = tmp_path / "driver.py"
    driver.write_text(TERMINATED_IN_EXPORT)
    out = subprocess.run(
        [sys.executable, str(driver), str(kills), "profile", str(script),
         "--chrome-trace", str(trace)],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert out.returncode == 128 + signal.SIGTERM, out.stderr
    assert "SIGTERM" in out.stderr and "everyo profile " in out.stdout
    if kills == 1:
        assert _names(trace).count("work") == 3000
    else:
        assert not trace.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
