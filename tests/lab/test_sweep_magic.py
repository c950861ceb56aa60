"""``%everyo_sweep`` driven through a real IPython ``InteractiveShell``: options, names from the
notebook, the two outputs, usage messages instead of tracebacks, and an interrupt that keeps the
finished points."""

from __future__ import annotations

import pytest

pytest.importorskip("IPython")
pytest.importorskip("anywidget")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

from everyo_lab import sweeps  # noqa: E402
from everyo_lab.magic import UsageProblem  # noqa: E402
from everyo_lab.sweep_magic import parse_sweep_options  # noqa: E402

WIDGET = "application/vnd.jupyter.widget-view+json"
SETUP = """
import numpy as np
import everyo as eo

class Lab:
    pass

def step(x):
    return float(x.sum())

def make_batch(n):
    return np.ones((n, 16))

lab = Lab()
lab.step = step
model = eo.Sequential(eo.Linear(16, 4, seed=0))
not_callable = 42

def interrupted(x):
    if x.shape[0] == 4:
        raise KeyboardInterrupt  # what the kernel's interrupt raises inside a point
    return float(x.sum())
"""
FAST = "--warmup 0 --repeat 2"


@pytest.fixture(scope="module")
def shell():
    sh = InteractiveShell.instance()
    sh.extension_manager.load_extension("everyo_lab")
    assert sh.run_cell(SETUP).success
    return sh


def sweep(shell, line):
    with capture_output() as cap:
        result = shell.run_cell(f"%everyo_sweep {line}")
    return result, cap


def test_options_map_to_the_widgets_keywords():
    opts = parse_sweep_options(
        "m mk --batch-sizes 1,8,64 --mode train --memory-limit 512MiB --label big "
        "--warmup 1 --repeat 3 --max-batch 128 --device cpu"
    )
    assert (opts.model, opts.make_batch, opts.batch_sizes) == ("m", "mk", [1, 8, 64])
    assert (opts.mode, opts.memory_limit, opts.label) == ("train", 512 * 2**20, "big")
    assert (opts.warmup, opts.repeat, opts.max_batch, opts.device) == (1, 3, 128, "cpu")
    defaults = parse_sweep_options("m mk")
    assert (defaults.batch_sizes, defaults.mode, defaults.memory_limit) == (
        "auto",
        "inference",
        None,
    )
    assert parse_sweep_options("m mk --memory-limit 600000").memory_limit == 600_000
    assert parse_sweep_options("m mk --memory-limit 2GB").memory_limit == 2 * 10**9


@pytest.mark.parametrize(
    "line, problem",
    [
        ("m", "the following arguments are required: MAKE_BATCH"),
        ("m mk --batch-sizes 1,x", "use 'auto' or positive whole numbers"),
        ("m mk --batch-sizes 0,4", "use 'auto' or positive whole numbers"),
        ("m mk --mode fast", "invalid choice: 'fast'"),
        ("m mk --memory-limit lots", "use a number of bytes"),
        ("m mk --repeat 0", "repeat"),
        ("m mk --colour red", "unrecognized arguments: --colour red"),
        ('m mk --label "open', "No closing quotation"),
    ],
)
def test_bad_options_are_usage_problems(line, problem):
    with pytest.raises(UsageProblem, match=problem):
        parse_sweep_options(line)


def test_sweep_runs_with_names_from_the_notebook_and_shows_two_outputs(shell):
    result, cap = sweep(shell, f"lab.step make_batch --batch-sizes 1,2,4 {FAST} --label magic")
    assert result.success, cap.stdout
    widgets = [o.data for o in cap.outputs if WIDGET in o.data]
    statics = [o.data for o in cap.outputs if WIDGET not in o.data and "text/html" in o.data]
    # each displayed once at the start; the static one updated once at the end (display ids)
    assert len(widgets) == 1 and len(statics) == 2
    assert widgets[0]["text/plain"] == "everyo sweep: magic"
    assert "not started" in statics[0]["text/plain"] or "running" in statics[0]["text/plain"]
    final = statics[-1]["text/html"]
    assert 'class="everyo-sweep-static"' in final and final.count('class="everyo-sweep-chart"') == 3
    assert ":has(.everyo-sweep)" in final  # hidden while the widget shows
    assert "is recommended" in statics[-1]["text/plain"]
    widget = sweeps["magic"]
    assert widget.model_id == widgets[0][WIDGET]["model_id"]
    assert [r.batch_size for r in widget.result.rows] == [1, 2, 4] and widget.status == "completed"


def test_memory_limit_and_mode_reach_the_sweep(shell):
    result, cap = sweep(
        shell, f"step make_batch --batch-sizes 1,2,4096 --memory-limit 200000 {FAST} --label lim"
    )
    assert result.success, cap.stdout
    rows = sweeps["lim"].result.rows
    assert [r.status for r in rows] == ["ok", "ok", "oom"]
    assert sweeps["lim"].report["memory_limit"] == 200_000
    result, cap = sweep(shell, f"model make_batch --mode train {FAST}")
    assert result.success
    assert "%everyo_sweep: mode='train' needs a step function" in cap.stdout
    assert "Traceback" not in cap.stdout


@pytest.mark.parametrize(
    "line, message",
    [
        ("nothing make_batch", "MODEL 'nothing' is not defined in the notebook"),
        ("step nope", "MAKE_BATCH 'nope' is not defined in the notebook"),
        ("not_callable make_batch", "MODEL not_callable must be callable, but it is a int"),
        ("lab.missing make_batch", "lab has no attribute 'missing'"),
        ("step make_batch()", "MAKE_BATCH must be a name from the notebook"),
        ("step make_batch --batch-sizes none", "use 'auto' or positive whole numbers"),
    ],
)
def test_bad_names_and_options_print_a_message_not_a_traceback(shell, line, message):
    before = len(sweeps)
    result, cap = sweep(shell, line)
    assert result.success and result.error_in_exec is None
    assert message in cap.stdout and "usage: %everyo_sweep" in cap.stdout
    assert "Traceback" not in cap.stdout and not cap.outputs
    assert len(sweeps) == before  # nothing ran


def test_help_prints_usage(shell):
    result, cap = sweep(shell, "--help")
    assert result.success and cap.stdout.startswith("usage: %everyo_sweep")


def test_interrupt_ends_the_sweep_and_keeps_the_finished_points(shell):
    result, cap = sweep(shell, f"interrupted make_batch --batch-sizes 1,2,4,8 {FAST} --label intr")
    assert not result.success
    assert "interrupted: the 2 finished points are shown above" in str(result.error_in_exec)
    widget = sweeps["intr"]
    assert [r.batch_size for r in widget.result.rows] == [1, 2] and widget.result.stopped
    assert widget.status == "stopped" and not widget.running
    statics = [o.data for o in cap.outputs if WIDGET not in o.data and "text/html" in o.data]
    assert "stopped after 2 points" in statics[-1]["text/plain"]
    # the shell is fine afterwards: the next sweep runs
    result, cap = sweep(shell, f"step make_batch --batch-sizes 1 {FAST}")
    assert result.success, cap.stdout
