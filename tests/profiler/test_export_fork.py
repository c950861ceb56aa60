"""A process forked while another thread imports an exporter (a run's first export) can export
too (issue 36): the child never inherits an import lock held by a thread it does not have."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import importlib._bootstrap as bootstrap, os, sys, threading, time
    from everyo.profiler import Profiler, record_function
    import everyo.profiler.export  # a first export has begun: its package is imported
    with Profiler() as p:
        with record_function("step"):
            pass
    held = threading.Event()
    def first_export():  # a thread in the middle of importing the Chrome exporter
        with bootstrap._ModuleLockManager("everyo.profiler.export.chrome"):
            held.set()
            time.sleep(0.5)
    thread = threading.Thread(target=first_export)
    thread.start()
    held.wait()
    pid = os.fork()
    if pid == 0:
        p.export_chrome_trace(sys.argv[1])
        os._exit(0)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            print("child exit", os.waitstatus_to_exitcode(status))
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        print("child hung")
    thread.join()
    """
)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_forked_during_the_first_export_exports_too(tmp_path):
    trace = tmp_path / "child.json"
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(trace)], capture_output=True, text=True, timeout=120
    )
    assert "child exit 0" in out.stdout, out.stdout + out.stderr
    assert trace.exists()
