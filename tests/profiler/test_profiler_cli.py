"""``python -m everyo profile`` and ``python -m everyo demo``."""

from __future__ import annotations

import json
import textwrap

import pytest

from everyo.__main__ import main
from everyo.profiler import load
from everyo.profiler.recording import hooks

SCRIPT = textwrap.dedent(
    """
    import sys
    import everyo as eo
    model = eo.Sequential(eo.Linear(4, 8, seed=0), eo.ReLU(), eo.Linear(8, 2, seed=1))
    print("script argv", sys.argv[1:])
    for _ in range(int(sys.argv[1])):
        model(eo.zeros(16, 4))
    if "--fail" in sys.argv:
        raise ValueError("planned failure")
    if "--exit" in sys.argv:
        sys.exit(3)
    """
)


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    return path


def test_profile_runs_script_prints_table_and_writes_exports(script, tmp_path, capsys):
    trace, raw = tmp_path / "t.json.gz", tmp_path / "r.json"
    code = main(
        [
            "profile",
            str(script),
            "3",
            "--top",
            "2",
            "--chrome-trace",
            str(trace),
            "--json",
            str(raw),
            "--sort",
            "calls",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "script argv ['3']" in out  # profile options never reach the script
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("name"))
    assert lines[header + 2].split()[:3] == ["Linear", "module", "6"]
    assert lines[header + 4].startswith("wall time")  # --top 2
    assert load(trace).num_events == load(raw).num_events == 12
    assert hooks.active is None


def test_options_before_the_script_and_double_dash(script, capsys):
    code = main(["profile", "--group-by", "path", "--warmup", "1", str(script), "2", "--", "--top"])
    out = capsys.readouterr().out
    assert code == 0 and "script argv ['2', '--top']" in out
    assert "skipped by warmup=1" in out and "\n0 " in out


def test_failing_script_still_prints_summary_and_exits_1(script, tmp_path, capsys):
    # the export directory exists when checked, and is gone when the export runs: the export
    # error is reported, and the script's own exit code stays the news
    out = tmp_path / "gone"
    out.mkdir()
    script.write_text(f"import os\nos.rmdir({str(out)!r})\n" + SCRIPT)
    code = main(["profile", str(script), "2", "--fail", "--json", str(out / "x.json")])
    captured = capsys.readouterr()
    assert code == 1
    assert "planned failure" in captured.err
    assert f"error: cannot write {out / 'x.json'}" in captured.err
    assert "failed: ValueError: planned failure" in captured.out
    assert "Sequential" in captured.out and hooks.active is None


def test_sys_exit_code_is_kept(script, capsys):
    assert main(["profile", str(script), "1", "--exit"]) == 3
    assert "failed: SystemExit: 3" in capsys.readouterr().out


def test_bad_options_are_errors_with_exit_2(script, tmp_path, capsys):
    assert main(["profile", str(script), "--group-by", "layer"]) == 2
    assert "use one of name, path, shape" in capsys.readouterr().err
    assert main(["profile", str(tmp_path / "missing.py")]) == 2
    assert "no such script" in capsys.readouterr().err
    assert main(["profile", str(script), "--top", "x"]) == 2


def test_demo_prints_table_and_writes_trace(tmp_path, capsys):
    out_path = tmp_path / "demo.json"
    assert main(["demo", "--steps", "2", "--out", str(out_path)]) == 0
    out = capsys.readouterr().out
    for name in ("Conv2d", "Linear", "Adam.step", "backward", "cnn.train", "mlp.train"):
        assert name in out
    trace = json.loads(out_path.read_text())
    cats = {e.get("cat") for e in trace["traceEvents"] if e["ph"] == "X"}
    assert {"module", "backward", "optimizer", "data", "user"} <= cats


@pytest.mark.parametrize("option", ["--chrome-trace", "--json"])
def test_export_destination_is_checked_before_the_script_runs(option, tmp_path, capsys):
    ran = tmp_path / "ran"
    script = tmp_path / "s.py"
    script.write_text(f"open({str(ran)!r}, 'w').close()\n")
    missing = tmp_path / "nodir" / "x.json"
    assert main(["profile", str(script), option, str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"{option}: cannot write {missing}: folder {missing.parent} does not exist" in err
    assert "create it first" in err
    assert not ran.exists()  # the script never ran
    assert main(["profile", str(script), option, str(tmp_path)]) == 2
    assert f"{option}: cannot write {tmp_path}: it is a directory" in capsys.readouterr().err
    locked = tmp_path / "locked.json"
    locked.write_text("{}")
    locked.chmod(0o444)
    assert main(["profile", str(script), option, str(locked)]) == 2
    assert "the file exists and is read-only" in capsys.readouterr().err
    assert not ran.exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--steps", "-1"], "--steps takes a whole number >= 1"),
        (["--steps", "0"], "--steps takes a whole number >= 1"),
        (["--group-by", "colour"], "--group-by 'colour': use one of name, path, shape"),
        (["--top", "0"], "--top takes a whole number >= 1"),
        (["--out", "nodir/x.json"], "--out: cannot write nodir/x.json: folder nodir does not"),
    ],
)
def test_demo_bad_options_fail_before_the_work(args, message, tmp_path, monkeypatch, capsys):
    import everyo.cli.demo as demo

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(demo, "run_demo", lambda steps: pytest.fail("the demo ran"))
    assert main(["demo", *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "everyo-demo.trace.json").exists()


def test_demo_steps_beyond_one_epoch_are_all_taken(tmp_path, capsys):
    from everyo.cli.demo import run_demo

    run = run_demo(10).run  # 8 batches per epoch: 10 steps need a second epoch
    names = run.snapshot().name.tolist()
    assert names.count("Adam.step") == 20  # 10 per model


def test_demo_warms_each_model_up_outside_the_record_and_applies_the_thread_policy(monkeypatch):
    """The first Linear call (7.8 ms of one-time costs) made mlp.inference read slower than
    five training steps: each model runs once before the record, and the record holds every
    call after it; BLAS threads follow threads='auto' as the other commands' do."""
    import everyo as eo
    from everyo.cli.demo import run_demo

    calls = []
    forward = eo.Linear.forward
    monkeypatch.setattr(eo.Linear, "forward", lambda self, x: calls.append(1) or forward(self, x))
    run = run_demo(2).run
    recorded = run.snapshot().name.tolist().count("Linear")
    assert recorded == 12  # (3 Linear in the MLP, 1 in the CNN) x (1 inference + 2 steps)
    assert len(calls) > recorded  # the warm-up calls ran, outside the record
    assert run.machine_state.threads_policy == "auto"


def test_a_summary_by_name_lists_the_paths_of_a_class_used_at_several(capsys):
    """The path column was empty for every class used at more than one path (a lone 6 on
    Flatten in the demo): it lists them."""
    from everyo.cli.demo import run_demo

    table = str(run_demo(1).summary())
    linear = next(line for line in table.splitlines() if line.startswith("Linear "))
    assert linear.rstrip().endswith("0, 2, 4, 7")
    flatten = next(line for line in table.splitlines() if line.startswith("Flatten "))
    assert flatten.rstrip().endswith(" 6")
