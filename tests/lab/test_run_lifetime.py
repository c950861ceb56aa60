"""What keeps a run alive: the memory budget bounds the runs a notebook session holds, whatever
dashboards show them (issue 36, fault 6). Evicted runs must really be freed: each test holds a
weak reference to them and checks, after a garbage collection, that nothing else does."""

from __future__ import annotations

import gc
import sys
import warnings
import weakref

import pytest

pytest.importorskip("IPython")
pytest.importorskip("anywidget")

from IPython.utils.capture import capture_output  # noqa: E402

from everyo.errors import EveryOProfilerWarning  # noqa: E402
from everyo.profiler import Profiler, record_function, runs  # noqa: E402
from everyo.profiler.storage.store import EventStore  # noqa: E402
from everyo_lab.widgets.dashboard import Dashboard, dashboard  # noqa: E402

CELL = """
from everyo.profiler import record_function
for _ in range(3000):
    with record_function("step"):
        with record_function("inner"):
            pass
"""


@pytest.fixture(autouse=True)
def _fresh_runs():
    # dashboards other test modules left open (a run picker follows every new run) would hold
    # this module's runs: these tests count what *their* widgets hold
    import ipywidgets

    ipywidgets.Widget.close_all()
    budget = runs.budget_bytes
    runs.clear()
    yield
    runs.clear()
    runs.budget_bytes = budget


def _profiled_run(n=2000, label=None):
    with Profiler(label=label) as p:
        for _ in range(n):
            with record_function("step"):
                pass
    return p.run


def _alive(refs) -> list:
    gc.collect()
    return [r() for r in refs if r() is not None]


def test_profiled_cells_with_dashboards_hold_only_the_runs_the_budget_keeps(shell):
    runs.budget_bytes = 400_000  # about two of these cells' runs
    picker = dashboard()  # a run picker open the whole session, as in a notebook
    refs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EveryOProfilerWarning)  # the eviction notices
        for i in range(6):
            with capture_output():
                result = shell.run_cell(f"%%everyo_profile --no-live --label cell{i}\n{CELL}")
            assert result.success
            refs.append(weakref.ref(runs.latest))
    alive = _alive(refs)
    assert 1 <= len(runs) < 6
    # every run the registry evicted is gone from the process: no dashboard keeps one
    assert sorted(r.label for r in alive) == sorted(r.label for r in runs)
    assert sum(r.nbytes for r in alive) <= runs.budget_bytes + max(r.nbytes for r in alive)
    assert picker.selected in {r.id for r in runs}
    picker.close()


def test_a_closed_dashboard_lets_its_run_go():
    run = _profiled_run()
    runs.remove(run)  # only the dashboard and this test hold it
    board = Dashboard(run)
    ref = weakref.ref(run)
    board.close()
    del run
    assert _alive([ref]) == []


def test_a_dashboard_lets_an_evicted_run_go_and_says_so():
    runs.budget_bytes = 10**9
    first = _profiled_run(label="first")
    board = Dashboard(first)
    ref = weakref.ref(first)
    del first
    runs.budget_bytes = 1
    with pytest.warns(EveryOProfilerWarning, match="evicted run"):
        _profiled_run(label="second")  # the newest run is kept, the older one evicted
    assert _alive([ref]) == []
    assert "evicted" in board.static_bundle()["text/plain"]
    assert "evicted" in board.export_status
    board.close()


def test_a_picked_run_that_was_evicted_leaves_the_picker_on_a_held_run():
    runs.budget_bytes = 10**9
    old, new = _profiled_run(label="old"), _profiled_run(label="new")
    picker = dashboard()
    runs.remove(old)  # evicted after the browser got the list
    picker.selected = old.id  # the user picks it from the stale list
    assert picker.selected in {r.id for r in runs}
    assert picker.run is new
    assert old.id not in {e["id"] for e in picker.runs}
    picker.close()


def test_a_run_picker_lets_a_removed_run_go_and_moves_to_a_held_one():
    runs.budget_bytes = 10**9
    old, new = _profiled_run(label="old"), _profiled_run(label="new")
    picker = dashboard()
    assert picker.run is new
    ref = weakref.ref(new)
    runs.remove(new)  # the run the picker shows
    del new
    assert _alive([ref]) == []
    assert picker.run is old and picker.selected == old.id
    assert [e["id"] for e in picker.runs] == [old.id]
    picker.close()


def test_dashboards_let_their_runs_go_when_the_registry_is_cleared():
    run = _profiled_run(label="cleared")
    board, picker = Dashboard(run), dashboard()
    ref = weakref.ref(run)
    del run
    runs.clear()
    assert _alive([ref]) == []
    assert "removed" in board.static_bundle()["text/plain"]
    assert "removed" in board.export_status
    assert picker.run is None and picker.runs == [] and picker.selected == ""
    board.close()
    picker.close()


def test_run_in_runs_tells_whether_that_run_is_held():
    run = _profiled_run(label="held")
    assert run in runs
    assert run.id in runs and "held" in runs
    runs.remove(run)
    assert run not in runs
    assert "nothing" not in runs and 10 not in runs


def test_interned_names_and_shapes_count_toward_the_budget():
    store = EventStore(optional=["shape"])
    names = [f"region number {i} with a long descriptive name" for i in range(5000)]
    for name in names:
        store.intern_key("user", name, "")
    shapes = [f"[({i}, 64)] -> ({i}, 64)" for i in range(5000)]
    for text in shapes:
        store.intern_shape(text)
    held = sum(sys.getsizeof(t) for t in names + shapes)
    assert store.nbytes >= held  # no rows yet: all of it is the tables


SESSION = r"""
import gc, json, os, sys, warnings
warnings.simplefilter("ignore")
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from everyo.profiler import runs

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

sh = InteractiveShell.instance()
sh.extension_manager.load_extension("everyo_lab")
runs.budget_bytes = int(sys.argv[1])
cell = "%%everyo_profile --no-live --label c{}\n" + sys.argv[2]
with capture_output():
    sh.run_cell(cell.format("warm-up"))
gc.collect()
before = rss()
for i in range(int(sys.argv[3])):
    with capture_output():
        sh.run_cell(cell.format(i))
gc.collect()
print(json.dumps({"growth": rss() - before, "held": runs.nbytes, "run": runs.latest.nbytes}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_the_budget_bounds_the_process_growth_over_a_session_of_profiled_cells(tmp_path):
    """The process's resident size, not only the registry's count: freed runs must go back
    to the OS, or a long session grows by every run it ever recorded."""
    import json
    import subprocess

    body = (
        "from everyo.profiler import record_function\n"
        "for _ in range(60_000):\n"
        "    with record_function('step'):\n"
        "        with record_function('inner'):\n"
        "            pass\n"
    )
    script = tmp_path / "session.py"
    script.write_text(SESSION)
    budget, cells = 8_000_000, 24
    out = subprocess.run(
        [sys.executable, str(script), str(budget), body, str(cells)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["held"] <= budget
    # what the kept runs hold, plus room for the last run and the interpreter's own caches;
    # every run of the session held would be cells x run bytes (about 3.5 times this bound)
    assert got["growth"] < budget + 2 * got["run"] + 4_000_000, got


@pytest.mark.parametrize(
    "content",
    [
        {"x0": 0, "x1": 1, "width": float("inf")},
        {"x0": 10**400, "x1": 10**401, "width": 800},
        {"x0": float("-inf"), "x1": float("nan"), "width": 800},
        {"x0": -1e300, "x1": 1e300, "width": 10**30},
    ],
    ids=["width=Infinity", "x0=10**400", "not finite", "huge"],
)
def test_a_zoom_message_with_absurd_numbers_is_ignored_or_answered(content):
    run = _profiled_run(n=50)
    board = Dashboard(run)
    sent = []
    board.send = lambda msg, buffers=None: sent.append(msg)
    board._on_message(board, {"type": "detail", **content}, [])  # must not raise
    board.close()
