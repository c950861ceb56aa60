"""A child forked while a sampled profile runs goes on and ends (issue 44, case 1), and a child
forked while another thread makes a run's first export can export too (case 7): forks at many
points, on each sampling path, with multiprocessing's fork start method and a DataLoader with
worker processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

FORKS = textwrap.dedent(
    """
    import multiprocessing, os, random, sys, time
    from everyo.profiler import Profiler, record_function
    random.seed(int(sys.argv[1]))

    def square(x):
        return x * x

    def wait(pid):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.01)
        os.kill(pid, 9)
        return "hung"

    with Profiler(sample=0.1) as p:
        codes = []
        for _ in range(6):
            with record_function("step"):
                sum(i * i for i in range(random.randrange(1, 30000)))
            pid = os.fork()
            if pid == 0:
                with record_function("child"):  # the child records and leaves the profile
                    sum(range(20000))
                sys.exit(0)  # (ends the profile in the child: the sampler is freed there)
            codes.append(wait(pid))
        with multiprocessing.get_context("fork").Pool(2) as pool:
            squares = pool.map(square, range(20))
    print("children", codes, sum(squares))
    """
)


@pytest.mark.parametrize("path", ["c", "signal", "thread"])
def test_a_child_forked_while_sampling_runs_on(path):
    env = dict(os.environ, EVERYO_SAMPLER=path)
    for seed in range(3):
        out = subprocess.run(
            [sys.executable, "-c", FORKS, str(seed)],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
        )
        assert out.returncode == 0, out.stdout + out.stderr
        assert "children [0, 0, 0, 0, 0, 0] 2470" in out.stdout, out.stdout + out.stderr


HELD_AT_FORK = textwrap.dedent(
    """
    import os, sys, threading, time
    from everyo.profiler import Profiler
    with Profiler(sample=1) as p:
        sampler = p._sampler
        held, release = threading.Event(), threading.Event()
        def hold(lock):  # the sampling thread holds these for a moment in every wait
            with lock:
                held.set()
                release.wait()
        threading.Thread(target=hold, args=(sampler.%s._cond,), daemon=True).start()
        held.wait()
        pid = os.fork()
        if pid == 0:
            sys.exit(0)  # ends the profile in the child: stops the sampler there
        release.set()
        deadline = time.monotonic() + 20
        while not os.waitpid(pid, os.WNOHANG)[0]:
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                print("child hung")
                break
            time.sleep(0.01)
        else:
            print("child ended")
    """
)


@pytest.mark.parametrize("event", ["_stop", "_wake"])
def test_a_child_forked_while_the_sampling_thread_waits_ends(event):
    # CI saw a child hang: forked while the sampling thread was inside _stop.wait(), the
    # child inherited the Event's lock held, and stopping the sampler there waited for ever
    env = dict(os.environ, EVERYO_SAMPLER="thread")
    out = subprocess.run(
        [sys.executable, "-c", HELD_AT_FORK % event],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert "child ended" in out.stdout, out.stdout + out.stderr


LOADER = textwrap.dedent(
    """
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from everyo.profiler import Profiler
    data = TensorDataset(torch.arange(64.0).reshape(32, 2))
    with Profiler(sample=0.2):
        total = sum(float(b[0].sum()) for b in DataLoader(data, batch_size=4, num_workers=2))
    print("total", total)
    """
)


def test_a_dataloader_with_workers_under_a_sampled_profile():
    pytest.importorskip("torch")
    out = subprocess.run(
        [sys.executable, "-c", LOADER], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "total 2016.0" in out.stdout


FIRST_EXPORT = textwrap.dedent(
    """
    import os, sys, threading, time
    from everyo.profiler import Profiler, record_function
    with Profiler() as p:
        for _ in range(20000):
            with record_function("step"):
                pass
    thread = threading.Thread(target=p.export_chrome_trace, args=(sys.argv[1] + "-parent.json",))
    thread.start()
    time.sleep(float(sys.argv[2]))  # the fork lands somewhere in the first export
    pid = os.fork()
    if pid == 0:
        p.export_chrome_trace(sys.argv[1] + "-child.json")
        os._exit(0)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            print("child exit", os.waitstatus_to_exitcode(status))
            break
        time.sleep(0.01)
    else:
        os.kill(pid, 9)
        print("child hung")
    thread.join()
    """
)


@pytest.mark.parametrize("delay", [0.0, 0.0, 0.0, 0.001, 0.002, 0.005, 0.01, 0.02])
def test_a_child_forked_during_another_threads_first_export_exports(tmp_path, delay):
    out = subprocess.run(
        [sys.executable, "-c", FIRST_EXPORT, str(tmp_path / "t"), str(delay)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "child exit 0" in out.stdout, out.stdout + out.stderr
    assert (tmp_path / "t-child.json").exists()


def test_the_cli_profiles_a_forking_script_with_sampling_to_its_end(tmp_path):
    """The issue's case: `python -m everyo profile --sample forker.py` never ended."""
    script = tmp_path / "forker.py"
    script.write_text(
        textwrap.dedent(
            """
            import multiprocessing, os, sys
            def square(x):
                return x * x
            for _ in range(5):
                sum(j * j for j in range(20000))
                pid = os.fork()
                if pid == 0:
                    sys.exit(0)
                os.waitpid(pid, 0)
            with multiprocessing.get_context("fork").Pool(2) as pool:
                print("squares", sum(pool.map(square, range(10))))
            """
        )
    )
    out = subprocess.run(
        [sys.executable, "-m", "everyo", "profile", "--sample", str(script)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    assert "squares 285" in out.stdout and out.stdout.count("everyo profile ") == 1
