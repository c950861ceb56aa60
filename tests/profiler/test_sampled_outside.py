"""Plain Python and NumPy code (issue 42 item 3): with sampling on, a run without events, or the
time outside every event, still shows where the time went: in ``summary()``, the CLI's output,
the exports, and ``hot_lines(run, None, outside=True)``."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import everyo.profiler as ep
from everyo.errors import EveryOProfilerError
from everyo.profiler.analysis.run_analysis import summarize
from everyo.profiler.sampling.attribution import covered_ns
from everyo.profiler.sampling.sampled_lines import (
    OUTSIDE_LABEL,
    RUN_LABEL,
    Folding,
    add_file_namer,
    outside_events,
    place,
    summarize_stacks,
)
from everyo.profiler.sampling.sampled_lines_text import plural, uneven_text
from everyo.profiler.sampling.samples import SampleStore
from everyo.profiler.storage.run import Run
from everyo.profiler.storage.store import EventStore

PLAIN = textwrap.dedent(
    """
    def slow_squares(n):
        s = 0
        for v in range(n):
            s += v * v
        return s
    for _ in range(20):
        slow_squares(40000)
    """
)


def test_the_cli_names_the_hot_function_of_a_plain_python_script(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text(PLAIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-m", "everyo", "profile", "--sample", "1", str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "slow_squares" in text and "plain.py:5" in text  # the hot line: s += v * v
    assert "no stack samples fell inside the recorded events" not in text
    assert "<frozen runpy>" not in text  # the script runner is folded
    assert "no events recorded; where the time went" in text and "call tree" in text


def _norms(a):
    return [np.linalg.norm(a[i : i + 50]) for i in range(0, len(a), 50)]


def _plain_numpy(seconds: float) -> None:
    a = np.random.default_rng(0).random((4000, 50))
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        _norms(a)


def test_profile_over_plain_numpy_code_summarises_its_samples(registry):
    with ep.profile(sample=1, registry=registry) as p:
        _plain_numpy(0.2)
    table = p.summary()
    assert len(table) == 0 and p.run.num_events == 0
    hot = table.sampled
    assert hot is not None and hot.scope == "run" and hot.event == RUN_LABEL
    functions = {r["function"] for r in hot.lines}
    assert "_norms" in functions or "_norms.<locals>.<listcomp>" in functions
    text = str(table)
    assert "(no events recorded)" in text and "where the time went" in text
    assert "test_sampled_outside.py:" in text and "%" in text
    assert "<p>(no events recorded)</p><pre>" in table._repr_html_()


def test_a_run_with_events_shows_the_time_outside_them(registry):
    with ep.profile(sample=1, registry=registry) as p:
        _plain_numpy(0.15)
        with ep.record_function("tiny"):
            pass
    hot = ep.hot_lines(p.run, None, outside=True)
    assert hot.scope == "outside" and hot.event == OUTSIDE_LABEL and hot.samples > 0
    assert "the time outside every event" in str(p.summary())
    with pytest.raises(EveryOProfilerError, match="event=None"):
        ep.hot_lines(p.run, "tiny", outside=True)


def _planted_run(samples: list[tuple[int, int]], events=()) -> Run:
    """A finished run on a fake clock: ``events`` as ``(start, dur)`` on thread 7 (depth 0),
    ``samples`` as ``(t_ns, frame index)`` of that thread, each standing for 10 ns."""
    store = EventStore.from_columns(
        {
            "start_ns": np.array([e[0] for e in events], np.int64),
            "dur_ns": np.array([e[1] for e in events], np.int64),
            "key": np.zeros(len(events), np.int32),
            "thread": np.zeros(len(events), np.int16),
            "depth": np.zeros(len(events), np.int16),
        },
        [("user", "work", "")],
        threads=[(7, "main")],
    )
    run = Run(store, label="planted", options={"sample_mode": "wall", "sample_ms": 1.0})
    run.finish(wall_ns=1000)
    s = SampleStore()
    root = s.stack_id(-1, s.frame_id("m", "/x/app.py", 1, "<module>"))
    stacks = [s.stack_id(root, s.frame_id(i, "/x/app.py", 10 + i, f"fn{i}")) for i in range(3)]
    s.append(
        {
            "t_ns": [t for t, _ in samples],
            "tid": [7] * len(samples),
            "stack": [stacks[f] for _, f in samples],
            "wall_ns": [10] * len(samples),
            "cpu_ns": [10] * len(samples),
        }
    )
    run.samples = s
    return run


def test_samples_outside_every_event_are_attributed_to_the_time_outside():
    # fn0 inside the event [100, 400); fn1 and fn2 outside it, fn1 three times as often
    inside = [(t, 0) for t in range(110, 400, 10)]
    outside = [(t, 1) for t in range(500, 800, 10)] + [(t, 2) for t in range(810, 910, 10)]
    run = _planted_run(inside + outside + [(-50, 2), (2000, 2)], events=[(100, 300)])
    hot = ep.hot_lines(run, None, outside=True)
    assert hot.samples == len(outside)  # (before the start and after the end: not the run's)
    assert hot.event_ns == 1000 - 300
    shares = {r["function"]: r["self_share"] for r in hot.lines}
    assert shares == {"fn1": 0.75, "fn2": 0.25, "<module>": 0.0}
    # the tree starts at the script's top level
    assert [c["function"] for c in hot.tree["children"]] == ["<module>"]
    assert outside_events(run) is not None
    whole = ep.hot_lines(run, None)
    assert whole.scope == "run" and whole.samples == len(inside) + len(outside)


def test_a_run_whose_events_hold_nearly_all_samples_shows_no_outside_section():
    run = _planted_run([(t, 0) for t in range(110, 900, 10)] + [(950, 1)], events=[(100, 850)])
    assert outside_events(run) is None
    assert summarize(run).sampled is None


def test_covered_ns_is_the_union_of_the_outermost_spans():
    class Batch:
        depth = np.array([0, 1, 0, 0])
        start_ns = np.array([0, 10, 50, 80])
        dur_ns = np.array([40, 5, 40, 10])

        def __len__(self):
            return 4

    assert covered_ns(Batch()) == 40 + (90 - 50)


def test_a_sampled_run_without_events_round_trips_through_both_exports(registry, tmp_path):
    with ep.profile(sample=1, registry=registry) as p:
        _plain_numpy(0.15)
    raw = p.export_json(tmp_path / "run.json", format="raw")
    loaded = ep.load(raw)
    assert loaded.num_events == 0 and len(loaded.samples) == len(p.run.samples)
    text = str(summarize(loaded))
    assert "where the time went" in text and "_norms" in text
    trace = json.loads(p.export_chrome_trace(tmp_path / "trace.json").read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names = {e["name"] for e in events if e.get("cat") == "everyo.sample"}
    assert any(n.startswith("_norms") for n in names)


def test_library_frames_under_folded_frames_keep_the_innermost_folded_one():
    import everyo

    ours = os.path.dirname(everyo.__file__)
    lib = os.path.dirname(np.__file__)
    frames = [
        ("/home/me/train.py", 3, "<module>"),
        (os.path.join(ours, "core", "autograd.py"), 10, "backward"),
        (os.path.join(ours, "core", "ops", "nn_ops.py"), 268, "_linear.<locals>.backward"),
        (os.path.join(lib, "_core", "_methods.py"), 47, "_sum"),
        ("<frozen runpy>", 88, "_run_code"),
        (os.path.join(ours, "cli", "profile.py"), 180, "_run_script"),
        (contextlib.__file__, 141, "__exit__"),
    ]
    folding = Folding(frames, "everyo")
    assert folding.visible([0, 1, 2, 3]) == [0, 2, 3]  # the op that spent NumPy's time
    assert folding.visible([0, 1, 2]) == [0]  # inside everyo only: the user's line
    assert folding.visible([4, 0, 3]) == [0, 3]  # a user's call of NumPy: as it is
    assert folding.visible([4, 5, 6]) == [6]  # the command line is no operation: not kept
    assert Folding(frames, None).visible([4, 0, 1, 2, 3]) == [4, 0, 1, 2, 3]
    assert Folding(frames, "libraries").visible([4, 0, 1, 2, 3]) == [0]


def test_a_sample_spent_wholly_inside_everyo_does_not_break_the_tree():
    # CI: `everyo profile --sample 1 script.py` raised IndexError when the first distinct
    # stack was one whose every frame folds away (a sample taken in everyo's own CLI code)
    import everyo

    ours = os.path.dirname(everyo.__file__)
    samples = SampleStore()
    cli = samples.frame_id(1, os.path.join(ours, "cli", "profile.py"), 180, "_run_script")
    top = samples.frame_id(2, "/home/me/plain.py", 7, "<module>")
    hot = samples.frame_id(3, "/home/me/plain.py", 4, "slow_squares")
    only_ours = samples.stack_id(-1, cli)
    user = samples.stack_id(samples.stack_id(-1, top), hot)
    for ids in ([only_ours, user], [user, only_ours], [only_ours]):
        tree, lines = summarize_stacks(
            samples, np.array(ids), np.array([1, 9][: len(ids)]), from_module=True
        )
        assert tree is not None
        if user in ids:
            assert any(line["function"] == "slow_squares" for line in lines)


def test_a_framework_installed_in_site_packages_folds_like_everyo(monkeypatch):
    import sysconfig

    from everyo.profiler.sampling import sampled_lines

    torch_dir = os.path.join(sysconfig.get_paths()["purelib"], "torch")
    monkeypatch.setattr(
        sampled_lines, "_package_dir", lambda n: torch_dir if n == "torch" else None
    )
    sampled_lines._roots.cache_clear()
    try:
        frames = [
            ("/home/me/train.py", 3, "<module>"),
            (os.path.join(torch_dir, "nn", "modules", "module.py"), 1, "_call_impl"),
        ]
        assert Folding(frames, "everyo").visible([0, 1]) == [0]
        assert Folding(frames, None).visible([0, 1]) == [0, 1]
    finally:
        sampled_lines._roots.cache_clear()


def test_a_namer_names_a_file_and_a_failing_one_is_skipped(monkeypatch):
    from everyo.profiler.sampling import places

    monkeypatch.setattr(places, "_FILE_NAMERS", [])

    def broken(file, line):
        raise RuntimeError("no shell")

    add_file_namer(broken)
    add_file_namer(lambda f, ln: f"Cell In[7], line {ln}" if f.endswith("/1778.py") else None)
    assert place("/tmp/ipykernel_1/1778.py", 11) == "Cell In[7], line 11"
    assert place("/home/me/train.py", 3) == "train.py:3"
    assert place("/home/me/train.py", None) == "train.py"


def test_the_words_are_plain():
    assert plural(1, "call") == "1 call" and plural(2, "sample") == "2 samples"

    class Hot:
        samples, effective_samples = 311, 24.2

    text = uneven_text(Hot())
    assert "24 evenly spaced samples" in text and "long waits" in text
    assert "equal ones" not in text
    Hot.effective_samples = 300.0
    assert uneven_text(Hot()) == ""
