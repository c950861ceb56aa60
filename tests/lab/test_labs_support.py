"""everyo_lab.labs: the lab size setting, self-checks, the results file, and how a failed
check looks in a real IPython shell (one "Not yet" line, no traceback)."""

from __future__ import annotations

import json
import re

import pytest

from everyo.errors import EveryOConfigError
from everyo_lab.labs import Lab, LabCheckError, check_mode, lab_size, start_lab


def test_size_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("EVERYO_LAB_SIZE", raising=False)
    assert lab_size() == "full"
    monkeypatch.setenv("EVERYO_LAB_SIZE", " Small ")
    assert lab_size() == "small"
    assert Lab("x", "goal").pick(small=1, full=2) == 1
    monkeypatch.setenv("EVERYO_LAB_SIZE", "huge")
    with pytest.raises(EveryOConfigError, match="'small'.*'full'"):
        lab_size()
    with pytest.raises(EveryOConfigError, match="size must be one of"):
        Lab("x", "goal", size="medium")


def test_checks_count_and_say_what_to_change(capsys):
    lab = Lab("03_demo", "goal", size="small")
    lab.check(True, "make it faster", passed="3x faster")
    assert "\u2713 check 1 passed: 3x faster" in capsys.readouterr().out
    with pytest.raises(LabCheckError, match=r"Not yet \(check 2 of 03_demo\): vectorise it"):
        lab.check(0, "vectorise it")
    assert lab.passed == ["3x faster"]
    assert isinstance(LabCheckError("x"), AssertionError)


def test_check_mode_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("EVERYO_LAB_CHECKS", raising=False)
    assert check_mode() == "stop" and Lab("x", "goal").checks == "stop"
    monkeypatch.setenv("EVERYO_LAB_CHECKS", " Report ")
    assert check_mode() == "report" and Lab("x", "goal").checks == "report"
    monkeypatch.setenv("EVERYO_LAB_CHECKS", "skip")
    with pytest.raises(EveryOConfigError, match="EVERYO_LAB_CHECKS='skip'.*'stop'.*'report'"):
        check_mode()
    with pytest.raises(EveryOConfigError, match="checks must be one of"):
        Lab("x", "goal", checks="ignore")


def test_report_mode_prints_an_unmet_check_and_goes_on(tmp_path, capsys):
    lab = Lab("04_demo", "goal", size="small", checks="report")
    lab.check(False, "overlap the loading")
    lab.check(True, "bigger batch", passed="batch 64")
    lab.check([], "cache the decoded images")
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "\u2717 Not yet (check 1 of 04_demo): overlap the loading",
        "\u2713 check 2 passed: batch 64",
        "\u2717 Not yet (check 3 of 04_demo): cache the decoded images",
    ]
    assert lab.passed == ["batch 64"]
    assert lab.not_yet == ["overlap the loading", "cache the decoded images"]
    data = json.loads(lab.record(tmp_path).read_text())
    assert data["checks_passed"] == ["batch 64"]
    assert data["checks_not_yet"] == ["overlap the loading", "cache the decoded images"]
    assert "1 checks passed, 2 not yet" in capsys.readouterr().out


def test_record_writes_figures_checks_and_environment(tmp_path):
    lab = Lab("05_demo", "goal", size="full")
    lab.check(True, "ok")
    path = lab.record(tmp_path / "results", speedup=12.5, batch=64)
    data = json.loads(path.read_text())
    assert path.name == "05_demo.json"
    assert data["lab"] == "05_demo" and data["size"] == "full"
    assert data["results"] == {"speedup": 12.5, "batch": 64}
    assert data["checks_passed"] == ["ok"] and data["checks_not_yet"] == []
    assert data["environment"]["everyo"]["version"]


def test_a_rerun_check_replaces_its_result_and_keeps_its_number(tmp_path, capsys):
    """A check cell run again is the same exercise: its number stays, its result is replaced,
    and the results file holds one entry per check (issue 33)."""
    lab = Lab("06_demo", "goal", size="small", checks="report")

    def exercise_1(met):
        lab.check(met, "make it faster", passed="3x faster")

    def exercise_2(met):
        lab.check(met, "same weights")

    exercise_1(False)
    exercise_2(True)
    exercise_1(False)  # run the check cell again, still not met
    exercise_1(True)  # ... and again, met
    exercise_2(True)
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ["\u2713 check 1 passed: 3x faster", "\u2713 check 2 passed: same weights"]
    assert "check 3" not in "\n".join(out)
    data = json.loads(lab.record(tmp_path).read_text())
    assert data["checks_passed"] == ["3x faster", "same weights"] and data["checks_not_yet"] == []
    assert [c["check"] for c in data["checks"]] == [1, 2]
    exercise_1(False)  # a check passed before and not met now is "not yet", only
    assert lab.passed == ["same weights"] and lab.not_yet == ["make it faster"]


def test_checks_are_keyed_by_the_notebook_cell(monkeypatch, capsys):
    """Where the front end names the cell (JupyterLab, Notebook 7), a check is its cell and its
    place in that cell, so editing the cell keeps its checks' numbers."""
    import sys
    import types

    shell = types.SimpleNamespace(parent_header={})
    fake = types.SimpleNamespace(get_ipython=lambda: shell)
    monkeypatch.setitem(sys.modules, "IPython", fake)
    lab = Lab("07_demo", "goal", size="small", checks="report")

    def run_cell(cell, request, *conditions):
        shell.parent_header = {"header": {"msg_id": request}, "metadata": {"cellId": cell}}
        for met in conditions:  # each line is a check written on a different line
            lab.check(met, f"exercise in {cell}")

    run_cell("a", "r1", True, False)
    run_cell("b", "r2", False)
    run_cell("a", "r3", True, True)  # the cell edited and run again
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [
        "\u2713 check 1 passed: exercise in a",
        "\u2713 check 2 passed: exercise in a",
    ]
    assert lab.passed == ["exercise in a", "exercise in a"] and lab.not_yet == ["exercise in b"]


def test_a_failed_check_shows_one_line_in_ipython(monkeypatch, capsys):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setenv("EVERYO_LAB_SIZE", "small")
    monkeypatch.delenv("EVERYO_LAB_CHECKS", raising=False)
    shell = InteractiveShell.instance()
    try:
        shell.user_ns["start_lab"] = start_lab
        shell.run_cell("lab = start_lab('01_demo', 'a goal')")
        result = shell.run_cell("lab.check(1 > 2, 'make the left side bigger')")
        out = capsys.readouterr()
        assert isinstance(result.error_in_exec, LabCheckError)
        shown = (out.out + out.err).strip().splitlines()
        assert shown[-1].endswith("Not yet (check 1 of 01_demo): make the left side bigger\x1b[0m")
        assert not any("Traceback" in line for line in shown)
        assert shell.run_cell("1 / 0").error_in_exec is not None  # other errors unchanged
        assert "ZeroDivisionError" in capsys.readouterr().out
    finally:
        InteractiveShell.clear_instance()


def test_interleaved_alternates_the_calls_and_compares_medians():
    calls = []
    now = [0.0]

    def clock():
        return now[0]

    def slow():
        calls.append("slow")
        now[0] += 0.004

    def fast():
        calls.append("fast")
        now[0] += 0.001

    import numpy as np

    from everyo_lab.labs import interleaved

    # (NumPy's integers are counts too: a repeat read from an array)
    result = interleaved(slow, fast, warmup=np.int64(1), repeat=np.int64(5), clock=clock)
    # warmup, then pairs in alternating order: neither side always goes first
    assert calls == ["slow", "fast"] + ["slow", "fast", "fast", "slow"] * 2 + ["slow", "fast"]
    assert result.speedup == pytest.approx(4.0)
    assert result.verdict == "faster"


@pytest.mark.parametrize(
    ("args", "kwargs", "says"),
    [
        ((1.0, print), {}, "before is a float: pass the function itself"),
        ((print, None), {}, "after is a NoneType"),
        ((print, print), {"repeat": 1}, "repeat must be an integer >= 2"),
        ((print, print), {"repeat": "5"}, "repeat must be an integer >= 2"),
        ((print, print), {"warmup": -1}, "warmup must be an integer >= 0"),
    ],
)
def test_interleaved_refuses_what_it_cannot_time_before_timing(args, kwargs, says):
    from everyo_lab.labs import interleaved

    with pytest.raises(ValueError, match=re.escape(says)):
        interleaved(*args, **kwargs)


@pytest.mark.parametrize("recheck", ["no", None, 0])
def test_a_sweeps_recheck_is_true_or_false(recheck):
    import everyo as eo
    from everyo.bench import sweep_batch_sizes

    model = eo.Sequential(eo.Linear(4, 4, seed=0))
    with pytest.raises(ValueError, match="recheck must be True"):
        sweep_batch_sizes(model, lambda b: eo.zeros(b, 4), [1, 2], recheck=recheck, progress=False)
