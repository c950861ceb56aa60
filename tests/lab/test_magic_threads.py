"""``--threads`` of ``%%everyo_profile`` and ``%everyo_sweep`` through a real ``InteractiveShell``,
and the machine's state that a profiled run carries into its notes and files."""

from __future__ import annotations

import pytest

pytest.importorskip("IPython")
pytest.importorskip("anywidget")

from IPython.utils.capture import capture_output  # noqa: E402

from everyo.machine_state import threads_in_use  # noqa: E402
from everyo.profiler import load, profile, runs
from everyo.profiler.analysis import run_analysis as analysis  # noqa: E402
from everyo_lab.sweep_magic import parse_sweep_options  # noqa: E402

BUSY = {
    "verdict": "contended",
    "reason": "other processes used 1.8 of 2 cores; 2 BLAS threads",
    "usable_cores": 2,
    "others_cores": 1.8,
}


pytestmark = pytest.mark.usefixtures("fresh_runs")  # tests/lab/conftest.py


def test_threads_applies_while_the_cell_runs_and_is_recorded(shell):
    before = threads_in_use()["blas"]
    if before is None:
        pytest.skip("no BLAS library that threadpoolctl can see")
    body = "from everyo.machine_state import threads_in_use\ninside = threads_in_use()['blas']\n"
    with capture_output() as cap:
        result = shell.run_cell(f"%%everyo_profile --no-live --threads 1 --label t1\n{body}")
    assert result.success, cap.stdout
    assert shell.user_ns["inside"] == 1
    assert threads_in_use()["blas"] == before  # restored when the cell ends
    state = runs["t1"].machine_state
    assert state.threads_policy == 1 and state.threads_applied == 1
    # the limit is shown where the figures are, even on a quiet machine
    assert any("set by threads=1" in n for n in analysis.run_notes(runs["t1"]))
    shown = "\n".join(str(o.data.get("text/plain", "")) for o in cap.outputs)
    assert "set by threads=1" in shown


@pytest.mark.parametrize("value", ["0", "many", "-2"])
def test_bad_threads_print_usage_and_do_not_run_the_cell(shell, value):
    with capture_output() as cap:
        shell.run_cell(f"%%everyo_profile --threads {value}\nran = True\n")
    assert "threads must be 'auto'" in cap.stdout
    assert "ran" not in shell.user_ns


def test_sweep_magic_takes_threads():
    assert parse_sweep_options("model make --threads 2").threads == 2
    assert parse_sweep_options("model make").threads == "auto"


def test_a_run_on_a_contended_machine_says_so_in_its_notes_and_files(tmp_path):
    with profile(label="busy-run") as p:
        p.record("work", {}).__enter__().__exit__(None, None, None)
    p.run.machine = dict(BUSY)  # as if recorded while another process used the cores
    notes = analysis.run_notes(p.run)
    assert notes[0].startswith("Machine: contended (other processes used 1.8 of 2 cores")
    assert "not to be trusted" in notes[0]
    assert any("Machine: contended" in n for n in p.summary().notes)
    for path in (
        p.export_chrome_trace(tmp_path / "t.json"),
        p.export_json(tmp_path / "r.json", format="raw"),
    ):
        assert load(path).machine_state.verdict == "contended"


def test_the_live_report_says_so_while_the_run_records():
    from everyo_lab.views.live_session import LiveState
    from everyo_lab.views.report import build_report, live_report

    with profile(label="live-busy") as p:
        with p.record("work", {}):
            pass
        p.flush()
        p.run.machine = dict(BUSY)  # an earlier session of this run was contended
        state = LiveState()
        state.feed(p.run.snapshot())
        live = live_report(p.run, state)
        assert live.live and any(n.startswith("Machine: contended") for n in live.notes)
    final = build_report(p.run)
    assert any(n.startswith("Machine: contended") for n in final.notes)
