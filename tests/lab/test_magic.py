"""``%%everyo_profile`` driven through a real IPython ``InteractiveShell``."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("IPython")
pytest.importorskip("anywidget")
pytest.importorskip("plotly")

from IPython.utils.capture import capture_output  # noqa: E402

from everyo.profiler import runs  # noqa: E402
from everyo_lab.magic import CellFailed, parse_options  # noqa: E402

WIDGET = "application/vnd.jupyter.widget-view+json"

WORK = """
from everyo.profiler import record_function
for _ in range(30):
    with record_function("step"):
        with record_function("inner"):
            total = sum(range(200))
"""


pytestmark = pytest.mark.usefixtures("fresh_runs")  # tests/lab/conftest.py


def run_magic(shell, line, body):
    with capture_output() as cap:
        result = shell.run_cell(f"%%everyo_profile {line}\n{body}")
    return result, cap


def test_cell_runs_in_user_namespace_and_lands_in_runs(shell):
    result, cap = run_magic(shell, "--no-live --label ns-test", WORK + "answer = total + 1\n")
    assert result.success, cap.stdout
    assert shell.user_ns["answer"] == sum(range(200)) + 1
    run = runs["ns-test"]
    assert run.status == "completed"
    assert run.num_events == 60
    assert {"step", "inner"} <= set(run.snapshot().name.tolist())


def test_last_expression_is_displayed_as_without_the_magic(shell):
    result, cap = run_magic(shell, "--no-live", "6 * 7")
    assert result.success
    assert "42" in cap.stdout


def test_output_is_the_widget_and_a_static_rendering_that_hides_while_live(shell):
    result, cap = run_magic(shell, "--no-live --label bundle", WORK)
    assert result.success
    widgets = [o.data for o in cap.outputs if WIDGET in o.data]
    statics = [o.data for o in cap.outputs if "text/html" in o.data]
    # Each displayed once at the start and updated once at the end (same display ids).
    assert len(widgets) == 2 and len(statics) == 2
    assert widgets[-1][WIDGET]["model_id"] == widgets[0][WIDGET]["model_id"]
    assert widgets[-1]["text/plain"] == "everyo dashboard: bundle"
    assert "text/html" not in widgets[-1]  # JupyterLab would never show it: "model not found"
    final = statics[-1]
    assert WIDGET not in final
    assert "inner" in final["text/html"] and 'class="everyo-static-flame"' in final["text/html"]
    assert 'class="everyo-static"' in final["text/html"]
    assert ":has(.everyo-dashboard)" in final["text/html"]  # hidden while the widget shows
    assert "step" in final["text/plain"] and "inner" in final["text/plain"]
    # The first rendering was drawn before anything was recorded; the update holds the final run.
    assert "inner" not in statics[0]["text/plain"]


def test_widget_construction_is_not_profiled_time(shell, monkeypatch):
    """Building and showing the dashboard must not count as the cell's wall time: it happens
    before the profiler starts."""
    import sys

    import everyo_lab.widgets.dashboard  # noqa: F401 - the package re-exports a function so named

    dash = sys.modules["everyo_lab.widgets.dashboard"]
    started = []
    original = dash.Dashboard.__init__

    def spy(self, *args, **kwargs):
        from everyo.profiler.recording import hooks

        started.append(hooks.active)
        original(self, *args, **kwargs)

    monkeypatch.setattr(dash.Dashboard, "__init__", spy)
    result, _ = run_magic(shell, "--no-live --label construct", WORK)
    assert result.success
    assert started == [None]


def test_exception_shows_traceback_keeps_partial_profile_and_fails_the_cell(shell):
    body = WORK + "raise ValueError('boom')\n"
    result, cap = run_magic(shell, "--no-live --label fails", body)
    assert isinstance(result.error_in_exec, CellFailed)
    assert "ValueError" in cap.stdout and "boom" in cap.stdout  # the usual traceback
    run = runs["fails"]
    assert run.status == "failed"
    assert run.error == "ValueError: boom"
    assert run.num_events == 60  # the partial profile is kept
    final = [o.data for o in cap.outputs if "text/html" in o.data][-1]
    assert "step" in final["text/plain"] and "failed" in final["text/html"]


def test_keyboard_interrupt_stops_profiler_cleanly_and_later_run_works(shell):
    from everyo.profiler.recording import hooks

    result, cap = run_magic(shell, "--label interrupted", WORK + "raise KeyboardInterrupt\n")
    assert isinstance(result.error_in_exec, CellFailed)
    assert "KeyboardInterrupt" in cap.stdout
    assert hooks.active is None
    assert runs["interrupted"].status == "failed"
    assert runs["interrupted"].error == "KeyboardInterrupt"
    result, _ = run_magic(shell, "--no-live --label after", WORK)
    assert result.success
    assert runs["after"].status == "completed" and runs["after"].num_events == 60


@pytest.mark.parametrize(
    "line, problem",
    [
        ("--bogus", "unrecognized arguments: --bogus"),
        ("--warmup -1", "--warmup"),
        ("--warmup many", "--warmup"),
        ("--refresh 1", "at least 2"),
        ("--group-by colour", "--group-by"),
        ("--top 0", "--top"),
        ("--sort colour", "unknown column 'colour'"),
        ("--label 'unclosed", "quotation"),
        ("--no-shapes --group-by shape", "--group-by shape needs shapes"),
        ("--schedule 1,2", "wait,warmup,active"),
        ("--schedule 1,1,0", "active=0"),
        ("--schedule a,b,c", "wait,warmup,active"),
        ("--top abc", "argument --top: takes a whole number >= 1 (e.g. 10), got 'abc'"),
        ("--top 0", "argument --top: takes a whole number >= 1 (e.g. 10), got '0'"),
        ("--warmup many", "argument --warmup: takes a whole number >= 0 (e.g. 10), got 'many'"),
        ("--refresh fast", "argument --refresh: takes refreshes per second, a number >= 2"),
        ("--export nodir/x.json", "--export: cannot write nodir/x.json: folder nodir does not"),
    ],
)
def test_bad_options_print_usage_and_do_not_run_the_cell(shell, line, problem):
    shell.user_ns.pop("marker", None)
    result, cap = run_magic(shell, line, "marker = 1\n")
    assert result.success  # a usage message, not a traceback
    assert problem in cap.stdout
    assert "invalid _" not in cap.stdout  # never argparse's words for our type functions
    assert "usage: %%everyo_profile" in cap.stdout
    assert "Traceback" not in cap.stdout
    assert "marker" not in shell.user_ns
    assert len(runs) == 0


def test_options_map_to_profiler_keywords():
    opts = parse_options(
        "--warmup 3 --no-shapes --record-ops --profile-memory --label 'a b' "
        "--top 5 --sort self_ms --group-by path --no-live --refresh 8"
    )
    assert (opts.warmup, opts.record_shapes, opts.record_ops, opts.profile_memory) == (
        3,
        False,
        True,
        True,
    )
    assert (opts.label, opts.top, opts.sort, opts.group_by) == ("a b", 5, "self_ms", "path")
    assert (opts.live, opts.refresh) == (False, 8.0)
    sched = parse_options("--schedule 1,2,3").schedule
    assert (sched.wait, sched.warmup, sched.active, sched.repeat) == (1, 2, 3, 0)
    defaults = parse_options("")
    # no --refresh: the adaptive pace (three a second, two while every core is busy)
    assert defaults.record_shapes and defaults.live and defaults.refresh is None


def test_profiler_options_reach_the_run(shell):
    result, _ = run_magic(shell, "--no-live --warmup 10 --no-shapes --label opts", WORK)
    assert result.success
    run = runs["opts"]
    assert run.options["warmup"] == 10 and run.options["record_shapes"] is False
    assert run.num_events == 50


def test_export_writes_chrome_trace(shell, tmp_path):
    path = tmp_path / "cell.trace.json"
    result, cap = run_magic(shell, f"--no-live --label exp --export {path}", WORK)
    assert result.success, cap.stdout
    trace = json.loads(path.read_text())
    names = {e.get("name") for e in trace["traceEvents"]}
    assert {"step", "inner"} <= names


def test_live_refresher_stops_with_the_cell(shell):
    import threading

    result, _ = run_magic(shell, "--refresh 50 --label live", WORK)
    assert result.success
    assert not [t for t in threading.enumerate() if t.name == "everyo-live"]


def test_dashboard_line_magic_shows_picker_widget_and_static_rendering(shell):
    run_magic(shell, "--no-live --label first", WORK)
    with capture_output() as cap:
        result = shell.run_line_magic("everyo_dashboard", "")
    assert result is None
    assert cap.stderr == ""
    widget, static = [o.data for o in cap.outputs]
    assert WIDGET in widget and WIDGET not in static
    assert "first" in static["text/html"] and 'class="everyo-static"' in static["text/html"]
    assert ":not(:has(.everyo-dashboard))" in static["text/html"]  # no "model not found"
    assert "inner" in static["text/plain"]


def test_schedule_records_only_active_steps(shell):
    body = (
        "import everyo.profiler as ep\n"
        "from everyo.profiler import record_function\n"
        "for i in range(6):\n"
        "    with record_function(f'it{i}'):\n"
        "        pass\n"
        "    ep.step()\n"
    )
    result, cap = run_magic(shell, "--no-live --label sched --schedule 1,1,2,1", body)
    assert result.success, cap.stdout
    run = runs["sched"]
    assert run.options["schedule"] == {"wait": 1, "warmup": 1, "active": 2, "repeat": 1}
    assert sorted(set(run.snapshot().name.tolist())) == ["it2", "it3"]
    assert len(run.step_ns) == 6  # every step is marked, recorded or not


def test_wall_time_starts_at_the_cells_first_statement(shell, monkeypatch):
    from everyo.profiler.storage.run import Run

    calls = []
    original = Run.restart_clock

    def spy(self):
        calls.append(self.label)
        original(self)

    monkeypatch.setattr(Run, "restart_clock", spy)
    shell.user_ns["CALLS"] = calls
    body = "from __future__ import annotations\nseen = list(CALLS)\n"
    result, cap = run_magic(shell, "--no-live --label origin", body)
    assert result.success, cap.stdout
    assert shell.user_ns["seen"] == ["origin"]  # restarted before the first statement ran
    assert calls == ["origin"]
    assert shell.ast_transformers == [
        t for t in shell.ast_transformers if "CellStart" not in type(t).__name__
    ]  # removed after the cell
    result, cap = run_magic(shell, "--no-live", "6 * 7")  # still displays the last value
    assert "42" in cap.stdout


def test_a_cell_without_everyo_code_says_what_to_do(shell):
    result, cap = run_magic(shell, "--no-live --label nothing", "x = sum(range(10))\n")
    assert result.success
    final = [o.data for o in cap.outputs if "text/html" in o.data][-1]
    assert "no events" in final["text/plain"] and "record_function" in final["text/plain"]
    assert "--record-ops" in final["text/html"]


def test_syntax_error_in_cell_is_reported_and_run_marked_failed(shell):
    result, cap = run_magic(shell, "--no-live --label syntax", "x = (\n")
    assert isinstance(result.error_in_exec, CellFailed)
    assert "SyntaxError" in cap.stdout
    assert runs["syntax"].status == "failed"


def test_help_prints_usage_without_running(shell):
    result, cap = run_magic(shell, "--help", "marker = 1\n")
    assert result.success
    assert "--group-by" in cap.stdout and "--refresh HZ" in cap.stdout
    assert len(runs) == 0


def test_torch_cell_records_torch_modules(shell):
    pytest.importorskip("torch")
    body = (
        "import torch\n"
        "net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())\n"
        "net(torch.randn(2, 4)).sum().backward()\n"
    )
    result, cap = run_magic(shell, "--no-live --label torch-cell", body)
    assert result.success, cap.stdout
    names = set(runs["torch-cell"].snapshot().name.tolist())
    assert {"Sequential", "Linear", "ReLU", "Linear.backward", "backward"} <= names
    result, cap = run_magic(shell, "--no-live --no-torch --label torch-off", body)
    assert result.success, cap.stdout
    assert runs["torch-off"].num_events == 0
